import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { assertConfirmedTx, type ConfirmedTxJson } from "../helpers/shapes.ts";
import type { TestNode } from "../helpers/testNode.ts";
import {
  assertInvalidParams,
  BAD_HASHES,
  BAD_NUMBERS,
  startSampleChain,
  invalidParamCases,
  UNKNOWN_HASH,
} from "./support.ts";

const METHOD = "chain_getTransactionByBlockHashAndIndex";

describe(METHOD, () => {
  let t: TestNode;
  let sample: ConfirmedTxJson[][];
  let hashes: string[];
  before(async () => ({ t, sample, hashes } = await startSampleChain()));
  after(() => t?.stop()); // runs even when before() or a test fails

  it("returns the transaction with block_hash, block_number, index and result", async () => {
    for (const [b, txs] of sample.entries()) {
      const number = b + 1;
      for (const [index, expected] of txs.entries()) {
        const tx = await t.result(METHOD, { block_hash: hashes[number], index });
        assertConfirmedTx(tx, `block ${number} index ${index}`);
        assert.deepEqual(tx, expected, `block ${number} index ${index} equals chain_getTransactionByHash's`);
        assert.equal(tx.block_hash, hashes[number]);
        assert.equal(tx.block_number, number);
        assert.equal(tx.index, index);
        assert.deepEqual(tx.result, { code: 0 });
      }
    }
  });

  it("agrees with chain_getTransactionByBlockNumberAndIndex and accepts an upper-case hash", async () => {
    const upper = `0x${(hashes[2] as string).slice(2).toUpperCase()}`;
    for (let index = 0; index < 3; index++) {
      const byNumber = await t.result("chain_getTransactionByBlockNumberAndIndex", {
        block_number: 2,
        index,
      });
      assert.deepEqual(await t.result(METHOD, { block_hash: upper, index }), byNumber, `index ${index}`);
    }
  });

  it("returns null for an index out of range and for the genesis block", async () => {
    assert.equal(await t.result(METHOD, { block_hash: hashes[1], index: 1 }), null);
    assert.equal(await t.result(METHOD, { block_hash: hashes[2], index: 3 }), null);
    assert.equal(await t.result(METHOD, { block_hash: hashes[0], index: 0 }), null);
  });

  it("returns null for an unknown block hash, and for a transaction's hash", async () => {
    assert.equal(await t.result(METHOD, { block_hash: UNKNOWN_HASH, index: 0 }), null);
    assert.equal(await t.result(METHOD, { block_hash: sample[0]?.[0]?.hash, index: 0 }), null);
  });

  it("refuses invalid params with -32602 invalid_params", async () => {
    await assertInvalidParams(
      t,
      METHOD,
      invalidParamCases(
        { block_hash: UNKNOWN_HASH, index: 0 },
        { block_hash: BAD_HASHES, index: BAD_NUMBERS },
      ),
    );
  });
});
