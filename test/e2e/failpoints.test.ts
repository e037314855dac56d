import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it, type TestContext } from "node:test";
import { FAILPOINTS, type FailpointName, TEST_FAULT_VARIABLES } from "../../src/faults/index.ts";
import { readSigningLog, type SignedRecord } from "../../src/consensus/index.ts";
import type { DerivedAccount } from "../../src/crypto/index.ts";
import { devAccounts, loadGenesis } from "../../src/node/index.ts";
import {
  BlockWatcher,
  type CrashableNode,
  devNodeArgs,
  checkAcknowledged,
  checkFinalChain,
  checkSeenBlocks,
  checkStoredChain,
  exitWithin,
  readBlocks,
  replayDevChain,
  spawnCrashable,
  TransferStream,
} from "../helpers/crash.ts";
import { freePort, rpc } from "../helpers/process.ts";
import { waitFor } from "../helpers/testNode.ts";
import { Testnet } from "../helpers/testnet.ts";

/**
 * Every failpoint of src/faults/failpoints.ts, in real processes: the node is killed (SIGKILL, from
 * inside) at that exact step, restarted without the failpoint on the same home, and checked.
 * Block commit and pool journal points run on two `chain-node dev` homes side by side, each point
 * in turn on its home; vote-signing points (used by network validators only) on a one-validator
 * `chain-node testnet`.
 */

const pointsOf = (path: string): FailpointName[] =>
  FAILPOINTS.filter((point) => point.path === path).map((point) => point.name);
const COMMIT_POINTS = pointsOf("commit");
const JOURNAL_POINTS = pointsOf("journal");
const SIGN_POINTS = pointsOf("sign");

/** Commit points before the LMDB write transaction commits: the block dies with the process. */
const BLOCK_LOST: ReadonlySet<FailpointName> = new Set([
  "commit.beforeWrite",
  "commit.afterBlockWrites",
  "commit.afterStateWrites",
  "commit.afterHeadWrite",
]);
/** Commit points after it: the block is durable and is the head after the restart. */
const BLOCK_KEPT: ReadonlySet<FailpointName> = new Set([
  "commit.afterTxnCommit",
  "commit.beforeHeadUpdate",
  "commit.afterHeadUpdate",
  "commit.beforePoolPrune",
  "commit.afterPoolPrune",
]);

/** Die at this commit / journal write of the run, so that earlier ones have succeeded. */
const COMMIT_AT = 3;
const JOURNAL_AT = 5;

function assertKilledAt(node: CrashableNode, exit: { signal: string | null }, point: string): void {
  assert.equal(exit.signal, "SIGKILL", `${point}: the process died by SIGKILL\n${node.output()}`);
  assert.match(
    node.output(),
    new RegExp(`failpoint ${point.replace(".", "\\.")} reached`),
    `${point}: it died at the failpoint`,
  );
}

/**
 * On a fresh dev home: killed inside the write of block 0 at `genesisPoint`, then at each of
 * `points` in turn (the COMMIT_AT-th commit or JOURNAL_AT-th journal write of a run under a stream
 * of transfers), each time restarted without a failpoint and checked; at last the pool drains.
 */
