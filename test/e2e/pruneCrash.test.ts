import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { it } from "node:test";
import type { DerivedAccount } from "../../src/crypto/index.ts";
import { FAILPOINTS, TEST_FAULT_VARIABLES } from "../../src/faults/index.ts";
import { devAccounts } from "../../src/node/index.ts";
import { LmdbStore } from "../../src/storage/index.ts";
import {
  type BlockJson,
  type CrashableNode,
  devNodeArgs,
  exitWithin,
  readBlocks,
  spawnCrashable,
  TransferStream,
} from "../helpers/crash.ts";
import { type CallFn, historyFromBlocks, readAllPages } from "../helpers/history.ts";
import { freePort, rpc } from "../helpers/process.ts";
import { waitFor } from "../helpers/testNode.ts";
import { assertStateWhole } from "../helpers/trieWalk.ts";

/**
 * kill -9 inside pruning: a dev node that keeps 2 states and 2 blocks is killed at each `prune`
 * failpoint of src/faults/failpoints.ts in turn (in the middle of a block's write that deletes old
 * trie nodes, then one that deletes an old block), restarted each time, and at last makes blocks
 * again. The write is one LMDB transaction, so the block and its deletions survive together or
 * not at all: the kept blocks form a chain, every kept state is whole (walked offline), the
 * history index holds the kept blocks' entries only, the books balance and every acknowledged
 * transfer counts.
 */

const RETENTION = { CHAIN_NODE_STORAGE_RETAIN_STATES: "2", CHAIN_NODE_STORAGE_RETAIN_BLOCKS: "2" };
const PRUNE_POINTS = FAILPOINTS.filter((point) => point.path === "prune").map((point) => point.name);
const QUIET = 3_600_000;
const AT = 2;
const RECIPIENT = (devAccounts()[9] as DerivedAccount).address;

/**
 * Exactly the last two blocks are kept, they link up, and block 1 below them answers `pruned`;
 * the recipient's history lists exactly the kept blocks' transfers (its entries of pruned blocks
 * went with them, in the same write).
 */
async function checkKeptBlocks(url: string, context: string): Promise<BlockJson[]> {
  const lowestKept = async () => {
    const head = await rpc<number>(url, "chain_getRecentBlockNumber");
    const probe = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "chain_getBlockByNumber",
        params: { number: 1 },
      }),
    });
    const reply = (await probe.json()) as {
      error?: { data?: { reason?: string; first_available?: number } };
    };
    return { head, first: reply.error?.data?.first_available ?? 1, reply };
  };
  // Pruning runs in a write of its own just after each block's (and once the node has opened
  // its store): it lags the head by a moment, so give it a bounded while.
  let { head, first, reply } = await lowestKept();
  for (const deadline = Date.now() + 5_000; first !== Math.max(1, head - 1) && Date.now() < deadline; ) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    ({ head, first, reply } = await lowestKept());
  }
  // Two blocks kept: the head and its parent (block 0 is always kept besides).
  assert.equal(first, Math.max(1, head - 1), `${context}: the lowest kept block (head ${head})`);
  if (first > 1) assert.equal(reply.error?.data?.reason, "pruned", `${context}: block 1 answers pruned`);
  const blocks = await readBlocks(url, first, head);
  for (const [i, block] of blocks.entries()) {
    assert.equal(block.number, first + i, `${context}: block ${first + i}`);
    if (i > 0)
      assert.equal(block.parent_hash, blocks[i - 1]?.hash, `${context}: block ${block.number} links`);
  }
  const call: CallFn = (method, params) => rpc(url, method, params);
  const { txs } = await readAllPages(call, { address: RECIPIENT, limit: 5 });
  assert.ok(txs.length > 0, `${context}: the kept blocks hold transfers to the recipient`);
  assert.deepEqual(
    txs.map((tx) => tx.hash),
    await historyFromBlocks(call, RECIPIENT, first, head),
    `${context}: the recipient's history is the kept blocks'`,
  );
  return blocks;
}

it("kill -9 inside pruning, at each prune failpoint: restart consistent, pruning goes on", async (t) => {
  assert.ok(PRUNE_POINTS.length >= 2);
  const home = mkdtempSync(join(tmpdir(), "chain-node-prune-crash-"));
  let node: CrashableNode | undefined;
  try {
    const port = await freePort();
    const args = (blockTimeMs: number) => devNodeArgs(home, port, blockTimeMs);
    const accounts = devAccounts();
    const senders = accounts.slice(1, 5);
    const recipient = RECIPIENT;
    const acknowledged: string[] = [];

    for (const point of PRUNE_POINTS) {
      node = await spawnCrashable(args(100), port, {
        ...RETENTION,
        [TEST_FAULT_VARIABLES.failpoint]: `${point}:${AT}`,
      });
      const stream = new TransferStream(node.url, senders, recipient, acknowledged, point);
      const exit = await exitWithin(node, 30_000, `${point}:${AT} to be reached`);
      await stream.stop();
      assert.equal(exit.signal, "SIGKILL", `${point}: killed\n${node.output()}`);
      assert.match(node.output(), new RegExp(`failpoint ${point.replace(".", "\\.")} reached`));
      node = await spawnCrashable(args(QUIET), port, RETENTION);
      await checkKeptBlocks(node.url, `after the kill at ${point}`);
      await node.stop();
    }

    // Making blocks again on the pruned store: pruning goes on, every acknowledged transfer counts.
    node = await spawnCrashable(args(100), port, RETENTION);
    const url = node.url;
    const before = await rpc<number>(url, "chain_getRecentBlockNumber");
    const more = new TransferStream(url, senders, recipient, acknowledged, "after");
    await waitFor(
      "three more blocks",
      async () => ((await rpc<number>(url, "chain_getRecentBlockNumber")) >= before + 3 ? true : undefined),
      30_000,
    );
    await more.stop();
    await waitFor(
      "the pool to drain",
      async () =>
        (await rpc<unknown[]>(url, "chain_getPendingTransactions")).length === 0 ? true : undefined,
      20_000,
    );
    const kept = await checkKeptBlocks(url, "at the end");
    // Transactions of pruned blocks are gone; the books balance: each sender paid 1 per committed
    // transfer (its nonce), and there are at least as many as were acknowledged.
    let committed = 0;
    for (const sender of senders) {
      const nonce: number = await rpc<number>(url, "chain_getNonce", { address: sender.address });
      const balance: number = await rpc<number>(url, "chain_getBalance", { address: sender.address });
      assert.equal(balance, 1_000_000_000_000 - nonce, `${sender.address} paid for its ${nonce} transfers`);
      committed += nonce;
    }
    assert.ok(
      committed >= acknowledged.length,
      `${committed} committed ≥ ${acknowledged.length} acknowledged`,
    );
    await node.stop();

    // Offline: the states the store says it keeps are whole.
    const store = new LmdbStore(join(home, "data"), { retainStates: 2, retainBlocks: 2 });
    try {
      const head = kept.at(-1) as BlockJson;
      assert.ok(
        store.statesFrom() >= head.number - 1,
        `states_from ${store.statesFrom()}, head ${head.number}`,
      );
      let nodes = 0;
      for (const block of kept.filter((b) => b.number >= store.statesFrom())) {
        nodes += assertStateWhole(store, block.state_root, `state ${block.number}`);
      }
      t.diagnostic(
        `${acknowledged.length} acknowledged, ${committed} committed, head ${head.number}, ${nodes} nodes walked`,
      );
    } finally {
      await store.close();
    }
  } finally {
    await node?.kill();
    rmSync(home, { recursive: true, force: true });
  }
});
