import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { assertBlock } from "../helpers/shapes.ts";
import { startTestNode, type TestNode } from "../helpers/testNode.ts";
import {
  accountAt,
  assertInvalidParams,
  assertNoParamsForms,
  BAD_PARAM_CONTAINERS,
  commitBatch,
  transfer,
  userWrite,
} from "./support.ts";

describe("chain_getRecentBlock", () => {
  let t: TestNode;
  before(async () => {
    t = await startTestNode();
  });
  after(() => t?.stop()); // runs even when before() or a test fails

  it('is the genesis block on a fresh chain: number 0, parent_hash "", no transactions', async () => {
    const [absent, empty] = await assertNoParamsForms(t, "chain_getRecentBlock");
    assertBlock(absent, true, "recent block");
    assert.equal(absent.number, 0);
    assert.equal(absent.parent_hash, "");
    assert.deepEqual(absent.transactions, []);
    assert.deepEqual(empty, absent);
  });

  it("is the head block, with full transaction objects in block order", async () => {
    const [alice, bob] = [accountAt(t, 1), accountAt(t, 2)];
    const committed = await commitBatch(t, [transfer(alice, bob.address, 7), userWrite(bob, { note: "hi" })]);
    const block = await t.result("chain_getRecentBlock");
    assertBlock(block, true, "recent block");
    assert.equal(block.number, await t.result("chain_getRecentBlockNumber"));
    assert.equal(block.number, committed[0]?.block_number);
    assert.equal(block.hash, committed[0]?.block_hash);
    assert.deepEqual(
      block.transactions.map((tx) => tx.hash),
      committed.map((tx) => tx.hash),
    );
    assert.deepEqual(block.transactions[1]?.operation.value, { note: "hi" });
    assert.deepEqual(block.validators, [accountAt(t, 0).address]);
    assert.equal(block.proposer, accountAt(t, 0).address);
  });

  it("equals chain_getBlockByNumber of the head with getFullTransactions true", async () => {
    const block = await t.result("chain_getRecentBlock");
    assertBlock(block, true);
    assert.deepEqual(
      await t.result("chain_getBlockByNumber", { number: block.number, getFullTransactions: true }),
      block,
    );
  });

  it("refuses params other than an empty object with -32602", async () => {
    await assertInvalidParams(t, "chain_getRecentBlock", [
      ...BAD_PARAM_CONTAINERS,
      ["an unknown member", { getFullTransactions: false }],
    ]);
  });
});
