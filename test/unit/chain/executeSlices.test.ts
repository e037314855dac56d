import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setImmediate as nextTurn } from "node:timers/promises";
import type { Tx } from "../../../src/chain/index.ts";
import { MemoryStore } from "../../helpers/memoryStore.ts";
import { ACCOUNTS, openChain, transfer, VALIDATOR } from "../../helpers/smallChain.ts";

/**
 * Chain.execute in time slices (chain/timeSlices.ts): a large block leaves the event loop turns
 * while it executes and hashes, and those turns see the head and state as before the block.
 */

/** `count` SET_VALUEs of fresh paths under the accounts' /users data. */
function userWrites(nonces: Map<string, number>, count: number): Tx[] {
  return Array.from({ length: count }, (_, i) => {
    const from = i % ACCOUNTS.length;
    const tx = transfer(nonces, [from, (from + 1) % ACCOUNTS.length, 1]);
    return {
      ...tx,
      operation: { type: "SET_VALUE" as const, ref: `/users/${ACCOUNTS[from]}/item${i}`, value: { i } },
    };
  });
}

describe("Chain.execute in time slices", () => {
  it("lets other turns run while a large block executes; they see the state before it", async () => {
    const store = new MemoryStore();
    const chain = await openChain(store);
    const txs = userWrites(new Map(), 4_000);
    const lastPath = `/users/${ACCOUNTS[(txs.length - 1) % ACCOUNTS.length]}/item${txs.length - 1}/i`;
    let done = false;
    const executing = chain.execute(txs, VALIDATOR, chain.head().header.timestamp + 1000).finally(() => {
      done = true;
    });
    let turns = 0;
    while (!done) {
      await nextTurn();
      if (done) break;
      turns++;
      assert.equal(chain.head().header.number, 0);
      assert.equal(chain.state().getLeaf(lastPath), undefined);
    }
    const executed = await executing;
    assert.ok(turns > 0, "no other turn ran while 4,000 transactions executed");
    assert.equal(executed.results.length, txs.length);
    assert.deepEqual(executed.changes.get(lastPath), 3_999);
    chain.abandon();
  });
});
