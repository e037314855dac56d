import { bytesToHex, isHex } from "./hex.ts";
import { keccak256, utf8Bytes } from "./keccak.ts";
import { publicKeyFromPrivate } from "./secp256k1.ts";

/** Any-case 20-byte hex address with `0x`. */
export function isAddress(value: string): boolean {
  return isHex(value, 20);
}

/** EIP-55 mixed-case checksum form. The input must satisfy `isAddress`. */
export function toChecksumAddress(address: string): string {
  const lower = address.slice(2).toLowerCase();
  const hash = keccak256(utf8Bytes(lower));
  // Joined once rather than appended char by char: `+=` builds a rope of 40 string pieces
  // (about 1 KiB per address, kept for as long as the address is).
  const out = ["0x"];
  for (let i = 0; i < lower.length; i++) {
    const ch = lower[i] as string;
    const nibble = i & 1 ? (hash[i >> 1] as number) & 15 : (hash[i >> 1] as number) >> 4;
    out.push(nibble >= 8 ? ch.toUpperCase() : ch);
  }
  return out.join("");
}

/** Address of an uncompressed (65-byte) public key: last 20 bytes of keccak256(x ‖ y). */
export function publicKeyToAddress(publicKey: Uint8Array): string {
  const digest = keccak256(publicKey.subarray(1));
  return toChecksumAddress(bytesToHex(digest.subarray(12)));
}

export function privateKeyToAddress(privateKey: Uint8Array): string {
  return publicKeyToAddress(publicKeyFromPrivate(privateKey));
}
