import { join } from "node:path";
import { type Database, type Key, open, type RootDatabase } from "lmdb";
import type {
  BlockWrite,
  ChainStore,
  ConfirmedTx,
  JsonValue,
  SnapshotRestore,
  StoredBlock,
  Tx,
  Validator,
} from "../chain/index.ts";
import { failpoint } from "../faults/index.ts";
import { type HistoryEntry, HistoryIndex, type HistoryQuery } from "./historyIndex.ts";
import {
  beginHistoryRebuild,
  continueHistoryRebuild,
  HISTORY_REBUILD_BATCH_TXS,
  type HistoryRebuildTables,
} from "./historyUpgrade.ts";
import { JOURNAL_FILE, LmdbPoolJournal, migrateSchema3Journal } from "./poolJournal.ts";
import {
  DELETIONS_FROM,
  defaultRetention,
  Pruner,
  type RetentionOptions,
  type RetiredEntry,
} from "./pruning.ts";
import type { ReadView } from "./readView.ts";
import { BlockWriter, type PartedWrite, type SlowBlockWrite } from "./blockWriter.ts";
import {
  type BlockTables,
  PRUNE_FLOOR,
  planBlockWrite,
  planForThread,
  pruneBudget,
} from "./blockWritePlan.ts";
import { PruningWrites } from "./pruningWrites.ts";
import { openSnapshotView, type StoreSnapshotView, writeSnapshot } from "./snapshotTables.ts";
import { ENVIRONMENT_OPTIONS, openTable, SCHEMA_VERSION, type TableName } from "./schema.ts";
import { directWrites, type WriteBatch } from "./writeBatch.ts";

export interface StoreOptions {
  /**
   * Blocks are written by a thread of the store's own (blockWriter.ts), not on the caller's
   * event loop: the loop answers reads and admits transactions meanwhile, at the cost of copying
   * each block's writes to that thread (docs/decisions/018-block-writer-thread.md). Off: each
   * block is written in one synchronous transaction on the caller's thread.
   */
  writeThread?: boolean;
  /** With a writer thread: plan and hand over each block's write in slices this long (planForThread). */
  writeSliceMs?: number;
  /** Transactions per write of the schema-6 upgrade (tests make it small). */
  historyRebuildBatchTxs?: number;
  /**
   * Told of a pruning write that failed (it is tried again after the next block). Unset, the
   * next commitBlock rejects with the error.
   */
  onPruneError?: (error: unknown) => void;
  /** Told of a block write on the thread that has not committed after 5 s, and every 5 s until it does. */
  onSlowBlockWrite?: (report: SlowBlockWrite) => void;
}

/**
 * The node's LMDB environment. Implements the chain's ChainStore (one write transaction per
 * block, durable when the promise resolves) and holds the pool journal (`journal`), whose
 * entries a block's write removes.
 */
export class LmdbStore implements ChainStore {
  private readonly root: RootDatabase;
  private readonly meta: Database<number, string>;
  private readonly blocks: Database<StoredBlock, number>;
  private readonly blockNumbers: Database<number, string>;
  private readonly txs: Database<ConfirmedTx, string>;
  private readonly state: Database<JsonValue, string>;
  private readonly trie: Database<Uint8Array, number>;
  private readonly trieRoots: Database<number, string>;
  private readonly trieRetired: Database<RetiredEntry, number>;
  private readonly stateDeleted: Database<number, string>;
  /** Committed transactions by the accounts they belong to (historyIndex.ts). */
  private readonly history: HistoryIndex;
  private readonly pruner: Pruner;
  /** The pool journal (txpool's PoolJournal), in an LMDB environment of its own (JOURNAL_FILE). */
  readonly journal: LmdbPoolJournal;
  /** The journal entries the blocks of commitTogether's current write leave: removed once it commits. */
  private togetherRemovals: string[] = [];
  private readonly stakes: Database<number, string>;
  private readonly validatorSets: Database<Validator[], number>;
  /** What the next block write waits for (holdWritesUntil); undefined when nothing is held. */
  private writesHeld: Promise<void> | undefined;
  /** True while commitTogether's write transaction is open. */
  private together = false;
  /**
   * While a block's write is in flight on the block writer thread: a read transaction on the
   * commit before it, which every read of this thread goes through (see commitBlock).
   */
  private at: ReadView;
  /** What a block's write touches (blockWritePlan.ts). */
  private readonly tables: BlockTables;
  /** Makes the blocks' writes on a thread of its own, if StoreOptions.writeThread (see commitBlock). */
  private readonly writer: BlockWriter | undefined;
  private readonly writeSliceMs: number | undefined;
  /** The block write in flight on the writer thread, if any; settles when it has ended. */
  private inFlight: Promise<unknown> | undefined;
  /** Pruning in writes of its own after the blocks' (see commitBlock). */
  private readonly pruning: PruningWrites;

