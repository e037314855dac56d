import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { assertBlock, assertConfirmedTx, type ConfirmedTxJson } from "../helpers/shapes.ts";
import type { TestNode } from "../helpers/testNode.ts";
import { assertInvalidParams, BAD_NUMBERS, startSampleChain, invalidParamCases } from "./support.ts";

const METHOD = "chain_getTransactionByBlockNumberAndIndex";

describe(METHOD, () => {
  let t: TestNode;
  let sample: ConfirmedTxJson[][];
  before(async () => ({ t, sample } = await startSampleChain()));
  after(() => t?.stop()); // runs even when before() or a test fails

  it("returns the transaction with block_hash, block_number, index and result", async () => {
    for (const [b, txs] of sample.entries()) {
      const number = b + 1;
      const block = await t.result("chain_getBlockByNumber", { number, getFullTransactions: true });
      assertBlock(block, true, `block ${number}`);
      for (const [index, expected] of txs.entries()) {
        const tx = await t.result(METHOD, { block_number: number, index });
        assertConfirmedTx(tx, `block ${number} index ${index}`);
        assert.deepEqual(tx, expected, `block ${number} index ${index} equals chain_getTransactionByHash's`);
        assert.equal(tx.block_number, number);
        assert.equal(tx.block_hash, block.hash);
        assert.equal(tx.index, index);
        assert.deepEqual(tx.result, { code: 0 }, `block ${number} index ${index} succeeded`);
        assert.equal(tx.hash, block.transactions[index]?.hash, `block ${number} index ${index} position`);
      }
    }
  });

  it("returns null for an index out of range", async () => {
    assert.equal(await t.result(METHOD, { block_number: 1, index: 1 }), null);
    assert.equal(await t.result(METHOD, { block_number: 2, index: 3 }), null);
    assert.equal(await t.result(METHOD, { block_number: 2, index: Number.MAX_SAFE_INTEGER }), null);
  });

  it("returns null for the genesis block, which has no transactions", async () => {
    assert.equal(await t.result(METHOD, { block_number: 0, index: 0 }), null);
  });

  it("returns null for a block beyond the head", async () => {
    assert.equal(await t.result(METHOD, { block_number: 3, index: 0 }), null);
    assert.equal(await t.result(METHOD, { block_number: 1e9, index: 0 }), null);
  });

  it("refuses invalid params with -32602 invalid_params", async () => {
    await assertInvalidParams(
      t,
      METHOD,
      invalidParamCases({ block_number: 1, index: 0 }, { block_number: BAD_NUMBERS, index: BAD_NUMBERS }),
    );
  });
});
