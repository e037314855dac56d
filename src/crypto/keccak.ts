import { keccak_256 } from "@noble/hashes/sha3.js";
import { createKeccak, type IHasher } from "hash-wasm";
import { bytesToHex } from "./hex.ts";

const utf8 = new TextEncoder();

// Keccak runs in hash-wasm's WebAssembly build: 2–6× @noble/hashes for the 32–532-byte inputs of
// trie nodes, keys and transactions, and faster than the native `keccak` package through its
// N-API state, with no install script (measured 2026-11-23, docs/decisions/008-state-commitment.md).
// WebAssembly compiles asynchronously, so until `keccakReady` resolves (a few milliseconds after
// start) the audited @noble/hashes computes the same function; results never depend on which one ran.
let wasm: IHasher | undefined;

/** Resolves once keccak256 runs in WebAssembly (it never rejects: on failure noble stays in use). */
export const keccakReady: Promise<void> = createKeccak(256).then(
  (hasher) => {
    wasm = hasher;
  },
  () => undefined,
);

/** Which implementation computes keccak256 now. */
export const keccakBackend = (): "wasm" | "noble" => (wasm === undefined ? "noble" : "wasm");

export function keccak256(data: Uint8Array): Uint8Array {
  // init/update/digest run synchronously on the one shared hasher: no call can interleave.
  return wasm === undefined ? keccak_256(data) : wasm.init().update(data).digest("binary");
}

/**
 * UTF-8 bytes of `text`. Most texts are short ASCII (a state leaf's canonical JSON is usually a
 * number), which a loop over char codes copies in a tenth of TextEncoder's time for such sizes
 * (about 40 ns against 410 for ten characters); anything else goes through TextEncoder.
 */
export function utf8Bytes(text: string): Uint8Array {
  const length = text.length;
  if (length > 64) return utf8.encode(text);
  const bytes = new Uint8Array(length);
  for (let i = 0; i < length; i++) {
    const code = text.charCodeAt(i);
    if (code > 0x7f) return utf8.encode(text);
    bytes[i] = code;
  }
  return bytes;
}

/** Where keccakText encodes: a text is hashed right after, so one buffer serves every call. */
const textScratch = new Uint8Array(4096);

/**
 * keccak256(utf8(text)) without allocating the bytes (trie keys, canonical bodies): encodeInto a
 * reused buffer is 0.5 µs less per state path than `encode`, and no garbage.
 */
export function keccakText(text: string): Uint8Array {
  // UTF-8 takes at most 3 bytes per UTF-16 code unit: a longer text might not fit.
  if (text.length * 3 > textScratch.length) return keccak256(utf8.encode(text));
  const { written } = utf8.encodeInto(text, textScratch);
  return keccak256(textScratch.subarray(0, written));
}

/** `0x` + keccak256(utf8(text)). */
export function keccakHex(text: string): string {
  return bytesToHex(keccakText(text));
}
