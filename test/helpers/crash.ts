import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import {
  Chain,
  type Commit,
  type Genesis,
  hashHeader,
  precommitVote,
  type SignedTxInput,
  signVote,
  type TxBody,
  verifyCommit,
  verifySignedTx,
} from "../../src/chain/index.ts";
import type { DerivedAccount } from "../../src/crypto/index.ts";
import { hexToBytes } from "../../src/crypto/index.ts";
import { MemoryStore } from "./memoryStore.ts";
import { launchNode, rpc } from "./process.ts";
import { signTx, transferBody, waitFor } from "./testNode.ts";

/**
 * Helpers of the crash tests (test/e2e/failpoints.test.ts, test/e2e/crashLoop.test.ts,
 * scripts/crashLoop.ts): a node process that may die on its own (a failpoint), a stream of
 * signed transfers that records every acknowledged hash, and the checks run after a restart.
 */

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface CrashableNode {
  url: string;
  child: ChildProcess;
  /** Resolves when the process has exited, however. */
  exited: Promise<Exit>;
  /** False when the process died before its RPC answered (a failpoint reached during start). */
  served: boolean;
  output(): string;
  /** SIGKILL and wait for the exit. */
  kill(): Promise<void>;
  /** SIGTERM and wait (SIGKILL after `graceMs`). */
  stop(graceMs?: number): Promise<Exit>;
}

/**
 * Runs `chain-node <args>` with extra environment (e.g. CHAIN_NODE_TEST_FAILPOINT) and waits until its
 * RPC answers or it exits. Register `kill` as teardown on the next line.
 */
