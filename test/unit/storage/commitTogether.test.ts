import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, it } from "node:test";
import { balanceOf } from "../../../src/chain/index.ts";
import { LmdbStore } from "../../../src/storage/index.ts";
import { groupsOf, TOGETHER_MAX_TXS } from "../../../src/sync/index.ts";
import { ACCOUNTS, type Move, openChain, produce, transfer } from "../../helpers/smallChain.ts";
import { withTempDir } from "../../helpers/tempDir.ts";

/**
 * LmdbStore.commitTogether (sync's writes of a fetched range, one step per block): blocks
 * committed by its steps are visible at once, durable together when it resolves, kept when a step
 * fails after them, and lost together when the process dies before the write ends; submissions
 * are journaled during its write (the journal's environment is its own), never hanging it.
 */

const withDir = (run: (dir: string) => Promise<void>) => withTempDir("together", run);

/** Runs test/helpers/`script` with `args` on the store at `dir` in a child process (killed after 60 s). */
const runHelper = (script: string, dir: string, ...args: string[]) =>
  spawnSync(
    process.execPath,
    ["--import", "tsx", join(import.meta.dirname, "../../helpers", script), dir, ...args],
    { encoding: "utf8", timeout: 60_000 },
  );

/** The store at `dir` reopened, as a restarted node sees it. */
async function reopened(dir: string): Promise<{ head: number | undefined; balances: number[] }> {
  const store = new LmdbStore(dir);
  try {
    const chain = await openChain(store); // checks block 0 and opens the trie at the stored head
    return {
      head: chain.head().header.number,
      balances: ACCOUNTS.slice(0, 4).map((a) => balanceOf(store, a)),
    };
  } finally {
    await store.close();
  }
}

