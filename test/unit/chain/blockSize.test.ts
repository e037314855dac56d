import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { blockSize, type Tx, txSize } from "../../../src/chain/index.ts";
import { canonicalJson } from "../../../src/crypto/index.ts";

/**
 * blockSize is summed from the transactions' sizes (each measured once per object) instead of
 * writing the whole list's canonical JSON: it must be that JSON's UTF-8 length, exactly, since
 * every node recomputes a block's `size` header field and a difference of one byte splits the chain.
 */
describe("blockSize", () => {
  // Transaction-shaped objects: any JSON members, including non-ASCII strings (multi-byte UTF-8).
  const txLike = fc.dictionary(fc.string({ unit: "grapheme" }), fc.jsonValue(), {
    maxKeys: 6,
  }) as unknown as fc.Arbitrary<Tx>;

  it("is the UTF-8 byte length of the list's canonical JSON", () => {
    fc.assert(
      fc.property(fc.array(txLike, { maxLength: 20 }), (txs) => {
        assert.equal(blockSize(txs), Buffer.byteLength(canonicalJson(txs), "utf8"));
      }),
      { numRuns: 500 },
    );
  });

  it("is 2 for no transactions, and the same when a transaction is measured again", () => {
    assert.equal(blockSize([]), Buffer.byteLength(canonicalJson([]), "utf8"));
    const tx = { hash: "0x01", memo: "héllo ✓" } as unknown as Tx;
    const first = txSize(tx);
    assert.equal(first, Buffer.byteLength(canonicalJson(tx), "utf8"));
    assert.equal(txSize(tx), first);
    assert.equal(blockSize([tx, tx]), 2 * first + 3);
  });
});
