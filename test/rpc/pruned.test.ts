import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { METHOD_LIST } from "../../src/rpc/index.ts";
import { type JsonRpcReply, startTestNode, type TestNode } from "../helpers/testNode.ts";
import { accountAt, commitOne, transfer, waitForPruned } from "./support.ts";

/**
 * A node that keeps its last RETAIN blocks ([storage] retain_blocks): every method that takes a
 * block number answers -32005 `pruned` for an older block (never null, which would read as "no
 * such block"), with the lowest kept block; genesis and kept blocks answer as before.
 */

const RETAIN = 3;

/** Params that name block 1 for each method declared to answer `pruned` (its errors list). */
const PARAMS_FOR_BLOCK_1: Record<string, unknown> = {
  chain_getBlockByNumber: { number: 1 },
  chain_getBlocks: { from: 0, to: 5 },
  chain_getBlockHeaders: { from: 1, to: 1 },
  chain_getBlockTransactionCountByNumber: { number: 1 },
  chain_getProposerByNumber: { number: 1 },
  chain_getValidatorsByNumber: { number: 1 },
  chain_getTransactionByBlockNumberAndIndex: { block_number: 1, index: 0 },
  chain_getValue: { ref: "/account", block_number: 1 },
  chain_getProof: { ref: "/account", block_number: 1 },
  chain_getTransactionsByAddress: { address: "0x00000000000000000000000000000000000000aa", from_block: 1 },
};

const PRUNING_METHODS = METHOD_LIST.filter(({ spec }) =>
  (spec.errors ?? []).some((error) => error.reason === "pruned"),
).map(({ name }) => name);

describe("pruned blocks ([storage] retain_blocks)", () => {
  let t: TestNode;
  let firstTx: string;
  before(async () => {
    t = await startTestNode({ blockTimeMs: 20, storage: { retainBlocks: RETAIN, retainStates: 2 } });
    const first = await commitOne(t, transfer(accountAt(t, 1), accountAt(t, 2).address, 5));
    firstTx = first.hash;
    // A block per transfer at least: well past the first one's block and the retained window.
    while ((await t.result<number>("chain_getRecentBlockNumber")) < first.block_number + 3 * RETAIN) {
      await commitOne(t, transfer(accountAt(t, 1), accountAt(t, 2).address, 1));
    }
    await waitForPruned(t, RETAIN);
  });
  after(() => t?.stop());

  it("lists exactly the methods that take a block number as answering `pruned`", () => {
    assert.deepEqual(PRUNING_METHODS.sort(), Object.keys(PARAMS_FOR_BLOCK_1).sort());
  });

  for (const method of Object.keys(PARAMS_FOR_BLOCK_1)) {
    it(`${method}: -32005 pruned for block 1, with the lowest kept block`, async () => {
      const reply: JsonRpcReply = await t.call(method, PARAMS_FOR_BLOCK_1[method]);
      assert.equal(reply.error?.code, -32005, JSON.stringify(reply));
      assert.equal(reply.error?.data?.reason, "pruned");
      const head = await t.result<number>("chain_getRecentBlockNumber");
      const first = reply.error?.data?.first_available as number;
      assert.ok(
        first > 1 && first <= head && first >= head - RETAIN,
        `first_available ${first}, head ${head}`,
      );
      // The block it names is there.
      assert.notEqual(await t.result("chain_getBlockByNumber", { number: first }), null);
    });
  }

  it("still answers genesis and the kept blocks", async () => {
    const head = await t.result<number>("chain_getRecentBlockNumber");
    assert.equal((await t.result<{ number: number }>("chain_getBlockByNumber", { number: 0 })).number, 0);
    const blocks = await t.result<unknown[]>("chain_getBlocks", { from: head - 1, to: head });
    assert.equal(blocks.length, 2);
    assert.equal((await t.result<unknown[]>("chain_getBlocks", { from: 0, to: 0 })).length, 1);
    assert.equal(
      await t.result("chain_getBlockByNumber", { number: head + 100 }),
      null,
      "a future block is null",
    );
  });

  it("no longer finds a transaction of a pruned block by hash (documented: null)", async () => {
    assert.equal(await t.result("chain_getTransactionByHash", { hash: firstTx }), null);
  });
});
