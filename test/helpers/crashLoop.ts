import assert from "node:assert/strict";
import type { DerivedAccount } from "../../src/crypto/index.ts";
import { devAccounts, loadGenesis } from "../../src/node/index.ts";
import {
  BlockWatcher,
  type CrashableNode,
  checkAcknowledged,
  checkFinalChain,
  checkSeenBlocks,
  replayDevChain,
  spawnCrashable,
  TransferStream,
} from "./crash.ts";
import { freePort, rpc } from "./process.ts";
import { seededRandom } from "./seededRandom.ts";

export interface CrashLoopOptions {
  /** An empty or missing directory; the dev home of every run. */
  home: string;
  kills: number;
  /** Seeds the kill delays; the same seed gives the same delays. */
  seed: number;
  blockTimeMs?: number;
  /** Kill between these many ms after the load starts. */
  minDelayMs?: number;
  maxDelayMs?: number;
  progress?: (line: string) => void;
}

export interface CrashLoopReport {
  seed: number;
  kills: number;
  acknowledged: number;
  /** Transfers committed at the end (≥ acknowledged: a kill can cut off a reply, not a commit). */
  committed: number;
  /** Heights re-executed on a never-killed in-memory chain, all with the same state root. */
  replayed: number;
  /** Heights seen over RPC before some kill, all found unchanged after it. */
  blocksSeen: number;
  elapsedMs: number;
}

/** Headers 0..to (hashes only), 100 per request. */
async function readHashes(url: string, to: number): Promise<{ number: number; hash: string }[]> {
  const headers: { number: number; hash: string }[] = [];
  for (let start = 0; start <= to; start += 100) {
    const end = Math.min(to, start + 99);
    headers.push(
      ...(await rpc<{ number: number; hash: string }[]>(url, "chain_getBlockHeaders", {
        from: start,
        to: end,
      })),
    );
  }
  return headers;
}

/**
 * A `chain-node dev` process under a steady stream of signed transfers, SIGKILLed at a random
 * moment after the load starts, restarted on the same home, `kills` times. After every restart:
 * every block the RPC reported before is there with the same hash, and every acknowledged hash is
 * committed or pending. At the end the pool drains, every acknowledged transfer is committed, the
 * stored chain agrees with itself, and re-executing it on a fresh in-memory chain gives the same
 * state root (and hash) at every height. Throws (assert) on the first violation; the process it
 * runs is killed however it ends.
 */
export async function runCrashLoop(options: CrashLoopOptions): Promise<CrashLoopReport> {
  const started = Date.now();
  const next = seededRandom(options.seed);
  const minDelay = options.minDelayMs ?? 50;
  const maxDelay = options.maxDelayMs ?? 800;
  const port = await freePort();
  const args = [
    ...["dev", "--home", options.home, "--rpc-port", String(port)],
    ...["--block-time", String(options.blockTimeMs ?? 100), "--log-level", "warn"],
  ];
  const accounts = devAccounts();
  const validator = accounts[0] as DerivedAccount;
  const senders = accounts.slice(1, 9);
  const recipient = (accounts[9] as DerivedAccount).address;
  const acknowledged: string[] = [];
  const seen = new Map<number, string>();
  let node: CrashableNode | undefined;
  try {
    let headBefore = -1;
    for (let kill = 0; kill < options.kills; kill++) {
      const context = `seed ${options.seed}, after kill ${kill}`;
      node = await spawnCrashable(args, port);
      assert.ok(node.served, `${context}: the node serves again\n${node.output()}`);
      const url = node.url;
      if (kill > 0) {
        const head = await rpc<number>(url, "chain_getRecentBlockNumber");
        assert.ok(
          head >= headBefore,
          `${context}: head ${head} is not behind the ${headBefore} reported before`,
        );
        checkSeenBlocks(await readHashes(url, headBefore), seen, context);
        await checkAcknowledged(url, acknowledged, context);
      }
      const stream = new TransferStream(url, senders, recipient, acknowledged, `k${kill}`);
      const watcher = new BlockWatcher(url, seen);
      const delay = minDelay + Math.floor(next() * (maxDelay - minDelay + 1));
      await new Promise((resolve) => setTimeout(resolve, delay));
      await node.kill();
      await stream.stop();
      await watcher.stop();
      headBefore = Math.max(headBefore, watcher.head);
      options.progress?.(
        `kill ${kill + 1}/${options.kills} after ${delay} ms: head ${watcher.head}, ${acknowledged.length} acknowledged`,
      );
    }

    node = await spawnCrashable(args, port);
    const url = node.url;
    const context = `seed ${options.seed}, final`;
    const { blocks, committed } = await checkFinalChain(
      url,
      { seen, acknowledged, senders, drainMs: 30_000 },
      context,
    );
    assert.equal(
      await rpc<number>(url, "chain_getBalance", { address: recipient }),
      1_000_000_000_000 + committed,
      `${context}: the recipient got exactly the committed transfers`,
    );
    const blockTxs = blocks.reduce((sum, b) => sum + b.transactions.length, 0);
    assert.equal(blockTxs, committed, `${context}: the blocks hold exactly the committed transfers`);
    await node.stop();
    // After the last RPC call: the replay holds the event loop for seconds on a long chain, and a
    // kept-alive connection the node closed meanwhile would fail the next request ("other side closed").
    const replayed = await replayDevChain(loadGenesis(options.home), validator, blocks, context);
    return {
      seed: options.seed,
      kills: options.kills,
      acknowledged: acknowledged.length,
      committed,
      replayed,
      blocksSeen: seen.size,
      elapsedMs: Date.now() - started,
    };
  } finally {
    await node?.kill();
  }
}
