import { type Static, Type } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import {
  type Commit,
  type ConfirmedTx,
  type ExecutedBlock,
  hashHeader,
  InvalidBlockError,
  type ProposedBlock,
  type StoredBlock,
  type Tx,
  signatureJobOf,
  signatureProves,
  type Validator,
  verifyCommit,
} from "../chain/index.ts";
import type { SignatureVerifier, SignedHashResult } from "../crypto/index.ts";
import { SignedProposalSchema } from "../consensus/index.ts";

/**
 * Catching up from peers: fetch blocks by range, check each one's certificate against the
 * validator set of its height, re-execute it (which checks its transactions and state root), and
 * commit. A peer that serves a bad block is reported and another is asked.
 */

/** A block as served for sync: what a proposal carries, plus the certificate that finalized it. */
export interface SyncBlock extends ProposedBlock {
  commit: Commit;
}

const SyncBlockSchema = Type.Object(
  {
    ...SignedProposalSchema.properties.block.properties,
    commit: Type.Object(
      {
        height: Type.Integer({ minimum: 1 }),
        round: Type.Integer({ minimum: 0 }),
        block_hash: Type.String({ pattern: "^0x[0-9a-f]{64}$" }),
        signatures: Type.Array(Type.String({ pattern: "^0x[0-9a-fA-F]{194}$" }), { maxItems: 10_000 }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
const syncBlockCheck = TypeCompiler.Compile(SyncBlockSchema);
/** Whether `value` has the shape of a SyncBlock (what it holds is checked when it is applied). */
export const isSyncBlock = (value: unknown): value is Static<typeof SyncBlockSchema> & SyncBlock =>
  syncBlockCheck.Check(value);

/** The chain's limits a fetched block is checked with. */
export interface SyncLimits {
  chainId: number;
  maxTxBytes: number;
  /**
   * A block is executed in time slices of this length (Chain.executeProposed): RPC calls, peer
   * messages and the pool journal's writes are served between them, instead of waiting for a
   * whole block (0.5–0.75 s for 5,000 transfers). Unset: in one piece (an import).
   */
  executionSliceMs?: number;
}

/**
 * Checks one block exactly as sync does and commits it: it must follow the head; its certificate
 * must be for it and verify against the validator set of its height; its execution (links, parent
 * certificate, transactions) must reproduce its header, state root included. Returns the stored
 * block, or why it was refused (nothing is committed then). Block sync and `chain-node import`
 * both apply blocks through here.
 */
export async function commitSyncBlock(
  chain: SyncChain,
  block: SyncBlock,
  limits: SyncLimits,
  alreadyVerified?: (tx: Tx) => boolean,
): Promise<{ stored: StoredBlock; executed: ExecutedBlock } | { refused: string }> {
  const head = chain.head().header.number;
  if (block.header.number !== head + 1)
    return { refused: `block ${block.header.number} does not follow ${head}` };
  const hash = hashHeader(block.header);
  const { commit } = block;
  if (commit.height !== block.header.number || commit.block_hash !== hash)
    return { refused: "commit is for another block" };
  const check = verifyCommit(commit, limits.chainId, chain.validatorsAt(block.header.number));
  if (!check.ok) return { refused: `commit: ${check.message}` };
  let executed: ExecutedBlock;
  try {
    executed = await chain.executeProposed(block, limits, alreadyVerified);
  } catch (error) {
    if (error instanceof InvalidBlockError) return { refused: error.message };
    throw error;
  }
  const stored = await chain.commit(executed, commit, check.signers);
  return { stored, executed };
}

/**
 * The transactions of `item` whose signature checks out exactly as admission would find it
 * (same hash, same signer, same lower-case signature), as a predicate for the block check, which
 * verifies any other transaction itself (and refuses the block if one fails). The checks run on
 * `verifier` (worker threads), so that a block's signatures are checked while the blocks before
 * it execute.
 */
export async function verifyBlockSignatures(
  verifier: SignatureVerifier,
  item: unknown,
  limits: SyncLimits,
): Promise<((tx: Tx) => boolean) | undefined> {
  if (!isSyncBlock(item)) return undefined;
  const jobs = (item as SyncBlock).txs.flatMap((tx) => {
    const job = signatureJobOf(tx, limits);
    return job === undefined ? [] : [{ tx, job }];
  });
  const results = await verifier.verify(
    jobs.map((j) => j.job),
    "bulk",
  );
  const proven = new Set(
    jobs.filter(({ tx }, i) => signatureProves(tx, results[i] as SignedHashResult)).map(({ tx }) => tx),
  );
  return (tx) => proven.has(tx);
}

/** What serving blocks needs from storage. */
export interface BlockReader {
  headNumber(): number | undefined;
  getBlock(number: number): StoredBlock | undefined;
  getConfirmedTx(hash: string): ConfirmedTx | undefined;
}

/**
 * Blocks from..to (inclusive, clipped to the head and to `max`), in the sync form, read as they
 * are taken: the p2p layer stops taking at its message limit, and the blocks after it are not read.
 */
export function* serveBlocks(
  store: BlockReader,
  from: number,
  to: number,
  max: number,
): Generator<SyncBlock> {
  const head = store.headNumber() ?? 0;
  const first = Math.max(1, from);
  const last = Math.min(to, head, first + max - 1);
  for (let number = first; number <= last; number++) {
    const block = store.getBlock(number);
    const parent = store.getBlock(number - 1);
    if (block?.commit == null || parent === undefined) return;
    const txs = block.tx_hashes.map((hash) => store.getConfirmedTx(hash)?.tx);
    if (txs.some((tx) => tx === undefined)) return;
    yield { header: block.header, txs: txs as Tx[], last_commit: parent.commit, commit: block.commit };
  }
}

/** A block as a peer served it, with its transactions' signature checks under way. */
interface FetchedBlock {
  item: unknown;
  verified: Promise<((tx: Tx) => boolean) | undefined>;
}

/**
 * Transactions a group of blocks committed together may hold at most: what one write transaction
 * keeps in memory grows with them (a 5,000-transfer block over a million accounts writes about
 * 33 MiB), so large blocks go one or two at a time and small ones a whole range at once.
 */
export const TOGETHER_MAX_TXS = 10_000;

/** `fetched` cut into runs of consecutive blocks of at most TOGETHER_MAX_TXS transactions (at least one block each). */
export function groupsOf<T extends { item: unknown }>(fetched: readonly T[]): T[][] {
  const groups: T[][] = [];
  let group: T[] = [];
  let txs = 0;
  for (const block of fetched) {
    // Only a count: each block is checked in full when it is applied.
    const txList = (block.item as { txs?: unknown } | null)?.txs;
    const count = Array.isArray(txList) ? txList.length : 0;
    if (group.length > 0 && txs + count > TOGETHER_MAX_TXS) {
      groups.push(group);
      group = [];
      txs = 0;
    }
    group.push(block);
    txs += count;
  }
  if (group.length > 0) groups.push(group);
  return groups;
}

/** A range asked of a peer; `blocks` may hold a prefix of it (an answer cut at the message limit). */
interface Prefetch {
  peer: string;
  from: number;
  to: number;
  blocks: Promise<FetchedBlock[]>;
}

/**
 * Ranges asked for beyond the one being applied. Each holds up to a message's worth of blocks
 * (10 MiB by default) until it is applied; two keep two peers busy serving while one executes.
 */
const AHEAD_RANGES = 2;

export interface SyncPeer {
  id: string;
  head: number;
}

/** Where blocks come from (the p2p layer, or anything else that can serve ranges). */
export interface BlockSource {
  peers(): SyncPeer[];
  requestBlocks(peer: string, from: number, to: number): Promise<unknown[]>;
  penalize(peer: string, reason: string): void;
}

/** The chain as sync uses it (chain/Chain implements it). */
export interface SyncChain {
  head(): StoredBlock;
  validatorsAt(height: number): Validator[];
  executeProposed(
    block: ProposedBlock,
    limits: { maxTxBytes: number; executionSliceMs?: number },
    alreadyVerified?: (tx: Tx) => boolean,
  ): Promise<ExecutedBlock>;
  commit(executed: ExecutedBlock, commit: Commit, signers: string[]): Promise<StoredBlock>;
  abandon(): void;
  /**
   * Runs `step` on each of `items` in order until one returns false, with the steps' block
   * commits written to the store together (the store decides where a write ends, between two
   * steps); how many returned true.
   */
  commitTogether<T>(items: readonly T[], step: (item: T) => Promise<boolean>): Promise<number>;
}

/** The pending pool as sync uses it (txpool's PendingPool in a node). */
export interface SyncPool {
  /** Called after a synced block commits, with its transaction hashes: they leave the pool. */
  removeCommitted(hashes: readonly string[]): void;
}

export interface SyncOptions extends SyncLimits {
  /** Blocks per request. */
  batch: number;
  /** Runs a task while consensus is paused (the chain executes one block at a time). */
  exclusive<T>(task: () => Promise<T>): Promise<T>;
  /** Told of every block sync commits, before onBlock. */
  pool: SyncPool;
  onBlock?(block: StoredBlock, executed: ExecutedBlock): void;
  onProgress?(head: number, target: number): void;
  log(level: "debug" | "info" | "warn", message: string, fields?: Record<string, unknown>): void;
  /**
   * Checks transaction signatures ahead of execution (on worker threads), so the event loop only
   * executes: a block's signatures are checked while the blocks before it execute. Without it the
   * block check verifies each signature itself, on the event loop.
   */
  verifier?: SignatureVerifier;
}

export class BlockSync {
  private readonly chain: SyncChain;
  private readonly source: BlockSource;
  private readonly options: SyncOptions;
  private running: Promise<void> | undefined;
  private behind = false;
  /** Until a peer has told us its head and we have reached it, we do not know we are synced. */
  private caughtUp = false;
  private committedHint = 0;
  private stopped = false;

  constructor(chain: SyncChain, source: BlockSource, options: SyncOptions) {
    this.chain = chain;
    this.source = source;
    this.options = options;
  }

  /**
   * True from start until the node has heard a peer's head and reached it, and again whenever a
   * peer reports a head above ours while we fetch towards it.
   */
  syncing(): boolean {
    return this.behind || !this.caughtUp;
  }

  /** Whether a run is worth starting for a peer at `peerHead`. */
  wants(peerHead: number): boolean {
    return !this.caughtUp || peerHead > this.chain.head().header.number + 1;
  }

  /**
   * Starts catching up if a peer is ahead; a no-op while a run is going. `committed`: a height
   * known to be committed elsewhere (validators vote above it) even if no status says so yet.
   */
  trigger(committed = 0): Promise<void> {
    this.committedHint = Math.max(this.committedHint, committed);
    if (this.running === undefined && !this.stopped) {
      this.running = this.run().finally(() => {
        this.running = undefined;
      });
    }
    return this.running ?? Promise.resolve();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
  }

  private target(): number {
    return Math.max(0, ...this.source.peers().map((p) => p.head));
  }

  private async run(): Promise<void> {
    const failed = new Set<string>();
    // The ranges after the one being applied, asked for already and spread over the peers:
    // fetching (a peer reading and encoding blocks, the transfer, our decoding) no longer waits
    // for execution, nor execution for it, and one busy peer does not set the pace.
    let ahead: Prefetch[] = [];
    while (!this.stopped) {
      const head = this.chain.head().header.number;
      const peersHead = this.target();
      // One block behind is normal between a commit and a status refresh, and consensus
      // commits it; unless consensus itself reports that block as decided without us.
      const target = Math.max(
        peersHead > head + 1 ? peersHead : 0,
        this.committedHint > head ? this.committedHint : 0,
      );
      if (target === 0) {
        if (this.source.peers().length > 0) this.caughtUp = true;
        break;
      }
      this.behind = true;
      this.options.onProgress?.(head, target);
      const from = head + 1;
      // Ranges asked of a peer that failed since, or that consensus overtook, are not used.
      ahead = ahead.filter((range) => range.from >= from && !failed.has(range.peer));
      let current = ahead[0]?.from === from ? ahead.shift() : undefined;
      if (current === undefined) {
        // Up to the first range still asked for (one whose peer failed left a gap before it).
        const to = Math.min(
          target,
          head + this.options.batch,
          (ahead[0]?.from ?? Number.POSITIVE_INFINITY) - 1,
        );
        const peer = this.peerFor(to, failed, ahead);
        if (peer === undefined) break;
        current = this.prefetch(peer, from, to);
      }
      const fetched = await current.blocks;
      // An answer cut at the message limit: the rest of its range is asked for now, first.
      const next = from + fetched.length;
      if (fetched.length > 0 && next <= current.to) {
        ahead.unshift(this.prefetch(current.peer, next, current.to));
      }
      this.askAhead(ahead, current, target, failed);
      const ok = fetched.length > 0 && (await this.applyAll(current.peer, fetched));
      if (!ok) failed.add(current.peer);
    }
    this.behind = false;
    this.options.onProgress?.(this.chain.head().header.number, this.target());
  }

  /** Tops `ahead` up to AHEAD_RANGES contiguous ranges after `current`, the range being applied. */
  private askAhead(ahead: Prefetch[], current: Prefetch, target: number, failed: ReadonlySet<string>): void {
    let from = (ahead.at(-1) ?? current).to + 1;
    while (ahead.length < AHEAD_RANGES && from <= target) {
      const to = Math.min(target, from + this.options.batch - 1);
      const peer = this.peerFor(to, failed, [current, ...ahead]);
      if (peer === undefined) return;
      ahead.push(this.prefetch(peer, from, to));
      from = to + 1;
    }
  }

  /**
   * The peer to ask for a range ending at `to`: among those not failed, one whose status reaches
   * `to` if any (statuses lag by up to a refresh, so otherwise any: an empty answer only skips
   * it for this run), the one with the fewest of the `asked` ranges.
   */
  private peerFor(to: number, failed: ReadonlySet<string>, asked: readonly Prefetch[]): string | undefined {
    const candidates = this.source.peers().filter((p) => !failed.has(p.id));
    const reaching = candidates.filter((p) => p.head >= to);
    const pool = reaching.length > 0 ? reaching : candidates;
    const load = (id: string) => asked.filter((range) => range.peer === id).length;
    return pool.reduce<SyncPeer | undefined>(
      (best, p) => (best === undefined || load(p.id) < load(best.id) ? p : best),
      undefined,
    )?.id;
  }

  private prefetch(peer: string, from: number, to: number): Prefetch {
    return { peer, from, to, blocks: this.fetch(peer, from, to) };
  }

  /** Blocks from..to from one peer, with each one's signature checks started; none if it failed. */
  private async fetch(peer: string, from: number, to: number): Promise<FetchedBlock[]> {
    let response: unknown[];
    try {
      response = await this.source.requestBlocks(peer, from, to);
    } catch (error) {
      this.options.log("debug", "block request failed", { peer, from, to, error: String(error) });
      return [];
    }
    // Every block's signature checks start now; block i waits only for its own.
    return response.map((item) => ({ item, verified: this.verifySignatures(item) }));
  }

  /**
   * Verifies and commits fetched blocks in order, a group at a time in one commitTogether (see
   * groupsOf), one block per step: the store may end its write between two blocks (when a pool
   * journal write waits: a submission is acknowledged only once journaled) and go on with the
   * rest of the group in the next. False if the peer served an invalid block (the blocks before
   * it are kept).
   */
  private async applyAll(peer: string, fetched: FetchedBlock[]): Promise<boolean> {
    for (const group of groupsOf(fetched)) {
      if (this.stopped) break;
      let refused = false;
      await this.chain.commitTogether(group, async ({ item, verified }) => {
        if (this.stopped) return false; // stop() waits for this write: end it at the next block
        const alreadyVerified = await verified;
        const reason = await this.options.exclusive(() => this.apply(item, alreadyVerified));
        if (reason !== undefined) {
          this.options.log("warn", "peer served an invalid block", { peer, reason });
          this.source.penalize(peer, reason);
          refused = true;
          return false;
        }
        // Blocks whose signatures are already checked follow each other through microtasks only,
        // and a large one executes for a few hundred ms: without a turn of the event loop between
        // them, the next range's answer (yamux hands out its window as we read) waits for the whole
        // group, and so does every peer message and RPC call. A submission that arrives in this
        // turn is then seen waiting by the store when the step returns.
        await new Promise((resolve) => setImmediate(resolve));
        return true;
      });
      if (refused) return false;
    }
    return true;
  }

  /** Signature checks ahead of execution, when the node gave a verifier (see verifyBlockSignatures). */
  private async verifySignatures(item: unknown): Promise<((tx: Tx) => boolean) | undefined> {
    const { verifier, chainId, maxTxBytes } = this.options;
    if (verifier === undefined) return undefined;
    return verifyBlockSignatures(verifier, item, { chainId, maxTxBytes });
  }

  /** Verifies and commits one block; returns why it was refused, or undefined. */
  private async apply(item: unknown, alreadyVerified?: (tx: Tx) => boolean): Promise<string | undefined> {
    if (!isSyncBlock(item)) return "malformed block";
    // Consensus may have committed it while this response was on its way.
    if (item.header.number <= this.chain.head().header.number) return undefined;
    const result = await commitSyncBlock(this.chain, item, this.options, alreadyVerified);
    if ("refused" in result) return result.refused;
    this.options.pool.removeCommitted(result.stored.tx_hashes);
    this.options.onBlock?.(result.stored, result.executed);
    return undefined;
  }
}