describe("LmdbStore.commitTogether", () => {
  it("commits the blocks of its steps in one write: readable inside, durable after", () =>
    withDir(async (dir) => {
      const store = new LmdbStore(dir);
      const chain = await openChain(store);
      const nonces = new Map<string, number>();
      const moves: Move[] = [
        [0, 1, 10],
        [1, 2, 20],
        [2, 3, 30],
      ];
      const done = await chain.commitTogether(moves, async (move) => {
        await produce(chain, [transfer(nonces, move)]);
        if (move === moves[1]) {
          // Inside: the chain and the store's readers see both blocks.
          assert.equal(chain.head().header.number, 2);
          assert.equal(store.getBlock(1)?.header.number, 1);
          assert.equal(balanceOf(store, ACCOUNTS[2] as string), 1_020);
        }
        return true;
      });
      assert.equal(done, 3);
      await produce(chain, [transfer(nonces, [3, 0, 5])]); // an ordinary commit after it
      await store.close();
      assert.deepEqual(await reopened(dir), { head: 4, balances: [995, 990, 990, 1_025] });
    }));

  it("stops at a step that returns false, and keeps the blocks before it", () =>
    withDir(async (dir) => {
      const store = new LmdbStore(dir);
      const chain = await openChain(store);
      const nonces = new Map<string, number>();
      const stepped: number[] = [];
      const done = await chain.commitTogether([1, 2, 3], async (step) => {
        stepped.push(step);
        if (step === 2) return false; // as sync's step for a block the peer served wrong
        await produce(chain, [transfer(nonces, [0, 1, 10])]);
        return true;
      });
      assert.equal(done, 1);
      assert.deepEqual(stepped, [1, 2]);
      await store.close();
      assert.deepEqual(await reopened(dir), { head: 1, balances: [990, 1_010, 1_000, 1_000] });
    }));

  it("keeps the blocks committed before a step failed, and rejects with that failure", () =>
    withDir(async (dir) => {
      const store = new LmdbStore(dir);
      const chain = await openChain(store);
      const nonces = new Map<string, number>();
      const moves: Move[] = [
        [0, 1, 10],
        [1, 2, 20],
        [2, 3, 30],
      ];
      await assert.rejects(
        chain.commitTogether(moves, async (move) => {
          if (move === moves[2]) throw new Error("peer served an invalid block");
          await produce(chain, [transfer(nonces, move)]);
          return true;
        }),
        /invalid block/,
      );
      assert.equal(chain.head().header.number, 2);
      await produce(chain, [transfer(nonces, [2, 3, 30])]);
      await store.close();
      assert.deepEqual(await reopened(dir), { head: 3, balances: [990, 990, 990, 1_030] });
    }));

  it("loses all its blocks together when the process dies before it ends (SIGKILL)", () =>
    withDir(async (dir) => {
      const child = runHelper("togetherCrash.ts", dir);
      assert.equal(child.signal, "SIGKILL", child.stderr);
      assert.match(child.stdout, /inside 3/, "the child reached block 3 inside the write");
      // Block 1 was durable on its own; 2 and 3 were in the write that never ended.
      assert.deepEqual(await reopened(dir), { head: 1, balances: [990, 1_010, 1_000, 1_000] });
    }));

  it("begins after the journal's write under way, instead of hanging on its lock (a submission while syncing)", () =>
    withDir(async (dir) => {
      const child = runHelper("togetherRace.ts", dir, "underWay");
      // Before the fix the child hung within its first rounds (3 runs in 4), its event loop blocked for good.
      assert.equal(child.signal, null, `the child was killed: it hung (${child.stderr})`);
      assert.equal(child.status, 0, child.stderr);
      assert.equal(child.stdout.trim(), "done 300 300");
    }));

  it("journals a submission that arrives during it, without hanging", () =>
    withDir(async (dir) => {
      const child = runHelper("togetherRace.ts", dir, "during");
      assert.equal(child.signal, null, `the child was killed: it hung (${child.stderr})`);
      assert.equal(child.status, 0, child.stderr);
      assert.equal(child.stdout.trim(), "done 600 300");
    }));

  it("lets a journal write commit during its write (the journal's environment is its own), and goes on", () =>
    withDir(async (dir) => {
      const store = new LmdbStore(dir);
      const chain = await openChain(store);
      const nonces = new Map<string, number>();
      const submitted = transfer(nonces, [7, 6, 1]);
      const events: string[] = [];
      const done = await chain.commitTogether([1, 2, 3], async (step) => {
        await produce(chain, [transfer(nonces, [0, 1, 1])]);
        if (step === 1) {
          // Awaited inside the step: before, the journal waited for this write to end, for good.
          await store.journal.savePending([{ seq: 0, tx: submitted }]);
          events.push("journaled");
        }
        events.push(`step ${step}`);
        return true;
      });
      events.push("together over");
      assert.equal(done, 3);
      assert.deepEqual(events, ["journaled", "step 1", "step 2", "step 3", "together over"]);
      await store.close();
      assert.deepEqual((await reopened(dir)).head, 3);
      const again = new LmdbStore(dir);
      assert.deepEqual(
        again.journal.loadPending().map((r) => r.tx.hash),
        [submitted.hash],
      );
      await again.close();
    }));
});

describe("groupsOf (sync's blocks per commitTogether)", () => {
  const block = (txs: number) => ({ item: { txs: Array.from({ length: txs }) } });

  it("keeps consecutive blocks together up to TOGETHER_MAX_TXS transactions, a larger block on its own", () => {
    const sizes = (groups: { item: { txs: unknown[] } }[][]) =>
      groups.map((g) => g.map((b) => b.item.txs.length));
    const half = TOGETHER_MAX_TXS / 2;
    assert.deepEqual(sizes(groupsOf([block(half), block(half), block(1)])), [[half, half], [1]]);
    assert.deepEqual(sizes(groupsOf([block(0), block(TOGETHER_MAX_TXS + 1), block(0)])), [
      [0],
      [TOGETHER_MAX_TXS + 1],
      [0],
    ]);
    assert.deepEqual(sizes(groupsOf(Array.from({ length: 64 }, () => block(100)))), [Array(64).fill(100)]);
    assert.deepEqual(groupsOf([]), []);
  });

  it("counts a malformed block as empty (it is refused when applied)", () => {
    assert.deepEqual(groupsOf([{ item: null }, { item: { txs: "x" } }, { item: 7 }]).length, 1);
  });
});
