import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setImmediate as nextTurn } from "node:timers/promises";
import { Chain, type Tx } from "../../../src/chain/index.ts";
import { MemoryStore } from "../../helpers/memoryStore.ts";
import { ACCOUNTS, GENESIS, transfer, VALIDATOR } from "../../helpers/smallChain.ts";

/**
 * Chain.execute in time slices (ChainOptions.executionSliceMs, chain/timeSlices.ts): a large
 * block leaves the event loop turns while it executes and hashes, and those turns see the head
 * and state as before the block. Without the option a block executes in one piece.
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

/** Turns of the event loop that ran while `chain` executed `txs`, each checked by `check`. */
async function turnsDuring(chain: Chain, txs: Tx[], check: () => void): Promise<number> {
  let done = false;
  const executing = chain.execute(txs, VALIDATOR, chain.head().header.timestamp + 1000).finally(() => {
    done = true;
  });
  let turns = 0;
  while (!done) {
    await nextTurn();
    if (done) break;
    turns++;
    check();
  }
  await executing;
  chain.abandon();
  return turns;
}

describe("Chain.execute in time slices", () => {
  it("executes in one piece without executionSliceMs (a validator's block, within its deadline)", async () => {
    const chain = new Chain(new MemoryStore(), GENESIS);
    await chain.open();
    assert.equal(await turnsDuring(chain, userWrites(new Map(), 2_000), () => {}), 0);
  });

  it("lets other turns run while a large block executes; they see the state before it", async () => {
    const store = new MemoryStore();
    const chain = new Chain(store, GENESIS, { executionSliceMs: 5 });
    await chain.open();
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
