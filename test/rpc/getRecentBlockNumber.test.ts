import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startTestNode, type TestNode } from "../helpers/testNode.ts";
import {
  accountAt,
  assertInvalidParams,
  assertNoParamsForms,
  BAD_PARAM_CONTAINERS,
  commitOne,
  transfer,
} from "./support.ts";

describe("chain_getRecentBlockNumber", () => {
  let t: TestNode;
  before(async () => {
    t = await startTestNode();
  });
  after(() => t?.stop()); // runs even when before() or a test fails

  it("is 0 on a fresh chain, a Number, the same with params absent or {}", async () => {
    const [absent, empty] = await assertNoParamsForms(t, "chain_getRecentBlockNumber");
    assert.equal(absent, 0);
    assert.equal(empty, 0);
  });

  it("is the number of the block that holds the latest committed transaction", async () => {
    const [sender, receiver] = [accountAt(t, 1), accountAt(t, 2)];
    for (let i = 1; i <= 2; i++) {
      const tx = await commitOne(t, transfer(sender, receiver.address, 10));
      assert.equal(tx.block_number, i, `transfer ${i} is in block ${i}`);
      assert.equal(await t.result("chain_getRecentBlockNumber"), i, `head after transfer ${i}`);
    }
  });

  it("names a block that exists, and no block after it exists", async () => {
    const head = await t.result<number>("chain_getRecentBlockNumber");
    const block = await t.result<{ number: number } | null>("chain_getBlockByNumber", { number: head });
    assert.equal(block?.number, head);
    assert.equal(await t.result("chain_getBlockByNumber", { number: head + 1 }), null);
  });

  it("refuses params other than an empty object with -32602", async () => {
    await assertInvalidParams(t, "chain_getRecentBlockNumber", [
      ...BAD_PARAM_CONTAINERS,
      ["an unknown member", { number: 1 }],
    ]);
  });
});