async function runDevFailpoints(
  t: TestContext,
  label: string,
  genesisPoint: FailpointName,
  points: readonly FailpointName[],
  /** More environment for every start (a setting, e.g. the store's writer thread). */
  env: Record<string, string> = {},
): Promise<void> {
  const started = Date.now();
  const home = mkdtempSync(join(tmpdir(), "chain-node-failpoints-"));
  let node: CrashableNode | undefined;
  try {
    const port = await freePort();
    const args = (blockTimeMs: number) => devNodeArgs(home, port, blockTimeMs);
    // A restart with an hour's block time makes no block: the checks see exactly what survived.
    const QUIET = 3_600_000;
    const accounts = devAccounts();
    const validator = accounts[0] as DerivedAccount;
    const senders = accounts.slice(1, 7);
    const recipient = (accounts[9] as DerivedAccount).address;
    const acknowledged: string[] = [];
    const seen = new Map<number, string>();

    // Block 0 itself: killed inside the write of genesis, before RPC serves.
    node = await spawnCrashable(args(QUIET), port, {
      ...env,
      [TEST_FAULT_VARIABLES.failpoint]: `${genesisPoint}:1`,
    });
    assertKilledAt(
      node,
      await exitWithin(node, 20_000, `${genesisPoint} in the genesis write`),
      genesisPoint,
    );
    assert.equal(node.served, false, `${genesisPoint}: it died writing block 0, before serving`);
    node = await spawnCrashable(args(QUIET), port, env);
    assert.equal(await rpc<number>(node.url, "chain_getRecentBlockNumber"), 0, "restarted at block 0");
    const genesis = loadGenesis(home);
    await replayDevChain(genesis, validator, await readBlocks(node.url, 0, 0), "after the genesis crash");
    await node.stop();

    let head = 0;
    let checkedTxs = 0;
    for (const point of points) {
      const at = point.startsWith("journal.") ? JOURNAL_AT : COMMIT_AT;
      node = await spawnCrashable(args(100), port, {
        ...env,
        [TEST_FAULT_VARIABLES.failpoint]: `${point}:${at}`,
      });
      const url = node.url;
      const stream = node.served
        ? new TransferStream(url, senders, recipient, acknowledged, point)
        : undefined;
      const watcher = node.served ? new BlockWatcher(url, seen) : undefined;
      const exit = await exitWithin(node, 20_000, `${point}:${at} to be reached`);
      await stream?.stop();
      await watcher?.stop();
      assertKilledAt(node, exit, point);

      node = await spawnCrashable(args(QUIET), port, env);
      const restarted = await rpc<number>(node.url, "chain_getRecentBlockNumber");
      if (BLOCK_KEPT.has(point)) {
        assert.equal(restarted, head + at, `${point}: block ${head + at} was committed before the kill`);
      } else if (BLOCK_LOST.has(point)) {
        assert.equal(restarted, head + at - 1, `${point}: block ${head + at} died with the process`);
      } else {
        assert.ok(restarted >= head, `${point}: head ${restarted} ≥ ${head}`);
      }
      const blocks = await readBlocks(node.url, 0, restarted);
      assert.equal(blocks.length, restarted + 1, `${point}: every block up to the head is served`);
      checkSeenBlocks(blocks, seen, point);
      checkedTxs += await checkStoredChain(node.url, blocks, point);
      await checkAcknowledged(node.url, acknowledged, point);
      await node.stop();
      await replayDevChain(genesis, validator, blocks, point);
      for (const block of blocks) seen.set(block.number, block.hash);
      head = restarted;
    }

    // At last with blocks again: everything pending commits, and the books balance.
    node = await spawnCrashable(args(100), port, env);
    const { blocks, committed: transfers } = await checkFinalChain(
      node.url,
      { seen, acknowledged, senders, drainMs: 20_000 },
      "final",
    );
    assert.ok(
      transfers >= acknowledged.length,
      `${transfers} committed ≥ ${acknowledged.length} acknowledged`,
    );
    await node.stop();
    // After the last RPC call (a long replay holds the event loop; see test/helpers/crashLoop.ts).
    const replayed = await replayDevChain(genesis, validator, blocks, "final");
    t.diagnostic(
      `failpoints ${label}: ${points.length + 1} kills, ${acknowledged.length} acknowledged transfers, ${replayed} blocks replayed, ${checkedTxs} tx lookups, ${Date.now() - started} ms`,
    );
  } finally {
    await node?.kill();
    rmSync(home, { recursive: true, force: true });
  }
}

