import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { ConfirmedTxJson } from "../helpers/shapes.ts";
import type { TestNode } from "../helpers/testNode.ts";
import { assertInvalidParams, BAD_NUMBERS, startSampleChain, invalidParamCases } from "./support.ts";

const METHOD = "chain_getBlockTransactionCountByNumber";

describe(METHOD, () => {
  let t: TestNode;
  let sample: ConfirmedTxJson[][];
  before(async () => ({ t, sample } = await startSampleChain()));
  after(() => t?.stop()); // runs even when before() or a test fails

  it("counts the transactions of each block as a Number", async () => {
    const expected = [0, sample[0]?.length, sample[1]?.length];
    assert.deepEqual(expected, [0, 1, 3]);
    for (const [number, count] of expected.entries()) {
      assert.equal(await t.result(METHOD, { number }), count, `block ${number}`);
    }
  });

  it("agrees with the length of the block's transactions", async () => {
    for (let number = 0; number <= 2; number++) {
      const block = await t.result<{ transactions: unknown[] }>("chain_getBlockByNumber", { number });
      assert.equal(await t.result(METHOD, { number }), block.transactions.length, `block ${number}`);
    }
  });

  it("returns null for a number beyond the head", async () => {
    assert.equal(await t.result(METHOD, { number: 3 }), null);
    assert.equal(await t.result(METHOD, { number: Number.MAX_SAFE_INTEGER }), null);
  });

  it("refuses invalid params with -32602 invalid_params", async () => {
    await assertInvalidParams(t, METHOD, invalidParamCases({ number: 0 }, { number: BAD_NUMBERS }));
  });
});