  /**
   * Opens (or creates) the environment at `path`, upgrading an older schema first (see
   * StoreOptions).
   */
  constructor(path: string, retention: RetentionOptions = defaultRetention, options: StoreOptions = {}) {
    this.root = open({ path, ...ENVIRONMENT_OPTIONS });
    /** The tables blocks are written to, by name: the writer thread opens the same ones. */
    const written = new Map<TableName, Database<unknown, Key>>();
    const table = <V, K extends Key>(name: TableName): Database<V, K> => {
      const opened = openTable<V, K>(this.root, name);
      written.set(name, opened as Database<unknown, Key>);
      return opened;
    };
    this.meta = table("meta");
    this.blocks = table("blocks");
    this.blockNumbers = table("blockNumbers");
    this.txs = table("txs");
    this.state = table("state");
    this.trie = table("trie");
    this.trieRoots = table("trieRoots");
    this.trieRetired = table("trieRetired");
    this.stateDeleted = table("stateDeleted");
    // Before the journal had an environment of its own (JOURNAL_FILE): moved there below.
    const legacyJournal = openTable<Tx, number>(this.root, "journal");
    this.stakes = table("stakers");
    this.validatorSets = table("validatorSets");
    this.history = new HistoryIndex(table("txByAddress"));
    const rebuild: HistoryRebuildTables = {
      root: this.root,
      meta: this.meta,
      blocks: this.blocks,
      txs: this.txs,
      history: this.history,
    };
    const version = this.meta.get("schema_version");
    if (version === 3) migrateSchema3Journal(this.root, legacyJournal);
    // 3 and 4 → 5 created trie_retired empty (nothing to write: blocks committed before it keep
    // no retired lists, docs/decisions/011-pruning.md); 5 → 6 indexes the stored transactions.
    if (version === 3 || version === 4 || version === 5) beginHistoryRebuild(rebuild, SCHEMA_VERSION);
    else if (version !== undefined && version !== SCHEMA_VERSION) {
      throw new Error(`data directory has schema version ${version}; this node reads ${SCHEMA_VERSION}`);
    }
    // Also when an earlier open was killed in the middle of it.
    continueHistoryRebuild(rebuild, options.historyRebuildBatchTxs ?? HISTORY_REBUILD_BATCH_TXS);
    this.journal = new LmdbPoolJournal(join(path, JOURNAL_FILE));
    this.journal.adopt(legacyJournal);
    this.pruner = new Pruner(
      {
        meta: this.meta,
        blocks: this.blocks,
        blockNumbers: this.blockNumbers,
        txs: this.txs,
        history: this.history,
        trie: this.trie,
        trieRoots: this.trieRoots,
        trieRetired: this.trieRetired,
        stateDeleted: this.stateDeleted,
      },
      retention,
    );
    this.startDeletionRecord();
    this.writer =
      options.writeThread === true ? new BlockWriter(path, written, options.onSlowBlockWrite) : undefined;
    this.writeSliceMs = options.writeSliceMs;
    this.pruning = new PruningWrites(
      { write: (budget) => this.pruneWrite(budget), paused: () => this.together },
      options.onPruneError,
    );
    this.tables = {
      meta: this.meta,
      blocks: this.blocks,
      blockNumbers: this.blockNumbers,
      txs: this.txs,
      state: this.state,
      stateDeleted: this.stateDeleted,
      trie: this.trie,
      trieRoots: this.trieRoots,
      trieRetired: this.trieRetired,
      stakes: this.stakes,
      validatorSets: this.validatorSets,
      history: this.history,
      pruner: this.pruner,
    };
  }