// Three runs side by side (the fourth is signing): each is mostly process starts, ~2 s apiece.
describe("failpoints (kill at every durable step, restart, check)", { concurrency: 3 }, () => {
  it("every commit point is classified: the block is lost or kept", () => {
    for (const point of COMMIT_POINTS) {
      assert.ok(BLOCK_LOST.has(point) !== BLOCK_KEPT.has(point), `${point} is in exactly one class`);
    }
    assert.ok(COMMIT_POINTS.length >= 8 && JOURNAL_POINTS.length >= 2);
  });

  const half = Math.ceil(COMMIT_POINTS.length / 2);
  // The block written on the event loop (a network node's way; a dev node's with write_thread off).
  const onLoop = { CHAIN_NODE_STORAGE_WRITE_THREAD: "false" };
  it(`dev, write_thread off: block 0 and the commit points ${COMMIT_POINTS.slice(0, half).join(", ")}`, (t) =>
    runDevFailpoints(t, "dev A", "commit.afterStateWrites", COMMIT_POINTS.slice(0, half), onLoop));
  it(`dev, write_thread off: block 0 and the points ${[...COMMIT_POINTS.slice(half), ...JOURNAL_POINTS].join(", ")}`, (t) =>
    runDevFailpoints(
      t,
      "dev B",
      "commit.afterHeadWrite",
      [...COMMIT_POINTS.slice(half), ...JOURNAL_POINTS],
      onLoop,
    ));
  // The same points with the block written by the store's thread (a dev node's default: a kill
  // op inside its write), and those after it, which then run once the write lands, while the next
  // block may already be executing (docs/decisions/021-next-block-while-the-last-is-written.md).
  it(`dev with storage.write_thread: block 0 and ${COMMIT_POINTS.slice(0, half).join(", ")}`, (t) =>
    runDevFailpoints(t, "dev A, writer thread", "commit.afterBlockWrites", COMMIT_POINTS.slice(0, half), {
      CHAIN_NODE_STORAGE_WRITE_THREAD: "true",
    }));
  it(`dev with storage.write_thread: block 0 and ${COMMIT_POINTS.slice(half).join(", ")}`, (t) =>
    runDevFailpoints(t, "dev B, writer thread", "commit.afterTxnCommit", COMMIT_POINTS.slice(half), {
      CHAIN_NODE_STORAGE_WRITE_THREAD: "true",
    }));

  describe("vote signing (one-validator chain-node testnet)", () => {
    let net: Testnet | undefined;
    let node: CrashableNode | undefined;
    before(async () => {
      net = await Testnet.create(1, 0, 100);
    });
    after(async () => {
      await node?.kill();
      await net?.stopAll();
    });

    it("never signs two messages for one height/round/step and keeps committing after each kill", async (t) => {
      const started = Date.now();
      const testnet = net as Testnet;
      const home = testnet.file.nodes[0]?.home as string;
      const port = Number(new URL(testnet.url(0)).port);
      const args = ["start", "--home", home, "--log-level", "warn"];
      const seen = new Map<number, string>();
      const checkLog = (context: string): SignedRecord[] => {
        const records = readSigningLog(readFileSync(join(home, "data", "signing.jsonl"), "utf8"));
        const signed = new Map<string, string>();
        for (const record of records) {
          const key = `${record.height}/${record.round}/${record.step}`;
          const body = JSON.stringify(record.body);
          assert.ok(
            !signed.has(key) || signed.get(key) === body,
            `${context}: two different messages signed at ${key}`,
          );
          signed.set(key, body);
        }
        return records;
      };
      let headBefore = 0;
      for (const [i, point] of SIGN_POINTS.entries()) {
        // Each a different step of a height: proposal (4), prevote (5), precommit (6), ... Reaching
        // the n-th signature after a restart also proves the node makes progress again.
        const at = 4 + i;
        node = await spawnCrashable(
          args,
          port,
          { [TEST_FAULT_VARIABLES.failpoint]: `${point}:${at}` },
          60_000,
        );
        const watcher = node.served ? new BlockWatcher(node.url, seen) : undefined;
        const exit = await exitWithin(node, 30_000, `${point}:${at} (signatures after the restart)`);
        await watcher?.stop();
        assertKilledAt(node, exit, point);
        checkLog(point);
        headBefore = Math.max(headBefore, watcher?.head ?? 0);
      }

      node = await spawnCrashable(args, port, {}, 60_000);
      const url = node.url;
      await waitFor(
        `blocks beyond ${headBefore + 2} after the last kill`,
        async () =>
          (await rpc<number>(url, "chain_getRecentBlockNumber")) > headBefore + 2 ? true : undefined,
        20_000,
      );
      const head = await rpc<number>(url, "chain_getRecentBlockNumber");
      const blocks = await readBlocks(url, 0, head);
      checkSeenBlocks(blocks, seen, "signing: final");
      await checkStoredChain(url, blocks, "signing: final");
      const records = checkLog("final");
      // One validator: its precommit alone certifies a block. Every precommit it ever signed at a
      // height must be for the block committed there, also those signed just before a kill.
      let precommits = 0;
      for (const record of records) {
        const body = record.body;
        if (body.type !== "precommit" || body.block_hash === "" || record.height > head) continue;
        precommits += 1;
        assert.equal(
          body.block_hash,
          blocks[record.height]?.hash,
          `height ${record.height}: a precommit (round ${record.round}) certifies another block than the one committed: a fork`,
        );
      }
      assert.ok(precommits >= head, `${precommits} precommits for ${head} blocks`);
      await node.stop();
      t.diagnostic(
        `failpoints signing: ${SIGN_POINTS.length} kills, ${records.length} signatures audited, head ${head}, ${Date.now() - started} ms`,
      );
    });
  });
});
