import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { it } from "node:test";
import type { DerivedAccount } from "../../src/crypto/index.ts";
import { type FailpointName, TEST_FAULT_VARIABLES } from "../../src/faults/index.ts";
import { devAccounts } from "../../src/node/index.ts";
import {
  type CrashableNode,
  checkAcknowledged,
  devNodeArgs,
  exitWithin,
  spawnCrashable,
  TransferStream,
} from "../helpers/crash.ts";
import { type CallFn, historyFromBlocks, readAllPages } from "../helpers/history.ts";
import { freePort, rpc } from "../helpers/process.ts";
import { waitFor } from "../helpers/testNode.ts";

/**
 * Issue 18's acceptance for history: every transaction of a test account is listed once, in
 * order, across pages, after a restart and after kill -9 during a commit. A `chain-node dev`
 * process takes two streams of transfers: Alice and Carol pay Bob, Bob and Dave pay Alice, so
 * Alice sends and receives, between transactions that are not hers. Her history, walked in pages
 * of 7 and of 100, must equal the list computed from the blocks (chain_getBlocks, and each
 * received transfer's result), which does not read the index: while the node runs, after a clean
 * restart, and after the process is killed inside a block's write (the index entries written,
 * the transaction not committed: the block is lost, entries and all) and right after a write
 * committed (the block and its entries are kept).
 */

const QUIET = 3_600_000;
const KILLS: readonly FailpointName[] = ["commit.afterBlockWrites", "commit.afterTxnCommit"];
/** Die at this commit of the run, so that earlier ones have succeeded. */
const KILL_AT = 4;

it("lists an account's every transaction once, in order, across pages, through restarts and kill -9", async (t) => {
  const started = Date.now();
  const home = mkdtempSync(join(tmpdir(), "chain-node-history-"));
  let node: CrashableNode | undefined;
  try {
    const port = await freePort();
    const args = (blockTimeMs: number) => devNodeArgs(home, port, blockTimeMs);
    const [alice, bob, carol, dave] = devAccounts().slice(1, 5) as DerivedAccount[];
    const watched = [alice, bob] as DerivedAccount[];
    const acknowledged: string[] = [];
    let checkedPages = 0;

    /** Alice's and Bob's histories, in pages of 7 and of 100, equal what the blocks hold. */
    const checkHistories = async (url: string, context: string): Promise<number> => {
      const call: CallFn = (method, params) => rpc(url, method, params);
      let listed = 0;
      for (const account of watched) {
        const expected = await historyFromBlocks(call, account.address);
        for (const limit of [7, 100]) {
          const { txs, pages } = await readAllPages(call, { address: account.address, limit });
          const hashes = txs.map((tx) => tx.hash);
          assert.deepEqual(hashes, expected, `${context}: ${account.address} in pages of ${limit}`);
          assert.equal(new Set(hashes).size, hashes.length, `${context}: no transaction twice`);
          checkedPages += pages.length;
        }
        listed += expected.length;
      }
      return listed;
    };

    /** Both streams; stop() ends them and waits for the requests in flight. */
    const streams = (url: string, tag: string) => {
      const toBob = new TransferStream(
        url,
        [alice, carol] as DerivedAccount[],
        bob?.address as string,
        acknowledged,
        `${tag}b`,
      );
      const toAlice = new TransferStream(
        url,
        [bob, dave] as DerivedAccount[],
        alice?.address as string,
        acknowledged,
        `${tag}a`,
      );
      return { stop: () => Promise.all([toBob.stop(), toAlice.stop()]) };
    };

    // While it runs: a few dozen blocks of transfers, then the pool drained into blocks.
    node = await spawnCrashable(args(50), port);
    let url = node.url;
    const first = streams(url, "run");
    await waitFor(
      "Alice to have 60 transactions",
      async () => {
        const page = await rpc<{ transactions: unknown[] }>(url, "chain_getTransactionsByAddress", {
          address: alice?.address,
          limit: 60,
        });
        return page.transactions.length >= 60 ? true : undefined;
      },
      30_000,
    );
    await first.stop();
    await waitFor(
      "the pool to drain",
      async () =>
        (await rpc<unknown[]>(url, "chain_getPendingTransactions")).length === 0 ? true : undefined,
      20_000,
    );
    const listed = await checkHistories(url, "while running");
    assert.ok(listed >= 100, `Alice and Bob hold ${listed} entries`);

    // A clean restart: the same lists.
    await node.stop();
    node = await spawnCrashable(args(QUIET), port);
    assert.equal(await checkHistories(node.url, "after a restart"), listed);
    await node.stop();

    // Killed inside a block's write, then right after one, each time under both streams.
    for (const point of KILLS) {
      node = await spawnCrashable(args(50), port, {
        [TEST_FAULT_VARIABLES.failpoint]: `${point}:${KILL_AT}`,
      });
      const running = streams(node.url, point);
      const exit = await exitWithin(node, 30_000, `${point}:${KILL_AT} to be reached`);
      await running.stop();
      assert.equal(exit.signal, "SIGKILL", `${point}: killed\n${node.output()}`);
      assert.match(node.output(), new RegExp(`failpoint ${point.replace(".", "\\.")} reached`));
      node = await spawnCrashable(args(QUIET), port);
      await checkHistories(node.url, `after kill -9 at ${point}`);
      await node.stop();
    }

    // Making blocks again: what was acknowledged before the kills commits, and is listed.
    node = await spawnCrashable(args(50), port);
    url = node.url;
    await waitFor(
      "the restored pool to drain",
      async () =>
        (await rpc<unknown[]>(url, "chain_getPendingTransactions")).length === 0 ? true : undefined,
      20_000,
    );
    assert.equal(
      await checkAcknowledged(url, acknowledged, "at the end"),
      acknowledged.length,
      "every acknowledged transfer is committed",
    );
    const final = await checkHistories(url, "at the end");
    await node.stop();
    t.diagnostic(
      `${acknowledged.length} acknowledged transfers, ${final} entries of Alice and Bob, ${checkedPages} pages checked, ${Date.now() - started} ms`,
    );
  } finally {
    await node?.kill();
    rmSync(home, { recursive: true, force: true });
  }
});