  headNumber(): number | undefined {
    return this.meta.get("head", this.at);
  }

  getBlock(number: number): StoredBlock | undefined {
    if (!Number.isSafeInteger(number) || number < 0 || number > 0xffffffff) return undefined;
    return this.blocks.get(number, this.at);
  }

  getBlockNumber(hash: string): number | undefined {
    return this.blockNumbers.get(hash, this.at);
  }

  getConfirmedTx(hash: string): ConfirmedTx | undefined {
    return this.txs.get(hash, this.at);
  }

  /**
   * Index entries of `address` (0x + 40 hex, any case), newest first, within `query`: committed
   * transactions it sent or received a successful transfer by, in kept blocks.
   */
  addressHistory(address: string, query: HistoryQuery): HistoryEntry[] {
    return this.history.entries(address, query, this.at);
  }

  getLeaf(path: string): JsonValue | undefined {
    return this.state.get(path, this.at);
  }

  *leafPathsBelow(path: string): Iterable<string> {
    // "/" is 0x2f and "0" is 0x30: every key that starts with `${path}/` sorts between the two.
    for (const key of this.state.getKeys({ start: `${path}/`, end: `${path}0`, ...this.at })) yield key;
  }

  /** The head's leaves strictly below `path`, with their values, in key order. */
  *leavesBelow(path: string): Iterable<readonly [string, JsonValue]> {
    for (const { key, value } of this.state.getRange({ start: `${path}/`, end: `${path}0`, ...this.at }))
      yield [key, value];
  }

  /** Paths strictly below `path` that a block from deletionsFrom() on deleted, in key order. */
  *deletedPathsBelow(path: string): Iterable<string> {
    const range = { start: `${path}/`, end: `${path}0`, ...this.at };
    for (const key of this.stateDeleted.getKeys(range)) yield key;
  }

  /** The first height whose deletions are recorded: subtrees can be listed at heights from it. */
  deletionsFrom(): number {
    return this.meta.get(DELETIONS_FROM, this.at) ?? 0;
  }

  *stakers(): Iterable<Validator> {
    for (const { key, value } of this.stakes.getRange({ ...this.at })) yield { address: key, stake: value };
  }

  validatorSetAt(height: number): Validator[] | undefined {
    if (!Number.isSafeInteger(height) || height < 0) return undefined;
    const start = Math.min(height, 0xffffffff);
    const range = { start, reverse: true, limit: 1, ...this.at };
    for (const { value } of this.validatorSets.getRange(range)) return value;
    return undefined;
  }

  getTrieNode(id: number): Uint8Array | undefined {
    return this.trie.get(id, this.at);
  }

  getTrieRoot(rootHex: string): number | undefined {
    return this.trieRoots.get(rootHex, this.at);
  }

  /** Lowest height whose state is kept whole (0: all of them); lower ones were pruned. */
  statesFrom(): number {
    return this.pruner.statesFrom(this.at);
  }

  /** Lowest block number above 0 that is kept (1: none pruned); block 0 is always kept. */
  blocksFrom(): number {
    return this.pruner.blocksFrom(this.at);
  }

  /**
   * The data file's extent in pages: one past the highest page ever written. Pages that pruning
   * frees go to LMDB's free list and are reused by later writes before the file grows, so with
   * pruning on this stays flat under a steady load.
   */
  usedPages(): { pages: number; pageSize: number } {
    const stats = this.root.getStats() as { lastPageNumber: number; pageSize: number };
    return { pages: stats.lastPageNumber + 1, pageSize: stats.pageSize };
  }

  nextTrieNodeId(): number {
    for (const id of this.trie.getKeys({ reverse: true, limit: 1, ...this.at })) return id + 1;
    return 0;
  }