export async function spawnCrashable(
  args: string[],
  rpcPort: number,
  env: Record<string, string> = {},
  timeoutMs = 30_000,
): Promise<CrashableNode> {
  const { child, output, exited } = launchNode(args, env);
  let dead = false;
  void exited.then(() => {
    dead = true;
  });
  const node: CrashableNode = {
    url: `http://127.0.0.1:${rpcPort}`,
    child,
    exited,
    served: false,
    output,
    async kill() {
      if (!dead) child.kill("SIGKILL");
      await exited;
    },
    async stop(graceMs = 10_000) {
      if (!dead) child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      const exit = await exited;
      clearTimeout(timer);
      return exit;
    },
  };
  const deadline = Date.now() + timeoutMs;
  while (!dead) {
    try {
      await rpc<number>(node.url, "chain_getRecentBlockNumber");
      node.served = true;
      return node;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await node.kill();
      throw new Error(`node did not serve RPC on ${node.url} within ${timeoutMs} ms:\n${output()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return node;
}

/** `chain-node dev` on `home`, serving RPC on `port`, making a block every `blockTimeMs` when asked. */
export const devNodeArgs = (home: string, port: number, blockTimeMs: number): string[] => [
  ...["dev", "--home", home, "--rpc-port", String(port)],
  ...["--block-time", String(blockTimeMs), "--log-level", "warn"],
];

/** Waits for a process to exit, failing with `what` after `timeoutMs`. */
export async function exitWithin(node: CrashableNode, timeoutMs: number, what: string): Promise<Exit> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new Error(
            `${what}: the process did not exit within ${timeoutMs} ms; its output:\n${node.output().slice(-4000)}`,
          ),
        ),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([node.exited, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export interface TxJson {
  hash: string;
  address: string;
  signature: string;
  timestamp: number;
  nonce: number;
  parent_tx_hash?: string;
  operation: TxBody["operation"];
}

export interface BlockJson {
  number: number;
  hash: string;
  parent_hash: string;
  timestamp: number;
  proposer: string;
  validators: string[];
  size: number;
  transactions_hash: string;
  state_root: string;
  last_commit_hash: string;
  transactions: TxJson[];
}

/** Blocks `from..to` with their full transactions, 100 per request. */
export async function readBlocks(url: string, from: number, to: number): Promise<BlockJson[]> {
  const blocks: BlockJson[] = [];
  for (let start = from; start <= to; start += 100) {
    const end = Math.min(to, start + 99);
    blocks.push(...(await rpc<BlockJson[]>(url, "chain_getBlocks", { from: start, to: end })));
  }
  return blocks;
}

/** Several JSON-RPC calls in batches of `size` (the node's batch limit is 100). */
export async function rpcBatch<T>(
  url: string,
  calls: { method: string; params?: unknown }[],
  size = 100,
): Promise<T[]> {
  const results: T[] = [];
  for (let start = 0; start < calls.length; start += size) {
    const batch = calls
      .slice(start, start + size)
      .map((call, i) => ({ jsonrpc: "2.0", id: start + i, method: call.method, params: call.params }));
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(batch),
    });
    const replies = (await response.json()) as { id: number; result?: T; error?: unknown }[];
    replies.sort((a, b) => a.id - b.id);
    for (const reply of replies) {
      if (reply.error !== undefined)
        throw new Error(`batch call ${reply.id}: ${JSON.stringify(reply.error)}`);
      results.push(reply.result as T);
    }
  }
  return results;
}

interface TxLookup {
  hash: string;
  block_number?: number;
  block_hash?: string;
  index?: number;
  status?: string;
}

/**
 * The stored chain agrees with itself: block n is number n, links to n - 1, its hash is the keccak
 * of its header (nothing half-written), lookup by hash finds it, and every transaction it lists is
 * found by hash at that block and index. Returns the number of transactions checked.
 */
export async function checkStoredChain(
  url: string,
  blocks: readonly BlockJson[],
  context: string,
): Promise<number> {
  const byHash = await rpcBatch<{ number: number } | null>(
    url,
    blocks.map((b) => ({ method: "chain_getBlockByHash", params: { hash: b.hash } })),
  );
  const lookups: { method: string; params: unknown }[] = [];
  const expected: { hash: string; number: number; blockHash: string; index: number }[] = [];
  for (const [i, block] of blocks.entries()) {
    const where = `${context}: block ${i}`;
    assert.equal(block.number, i, `${where} has number ${block.number}`);
    if (i > 0) assert.equal(block.parent_hash, blocks[i - 1]?.hash, `${where} links to block ${i - 1}`);
    const header = {
      parent_hash: block.parent_hash,
      number: block.number,
      timestamp: block.timestamp,
      proposer: block.proposer,
      transactions_hash: block.transactions_hash,
      state_root: block.state_root,
      last_commit_hash: block.last_commit_hash,
      size: block.size,
    };
    assert.equal(hashHeader(header), block.hash, `${where}: its hash is the hash of its header`);
    assert.equal(byHash[i]?.number, i, `${where} is found by its hash ${block.hash}`);
    for (const [index, tx] of block.transactions.entries()) {
      lookups.push({ method: "chain_getTransactionByHash", params: { hash: tx.hash } });
      expected.push({ hash: tx.hash, number: i, blockHash: block.hash, index });
    }
  }
  const found = await rpcBatch<TxLookup | null>(url, lookups);
  for (const [i, want] of expected.entries()) {
    const got = found[i];
    const where = `${context}: tx ${want.hash} of block ${want.number}`;
    assert.equal(got?.block_number, want.number, `${where} is found at its block`);
    assert.equal(got?.block_hash, want.blockHash, `${where} names its block's hash`);
    assert.equal(got?.index, want.index, `${where} has its index`);
  }
  return expected.length;
}

/**
 * Every acknowledged hash is committed or pending. Returns how many of them are committed.
 */
export async function checkAcknowledged(
  url: string,
  acknowledged: readonly string[],
  context: string,
): Promise<number> {
  const found = await rpcBatch<TxLookup | null>(
    url,
    acknowledged.map((hash) => ({ method: "chain_getTransactionByHash", params: { hash } })),
  );
  let committed = 0;
  for (const [i, hash] of acknowledged.entries()) {
    const tx = found[i];
    assert.ok(tx !== null && tx !== undefined, `${context}: acknowledged transaction ${hash} was lost`);
    assert.ok(
      tx.block_number !== undefined || tx.status === "PENDING",
      `${context}: ${hash} is neither committed nor pending`,
    );
    if (tx.block_number !== undefined) committed += 1;
  }
  return committed;
}

/**
 * Re-executes blocks 1.. of a dev chain on a fresh in-memory chain with the same genesis (a node
 * that was never killed), signing each certificate as the dev producer does (round 0, RFC 6979
 * signatures are deterministic), and requires every header — state root, transactions hash, size,
 * last commit hash — and so every hash to come out the same. Returns the heights replayed.
 */
export async function replayDevChain(
  genesis: Genesis,
  validator: DerivedAccount,
  blocks: readonly BlockJson[],
  context: string,
): Promise<number> {
  const chain = new Chain(new MemoryStore(), genesis);
  await chain.open();
  assert.equal(chain.head().hash, blocks[0]?.hash, `${context}: block 0 is the genesis block`);
  const key = hexToBytes(validator.privateKey);
  for (const block of blocks.slice(1)) {
    const txs = block.transactions.map((tx) => {
      const transaction: TxBody = { nonce: tx.nonce, timestamp: tx.timestamp, operation: tx.operation };
      if (tx.parent_tx_hash !== undefined) transaction.parent_tx_hash = tx.parent_tx_hash;
      const input: SignedTxInput = { signature: tx.signature, transaction };
      return verifySignedTx(input, { chainId: genesis.chain_id, maxTxBytes: genesis.consensus.max_tx_bytes });
    });
    const executed = await chain.execute(txs, block.proposer, block.timestamp);
    assert.equal(
      executed.header.state_root,
      block.state_root,
      `${context}: state root at height ${block.number} equals the replay's`,
    );
    assert.equal(executed.hash, block.hash, `${context}: block ${block.number} re-executes to the same hash`);
    const vote = precommitVote(genesis.chain_id, block.number, 0, executed.hash);
    const commit: Commit = {
      height: block.number,
      round: 0,
      block_hash: executed.hash,
      signatures: [signVote(vote, key)],
    };
    const check = verifyCommit(commit, genesis.chain_id, chain.validators());
    assert.ok(check.ok, `${context}: replayed certificate of block ${block.number}`);
    await chain.commit(executed, commit, check.signers);
  }
  return blocks.length - 1;
}

/**
 * Signed transfers from `senders` to `recipient`, each sender one at a time from its committed +
 * pending nonce, until `stop()` or the node stops answering. Every hash the node returned is kept
 * in `acknowledged` (across runs: pass the same array).
 */
export class TransferStream {
  private running = true;
  private readonly done: Promise<void>;
  readonly acknowledged: string[];
  sent = 0;

  constructor(
    url: string,
    senders: readonly DerivedAccount[],
    recipient: string,
    acknowledged: string[],
    tag: string,
    chainId = 100,
  ) {
    this.acknowledged = acknowledged;
    this.done = (async () => {
      let pending: { address: string }[];
      try {
        pending = await rpc<{ address: string }[]>(url, "chain_getPendingTransactions");
      } catch {
        return;
      }
      await Promise.all(
        senders.map(async (account) => {
          let nonce: number;
          try {
            nonce =
              (await rpc<number>(url, "chain_getNonce", { address: account.address })) +
              pending.filter((tx) => tx.address === account.address).length;
          } catch {
            return;
          }
          while (this.running) {
            const body = transferBody(account.address, recipient, 1, nonce, `${tag}n${nonce}`);
            try {
              const hash = await rpc<string>(
                url,
                "chain_sendSignedTransaction",
                signTx(account.privateKey, body, chainId),
              );
              this.acknowledged.push(hash);
              this.sent += 1;
              nonce += 1;
            } catch {
              return; // the node died mid-request: that hash was never acknowledged
            }
          }
        }),
      );
    })();
  }

  /** Stops sending and waits for the requests in flight. */
  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }
}

/**
 * Polls the head and the last 20 headers every 30 ms while the node answers, keeping the hash
 * seen at each height in `seen` (across runs: pass the same map). A height seen with two
 * different hashes fails at once: a block the RPC reported must never change.
 */
export class BlockWatcher {
  private running = true;
  private readonly done: Promise<void>;
  /** The highest head the RPC reported. */
  head = -1;
  readonly seen: Map<number, string>;

  constructor(url: string, seen: Map<number, string>) {
    this.seen = seen;
    this.done = (async () => {
      while (this.running) {
        let headers: { number: number; hash: string }[];
        try {
          const head = await rpc<number>(url, "chain_getRecentBlockNumber");
          headers = await rpc<{ number: number; hash: string }[]>(url, "chain_getBlockHeaders", {
            from: Math.max(0, head - 20),
            to: head,
          });
          this.head = Math.max(this.head, head);
        } catch {
          return; // the node is gone
        }
        for (const { number, hash } of headers) {
          const before = seen.get(number);
          if (before !== undefined && before !== hash) {
            throw new Error(`block ${number} changed while the node ran: ${before} then ${hash}`);
          }
          seen.set(number, hash);
        }
        await new Promise((resolve) => setTimeout(resolve, 30));
      }
    })();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }
}

/** Every block seen before (at any earlier run) is still there with the same hash; `blocks[n]` is block n. */
export function checkSeenBlocks(
  blocks: readonly { hash: string }[],
  seen: ReadonlyMap<number, string>,
  context: string,
): void {
  for (const [number, hash] of seen) {
    assert.equal(
      blocks[number]?.hash,
      hash,
      `${context}: block ${number} changed or vanished across a crash`,
    );
  }
}

/**
 * The checks after the last restart of a crash test, once the restored pool has drained into
 * blocks: blocks seen earlier are unchanged, the stored chain is whole, every acknowledged hash is
 * committed, and each sender paid exactly 1 per transfer it made (its nonce). Returns the chain's
 * blocks and the number of committed transfers (the senders' nonces summed).
 */
export async function checkFinalChain(
  url: string,
  expected: {
    seen: ReadonlyMap<number, string>;
    acknowledged: readonly string[];
    senders: readonly { address: string }[];
    drainMs: number;
  },
  context: string,
): Promise<{ blocks: BlockJson[]; committed: number }> {
  await waitFor(
    "the restored pool to drain into blocks",
    async () => ((await rpc<unknown[]>(url, "chain_getPendingTransactions")).length === 0 ? true : undefined),
    expected.drainMs,
  );
  const head = await rpc<number>(url, "chain_getRecentBlockNumber");
  const blocks = await readBlocks(url, 0, head);
  checkSeenBlocks(blocks, expected.seen, context);
  await checkStoredChain(url, blocks, context);
  assert.equal(
    await checkAcknowledged(url, expected.acknowledged, context),
    expected.acknowledged.length,
    `${context}: every acknowledged transfer is committed`,
  );
  let committed = 0;
  for (const account of expected.senders) {
    const nonce = await rpc<number>(url, "chain_getNonce", { address: account.address });
    const balance = await rpc<number>(url, "chain_getBalance", { address: account.address });
    assert.equal(
      balance,
      1_000_000_000_000 - nonce,
      `${context}: ${account.address} paid for its ${nonce} transfers`,
    );
    committed += nonce;
  }
  return { blocks, committed };
}
