import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { parseHexBytes } from "../../src/client/bytes.ts";
import { ProofVerificationError } from "../../src/client/index.ts";
import { decodeRlp, isRlpList, type RlpItem } from "../../src/client/rlp.ts";
import { bytesToHex } from "../../src/crypto/index.ts";

/** Plain nested arrays, for comparing decoded items. */
type Plain = string | Plain[];

function plain(item: RlpItem): Plain {
  return isRlpList(item) ? item.items.map(plain) : bytesToHex(item);
}

const hex = (text: string): Uint8Array => parseHexBytes(text) as Uint8Array;

/** A test-only encoder (the client needs none): the canonical RLP of nested byte strings. */
function encode(item: Uint8Array | readonly Uint8Array[] | readonly unknown[]): Uint8Array {
  if (item instanceof Uint8Array) {
    if (item.length === 1 && (item[0] as number) < 0x80) return item;
    return Uint8Array.from([...lengthPrefix(0x80, item.length), ...item]);
  }
  const payload = item.flatMap((inner) => [...encode(inner as Uint8Array)]);
  return Uint8Array.from([...lengthPrefix(0xc0, payload.length), ...payload]);
}

function lengthPrefix(base: number, length: number): number[] {
  if (length < 56) return [base + length];
  const bytes: number[] = [];
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest % 256);
  return [base + 55 + bytes.length, ...bytes];
}

function rejects(input: string, why: RegExp): void {
  assert.throws(
    () => decodeRlp(hex(input)),
    (error: unknown) =>
      error instanceof ProofVerificationError && error.reason === "malformed_node" && why.test(error.message),
    `${input} is refused (${why})`,
  );
}

describe("RLP decoder (strict)", () => {
  it("decodes the yellow paper's and the Ethereum wiki's examples", () => {
    assert.equal(plain(decodeRlp(hex("0x83646f67"))), "0x646f67"); // "dog"
    assert.deepEqual(plain(decodeRlp(hex("0xc88363617483646f67"))), ["0x636174", "0x646f67"]); // ["cat","dog"]
    assert.equal(plain(decodeRlp(hex("0x80"))), "0x"); // the empty string
    assert.deepEqual(plain(decodeRlp(hex("0xc0"))), []); // the empty list
    assert.equal(plain(decodeRlp(hex("0x0f"))), "0x0f");
    assert.equal(plain(decodeRlp(hex("0x820400"))), "0x0400");
    // The set-theoretic representation of three: [ [], [[]], [ [], [[]] ] ]
    assert.deepEqual(plain(decodeRlp(hex("0xc7c0c1c0c3c0c1c0"))), [[], [[]], [[], [[]]]]);
    const lorem = "Lorem ipsum dolor sit amet, consectetur adipisicing elit";
    const encoded = Uint8Array.from([0xb8, 0x38, ...new TextEncoder().encode(lorem)]);
    assert.equal(new TextDecoder().decode(decodeRlp(encoded) as Uint8Array), lorem);
  });

  it("gives a list its own encoding, as a view of the input", () => {
    const input = hex("0xc7c0c1c0c3c0c1c0");
    const outer = decodeRlp(input);
    assert.ok(isRlpList(outer));
    assert.equal(bytesToHex(outer.encoded), "0xc7c0c1c0c3c0c1c0");
    const third = outer.items[2] as RlpItem;
    assert.ok(isRlpList(third));
    assert.equal(bytesToHex(third.encoded), "0xc3c0c1c0");
  });

  it("decodes what a canonical encoder writes, whatever the nesting and lengths", () => {
    const bytes = fc.uint8Array({ maxLength: 300 });
    const { item } = fc.letrec<{ item: Uint8Array | unknown[] }>((tie) => ({
      item: fc.oneof(
        { depthSize: "small", withCrossShrink: true },
        bytes,
        fc.array(tie("item"), { maxLength: 5 }),
      ),
    }));
    const toPlain = (value: Uint8Array | unknown[]): Plain =>
      value instanceof Uint8Array ? bytesToHex(value) : value.map((inner) => toPlain(inner as Uint8Array));
    fc.assert(
      fc.property(item, (value) => {
        let lists = 0;
        const measure = (v: unknown, d: number): void => {
          if (!Array.isArray(v)) return;
          lists = Math.max(lists, d + 1);
          for (const inner of v) measure(inner, d + 1);
        };
        measure(value, 0);
        fc.pre(lists <= 8);
        assert.deepEqual(plain(decodeRlp(encode(value))), toPlain(value));
      }),
      { numRuns: 300 },
    );
  });

  it("refuses every non-canonical or broken encoding", () => {
    rejects("0x", /missing its prefix/);
    rejects("0x8100", /single byte below 0x80/); // 0x00 must be written as itself
    rejects("0x817f", /single byte below 0x80/);
    rejects("0xb80161", /long form for a length of 1/);
    rejects(`0xb837${"61".repeat(55)}`, /long form for a length of 55/);
    rejects(`0xb90038${"61".repeat(56)}`, /leading zero/);
    rejects("0xf801c0", /long form for a length of 1/);
    rejects("0xb800", /leading zero/);
    rejects("0xbc01000000", /length of 5 bytes/); // absurd lengths are refused before any arithmetic
    rejects("0x83646f", /runs past the end/); // truncated
    rejects("0xb9", /length runs past the end/);
    rejects("0x8000", /1 bytes after the item/); // trailing byte
    rejects("0xc0c0", /after the item/);
    rejects("0xc283646f67", /runs past the end/); // an item longer than its list
    let nested: unknown[] = [];
    for (let i = 0; i < 7; i++) nested = [nested];
    assert.ok(isRlpList(decodeRlp(encode(nested))), "8 lists within one another decode");
    rejects(bytesToHex(encode([nested])), /more than 8 lists deep/);
  });

  it("accepts the longest length it allows (3 bytes) as long as the bytes are there", () => {
    const payload = new Uint8Array(70_000).fill(0x61);
    const decoded = decodeRlp(encode(payload));
    assert.ok(!isRlpList(decoded) && decoded.length === 70_000);
  });
});