  /**
   * Writes the block, its indexes, state and trie nodes and the new head in one write
   * transaction, durable when this resolves (planBlockWrite says what it writes), then removes
   * `write.journalRemovals` from the pool journal (`unjournal`):
   * - without a writer thread, or inside commitTogether (a child transaction of its write), in a
   *   synchronous transaction on this thread: store, head and pool change in one turn;
   * - with one (StoreOptions.writeThread), planned into a WriteBatch on this thread (reads of
   *   committed data, nothing written; in slices with StoreOptions.writeSliceMs) and made by
   *   that thread, while this one answers reads and admits. The chain moves its head, and the
   *   pool drops the block's transactions, only once this resolves, but the thread's commit is
   *   visible to new read transactions before that: so until then every read of this store goes
   *   through a read transaction on the commit before it (`at`), and nothing shows a transaction
   *   in block N while the head is still N-1.
   */
  async commitBlock(write: BlockWrite): Promise<void> {
    // Only while a hold is on: otherwise the write begins in this very turn, as it always has.
    if (!this.together && this.writesHeld !== undefined) await this.writesHeld;
    const pruneError = this.pruning.takeError();
    if (pruneError !== undefined) throw pruneError;
    if (this.writer !== undefined && !this.together) {
      const plan = await planForThread(this.tables, write, this.writer, this.writeSliceMs);
      await this.writeAside(plan.parted, plan.rest);
    } else if (this.together) {
      this.root.transactionSync(() => planBlockWrite(this.tables, write, directWrites, true));
      this.togetherRemovals.push(...write.journalRemovals);
    } else {
      // The last block's pruning write first, if it has not ended: under way, it holds LMDB's
      // writer (awaited here, this thread goes on serving instead of blocking on the lock); still
      // due, it was never given a turn (blocks back to back, as an import makes them), and
      // without this, pruning would wait for the first idle moment however much was owed.
      await this.pruning.settled();
      const { written } = this.root.transactionSync(() =>
        planBlockWrite(this.tables, write, directWrites, false),
      );
      // Owed, made PRUNE_DELAY_MS later in a write of its own (pruningWrites.ts, decision 011).
      if (this.pruner.prunes) this.pruning.owe(pruneBudget(written));
    }
    if (!this.together) this.unjournal(write.journalRemovals);
    failpoint("commit.afterTxnCommit");
  }

  /**
   * The journal entries of durably committed transactions leave, in a journal write that the
   * block's commit does not wait for. One that fails (or a kill before it) leaves entries the
   * pool's restore drops as already committed.
   */
  private unjournal(hashes: readonly string[]): void {
    if (hashes.length > 0) this.journal.removePending(hashes).catch(() => undefined);
  }

  /**
   * Owes a floor's worth of pruning (PRUNE_FLOOR), and so begins catching up with what is due
   * without waiting for a block: for the node once its store is open, where a kill inside a
   * pruning write undid one, or a stop left some owed. Not in the constructor: a tool that opens a
   * node's store with other retention options must not prune it.
   */
  resumePruning(): void {
    if (this.pruner.prunes && this.headNumber() !== undefined) this.pruning.owe(PRUNE_FLOOR);
  }

  /**
   * One pruning write in an lmdb-js asynchronous child transaction: its deletions are made on
   * this thread, its commit and flush on lmdb-js's writer thread. A child transaction because,
   * unlike lmdb-js's plain asynchronous one, a callback that throws rolls it back (a failed
   * pruning write leaves nothing of itself behind). Resolves whether more may be due.
   */
  private async pruneWrite(budget: number): Promise<boolean> {
    let more = false;
    await this.root.childTransaction(() => {
      const head = this.headNumber();
      if (head !== undefined) more = this.pruner.prune(directWrites, head, budget);
    });
    return more;
  }

  /** Resolves once no pruning write is under way or due (close; tests). */
  pruned(): Promise<void> {
    return this.pruning.settled();
  }

  /**
   * Makes `parted` on the writer thread (its parts sent, `rest` not yet); reads see the commit
   * before it until it resolves.
   */
  private async writeAside(parted: PartedWrite, rest: WriteBatch): Promise<void> {
    if (this.inFlight !== undefined) throw new Error("commitBlock: a block's write is already under way");
    const transaction = this.root.useReadTransaction();
    this.at = { transaction };
    try {
      const { done } = parted.write(rest);
      this.inFlight = done.catch(() => undefined);
      await done;
    } finally {
      // The next read renews this thread's read transaction, and so sees the block.
      this.root.resetReadTxn();
      this.at = undefined;
      this.inFlight = undefined;
      transaction.done();
    }
  }

