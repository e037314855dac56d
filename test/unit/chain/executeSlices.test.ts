import assert from "node:assert/strict";
import { readFile, stat } from "node:fs";
import { describe, it } from "node:test";
import { Chain, type ExecutedBlock, type Tx } from "../../../src/chain/index.ts";
import { afterIoTurn } from "../../../src/chain/timeSlices.ts";
import { MemoryStore } from "../../helpers/memoryStore.ts";
import { ACCOUNTS, GENESIS, userWrites, VALIDATOR } from "../../helpers/smallChain.ts";
import { turnsWhile } from "../../helpers/turns.ts";

/**
 * Chain.execute in time slices (ChainOptions.executionSliceMs, chain/timeSlices.ts): a large
 * block leaves the event loop turns while it executes and hashes, and those turns see the head
 * and state as before the block. Without the option a block executes in one piece.
 */

/**
 * Turns of the event loop that ran while `chain` executed `txs`, each checked by `check`, and the
 * executed block (then abandoned).
 */
async function turnsDuring(
  chain: Chain,
  txs: Tx[],
  check: () => void,
): Promise<{ turns: number; executed: ExecutedBlock }> {
  const executing = chain.execute(txs, VALIDATOR, chain.head().header.timestamp + 1000);
  const turns = await turnsWhile(executing, check);
  const executed = await executing;
  chain.abandon();
  return { turns, executed };
}

describe("Chain.execute in time slices", () => {
  it("executes in one piece without executionSliceMs (a validator's block, within its deadline)", async () => {
    const chain = new Chain(new MemoryStore(), GENESIS);
    await chain.open();
    const { turns } = await turnsDuring(
      chain,
      userWrites(new Map(), 2_000, (i) => ({ i })),
      () => {},
    );
    assert.equal(turns, 0);
  });

  it("lets other turns run while a large block executes; they see the state before it", async () => {
    const store = new MemoryStore();
    const chain = new Chain(store, GENESIS, { executionSliceMs: 5 });
    await chain.open();
    const txs = userWrites(new Map(), 4_000, (i) => ({ i }));
    const lastPath = `/users/${ACCOUNTS[(txs.length - 1) % ACCOUNTS.length]}/item${txs.length - 1}/i`;
    const { turns, executed } = await turnsDuring(chain, txs, () => {
      assert.equal(chain.head().header.number, 0);
      assert.equal(chain.state().getLeaf(lastPath), undefined);
    });
    assert.ok(turns > 0, "no other turn ran while 4,000 transactions executed");
    assert.equal(executed.results.length, txs.length);
    assert.deepEqual(executed.changes.get(lastPath), 3_999);
  });
});

describe("afterIoTurn", () => {
  it("resumes only after I/O that completed meanwhile is handled, even when called from an I/O callback", async () => {
    // A file-system callback runs in the poll phase: from there, one setImmediate resumes in the
    // same iteration's check phase, before the next poll reads what completed meanwhile (the
    // case of Chain.commitAside right after the block before was written).
    const order: string[] = [];
    await new Promise<void>((done, fail) => {
      readFile(import.meta.filename, () => {
        stat(import.meta.filename, () => order.push("io"));
        const until = performance.now() + 20;
        while (performance.now() < until); // the stat completes on the thread pool meanwhile
        afterIoTurn().then(() => {
          order.push("resumed");
          done();
        }, fail);
      });
    });
    assert.deepEqual(order, ["io", "resumed"]);
  });
});
