import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { assertBlock, assertRpcError, type BlockJson, type TxJson } from "../helpers/shapes.ts";
import type { TestNode } from "../helpers/testNode.ts";
import { assertInvalidParams, BAD_NUMBERS, startSampleChain, invalidParamCases } from "./support.ts";

const METHOD = "chain_getBlocks";

function assertBlocks(value: unknown, what: string): asserts value is BlockJson<TxJson>[] {
  assert.ok(Array.isArray(value), `${what}: expected an array`);
  value.forEach((block, i) => {
    assertBlock(block, true, `${what}[${i}]`);
  });
}

describe(METHOD, () => {
  let t: TestNode;
  let head: number;
  before(async () => ({ t, head } = await startSampleChain()));
  after(() => t?.stop()); // runs even when before() or a test fails

  it("returns blocks from..to inclusive, in order, with full transactions", async () => {
    const blocks = await t.result(METHOD, { from: 0, to: head });
    assertBlocks(blocks, `blocks 0..${head}`);
    assert.deepEqual(
      blocks.map((b) => b.number),
      [0, 1, 2],
    );
    assert.equal(blocks[0]?.parent_hash, "", 'block 0 has parent_hash ""');
    for (const block of blocks) {
      const byNumber = await t.result("chain_getBlockByNumber", {
        number: block.number,
        getFullTransactions: true,
      });
      assert.deepEqual(block, byNumber, `block ${block.number} equals chain_getBlockByNumber's`);
    }
  });

  it("returns one block when from equals to", async () => {
    const blocks = await t.result(METHOD, { from: 1, to: 1 });
    assertBlocks(blocks, "blocks 1..1");
    assert.deepEqual(
      blocks.map((b) => b.number),
      [1],
    );
  });

  it("clips `to` beyond the head: the head is the last block returned", async () => {
    for (const to of [head + 1, head + 50, 99]) {
      const blocks = await t.result(METHOD, { from: 1, to });
      assertBlocks(blocks, `blocks 1..${to}`);
      assert.deepEqual(
        blocks.map((b) => b.number),
        [1, 2],
        `1..${to} clipped to the head ${head}`,
      );
    }
  });

  it("returns an empty array when the whole range is beyond the head", async () => {
    assert.deepEqual(await t.result(METHOD, { from: head + 1, to: head + 10 }), []);
  });

  it("answers a batch that mixes serialized blocks with plain results and a notification, byte for byte", async () => {
    const batch = [
      { jsonrpc: "2.0", id: 1, method: METHOD, params: { from: 0, to: head } },
      { jsonrpc: "2.0", id: "n", method: "chain_getRecentBlockNumber" },
      { jsonrpc: "2.0", method: "chain_getRecentBlockNumber" }, // a notification: no entry
      {
        jsonrpc: "2.0",
        id: 3,
        method: "chain_getBlockByNumber",
        params: { number: 1, getFullTransactions: true },
      },
    ];
    const reply = await t.post(JSON.stringify(batch));
    assert.equal(reply.status, 200);
    const entries = reply.json as { id: unknown; result: unknown }[];
    assert.deepEqual(
      entries.map((e) => e.id),
      [1, "n", 3],
    );
    assertBlocks(entries[0]?.result, "the batch's chain_getBlocks");
    assert.equal(entries[1]?.result, head);
    assert.deepEqual(
      entries[2]?.result,
      await t.result("chain_getBlockByNumber", { number: 1, getFullTransactions: true }),
    );
  });

  it("allows exactly 100 blocks (0..99) and refuses 101 with -32005 range_too_large", async () => {
    assertBlocks(await t.result(METHOD, { from: 0, to: 99 }), "blocks 0..99");
    for (const [from, to] of [
      [0, 100],
      [5, 105],
      [0, Number.MAX_SAFE_INTEGER],
    ] as const) {
      const data = assertRpcError(
        await t.call(METHOD, { from, to }),
        -32005,
        "range_too_large",
        `${from}..${to}`,
      );
      assert.equal(data.limit, 100, `${from}..${to}: data.limit`);
    }
  });

  it("refuses from > to with -32602 invalid_params", async () => {
    assertRpcError(await t.call(METHOD, { from: 2, to: 1 }), -32602, "invalid_params");
    assertRpcError(await t.call(METHOD, { from: 500, to: 0 }), -32602, "invalid_params");
  });

  it("refuses invalid params with -32602 invalid_params", async () => {
    await assertInvalidParams(
      t,
      METHOD,
      invalidParamCases({ from: 0, to: 1 }, { from: BAD_NUMBERS, to: BAD_NUMBERS }),
    );
  });
});