  /**
   * Runs `step` on each of `items` in order until one returns false; the blocks the steps commit
   * share LMDB write transactions instead of one each. lmdb-js keeps a transaction open while its
   * asynchronous callback runs, each commitBlock inside runs as a child transaction (a block still
   * commits or aborts whole), and reads on this thread see what it wrote. Pages that several
   * blocks touch (the state's and indexes' B-tree pages, the trie's top) are written once
   * (docs/performance.md). Returns how many steps returned true; every block they committed is
   * durable when it resolves.
   *
   * A step that throws ends the write (its blocks are kept) and this rejects with its error; a
   * write whose commit fails rejects, and none of its blocks is stored (those of earlier writes
   * are). The journal entries of its blocks' transactions leave once it has committed.
   *
   * The pool journal writes in an environment of its own, so submissions are journaled and
   * acknowledged while a range's write holds this one's writer (seconds of execution). Before,
   * they waited for it, and a write began while one of theirs held the writer blocked this thread
   * for good: lmdb-js runs an asynchronous transaction's callback on this thread once its writer
   * thread has the lock (test/unit/storage/commitTogether.test.ts submits during a range). Pruning
   * writes still share the writer: a write begins once they have ended, and none begins meanwhile.
   */
  async commitTogether<T>(items: readonly T[], step: (item: T) => Promise<boolean>): Promise<number> {
    if (this.together) throw new Error("commitTogether: already inside one");
    // Its reads and writes are this thread's own transaction's: not while a block's is in flight.
    while (this.inFlight !== undefined) await this.inFlight;
    let done = 0;
    let goOn = true;
    while (goOn && done < items.length) {
      if (this.writesHeld !== undefined) await this.writesHeld;
      let failure: { error: unknown } | undefined;
      this.together = true;
      this.togetherRemovals = [];
      try {
        // A pruning write is asynchronous (see above): ended first; none begins while `together`.
        await this.pruning.settled();
        await this.root.transactionSync(async () => {
          try {
            while (done < items.length) {
              goOn = await step(items[done] as T);
              if (!goOn) return;
              done++;
            }
          } catch (error) {
            // Caught, so that the transaction commits the blocks of the steps before it.
            failure = { error };
          }
        });
        this.unjournal(this.togetherRemovals);
      } finally {
        this.togetherRemovals = [];
        this.together = false;
      }
      if (failure !== undefined) throw failure.error;
    }
    return done;
  }

  /**
   * A store made before `state_deleted` existed holds no record of what its blocks deleted:
   * subtrees can be listed from its next block on. A new store records from genesis.
   */
  private startDeletionRecord(): void {
    if (this.meta.get(DELETIONS_FROM) !== undefined) return;
    const head = this.headNumber();
    this.root.transactionSync(() => this.meta.put(DELETIONS_FROM, head === undefined ? 0 : head + 1));
  }

  /**
   * A consistent read view (one LMDB read transaction) for taking a snapshot of the head, in this
   * thread (tests, tools). The node's periodic snapshots open theirs on a thread of their own
   * (openSnapshotSource), and `snapshot create` through ReadOnlyStore.
   */
  snapshotView(): StoreSnapshotView {
    return openSnapshotView(this.root, this.tables);
  }

  /**
   * The next block write (commitBlock, commitTogether) begins only once `until` settles: a
   * snapshot taken on another thread opens its read transaction meanwhile, so that it reads
   * exactly the block just committed (node/snapshots.ts). `until` must settle soon, and never
   * reject.
   */
  holdWritesUntil(until: Promise<void>): void {
    const held: Promise<void> = Promise.all([this.writesHeld, until]).then(() => {
      if (this.writesHeld === held) this.writesHeld = undefined;
    });
    this.writesHeld = held;
  }

  /** Writes a checked snapshot into a store without chain data (see writeSnapshot). */
  restoreSnapshot(restore: SnapshotRestore): void {
    writeSnapshot(this.root, this.tables, restore);
  }

  /** Makes the pruning owed first (one bounded write), so that a clean stop leaves none behind. */
  async close(): Promise<void> {
    await this.pruning.stop();
    await this.inFlight;
    await this.writer?.close();
    await this.journal.close();
    await this.root.close();
  }
}
