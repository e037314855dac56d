import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { keccak_256 } from "@noble/hashes/sha3.js";
import fc from "fast-check";
import {
  bytesToHex,
  keccak256,
  keccakBackend,
  keccakHex,
  keccakReady,
  keccakText,
  utf8Bytes,
} from "../../../src/crypto/index.ts";

describe("keccak256", () => {
  it("runs in WebAssembly once ready, and matches the known vectors", async () => {
    await keccakReady;
    assert.equal(keccakBackend(), "wasm");
    assert.equal(keccakHex(""), "0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470");
    assert.equal(keccakHex("abc"), "0x4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45");
  });

  it("equals @noble/hashes on any input, including views into larger buffers (property)", async () => {
    await keccakReady;
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 600 }), fc.nat(16), fc.nat(16), (bytes, head, tail) => {
        const view = bytes.subarray(Math.min(head, bytes.length), Math.max(head, bytes.length - tail));
        assert.equal(bytesToHex(keccak256(view)), bytesToHex(keccak_256(view)));
      }),
      { numRuns: 500 },
    );
  });

  it("utf8Bytes equals TextEncoder for any text: ASCII, non-ASCII, lone surrogates, either side of its fast path's 64 (property)", () => {
    const encoder = new TextEncoder();
    const same = (text: string) => assert.deepEqual(utf8Bytes(text), encoder.encode(text), text.slice(0, 40));
    fc.assert(fc.property(fc.string({ unit: "binary", maxLength: 200 }), same), { numRuns: 500 });
    fc.assert(fc.property(fc.string({ unit: "binary-ascii", maxLength: 100 }), same), { numRuns: 500 });
    for (const text of [
      "",
      "0",
      "123456",
      "\u007f",
      "\u0080",
      "a".repeat(64),
      "a".repeat(65),
      `${"a".repeat(63)}é`,
      "\ud800",
    ]) {
      same(text);
    }
  });

  it("keccakText equals keccak256 of the UTF-8 bytes for any text, short or over its buffer (property)", async () => {
    await keccakReady;
    const same = (text: string) =>
      assert.equal(bytesToHex(keccakText(text)), bytesToHex(keccak_256(utf8Bytes(text))), text.slice(0, 40));
    fc.assert(fc.property(fc.string({ unit: "binary", maxLength: 2_000 }), same), { numRuns: 300 });
    for (const text of [
      "",
      "/account/0xAb/balance",
      "é".repeat(1_365),
      "€".repeat(1_366),
      "😀".repeat(700),
    ]) {
      same(text);
    }
    // A long text after a short one: nothing of the earlier text is left in the shared buffer.
    same("x".repeat(3_000));
    same("ab");
  });

  it("hashes inputs larger than one WebAssembly chunk", async () => {
    await keccakReady;
    const big = new Uint8Array(300_000).map((_, i) => i * 7);
    assert.equal(bytesToHex(keccak256(big)), bytesToHex(keccak_256(big)));
  });

  it("returns a fresh array each call", async () => {
    await keccakReady;
    const a = keccak256(Uint8Array.of(1));
    const b = keccak256(Uint8Array.of(2));
    assert.notEqual(bytesToHex(a), bytesToHex(b), "the first digest is not overwritten by the second");
  });
});
