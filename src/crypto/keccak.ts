import { keccak_256 } from "@noble/hashes/sha3.js";
import { bytesToHex } from "./hex.ts";

const utf8 = new TextEncoder();

export function keccak256(data: Uint8Array): Uint8Array {
  return keccak_256(data);
}

export function utf8Bytes(text: string): Uint8Array {
  return utf8.encode(text);
}

/** `0x` + keccak256(utf8(text)). */
export function keccakHex(text: string): string {
  return bytesToHex(keccak_256(utf8.encode(text)));
}
