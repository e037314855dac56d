import { bytesToHex, isHex } from "./hex.ts";
import { keccak256 } from "./keccak.ts";
import { publicKeyFromPrivate } from "./secp256k1.ts";

/** Any-case 20-byte hex address with `0x`. */
export function isAddress(value: string): boolean {
  return isHex(value, 20);
}

/** The lower-case ASCII of an address's 40 hex digits, hashed synchronously (never shared across calls). */
const lowered = new Uint8Array(40);

/**
 * EIP-55 mixed-case checksum form. The input must satisfy `isAddress`.
 * Works on char codes, without a TextEncoder call or per-character strings: a third of the time of
 * the string version, and it runs for every address a request, transaction or transfer names.
 */
export function toChecksumAddress(address: string): string {
  for (let i = 0; i < 40; i++) {
    const code = address.charCodeAt(i + 2);
    lowered[i] = code >= 0x41 && code <= 0x46 ? code + 0x20 : code; // A–F → a–f
  }
  const hash = keccak256(lowered);
  const codes = new Array<number>(42);
  codes[0] = 0x30; // "0"
  codes[1] = 0x78; // "x"
  for (let i = 0; i < 40; i++) {
    const code = lowered[i] as number;
    const byte = hash[i >> 1] as number;
    const nibble = i & 1 ? byte & 15 : byte >> 4;
    codes[i + 2] = nibble >= 8 && code >= 0x61 ? code - 0x20 : code; // letters whose nibble is ≥ 8 go upper case
  }
  return String.fromCharCode(...codes);
}

/** Address of an uncompressed (65-byte) public key: last 20 bytes of keccak256(x ‖ y). */
export function publicKeyToAddress(publicKey: Uint8Array): string {
  const digest = keccak256(publicKey.subarray(1));
  return toChecksumAddress(bytesToHex(digest.subarray(12)));
}

export function privateKeyToAddress(privateKey: Uint8Array): string {
  return publicKeyToAddress(publicKeyFromPrivate(privateKey));
}
