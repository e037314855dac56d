import type { Database } from "lmdb";
import {
  type BlockWrite,
  type ConfirmedTx,
  type JsonValue,
  runSteps,
  type StoredBlock,
  TimeSlices,
  type Validator,
} from "../chain/index.ts";
import type { BlockWriter, PartedWrite } from "./blockWriter.ts";
import type { HistoryIndex } from "./historyIndex.ts";
import { packIds, type Pruner, type RetiredEntry } from "./pruning.ts";
import { SCHEMA_VERSION } from "./schema.ts";
import { type TableWrites, WriteBatch } from "./writeBatch.ts";

/**
 * Entries pruning may delete for one block, of old states and again of old blocks (see
 * Pruner.prune): twice what the block wrote, so that it gains on a steady load (a block retires
 * about as many trie nodes as it writes), and a floor's worth more, so that a chain that is
 * quiet or idle catches up with a backlog.
 *
 * Where it runs (LmdbStore): in a write of its own just after the block's, while the node waits
 * for the network, and not in the block's write. A backlog's nodes are scattered over the trie
 * table, each deletion rewrites a page of its own, and after a burst of full blocks pruning in
 * the block's write took a 23-transfer block's commit from 17 ms (no pruning) to 37–40 ms (31–35
 * with no floor for blocks with transactions), on every height's critical path for the next
 * hundreds of heights (docs/performance.md, fifth stop of 2026-11-26). Blocks committed together
 * (a synced range) still prune in their own write, without the floor unless empty: that write
 * is one long one anyway.
 */
export const PRUNE_FLOOR = 2_000;
export const pruneBudget = (written: number): number => 2 * written + PRUNE_FLOOR;
const inBlockPruneBudget = (written: number, txs: number): number =>
  2 * written + (txs === 0 ? PRUNE_FLOOR : 0);

/** What a block's write touches: the store's tables, its history index, journal and pruner. */
export interface BlockTables {
  meta: Database<number, string>;
  blocks: Database<StoredBlock, number>;
  blockNumbers: Database<number, string>;
  txs: Database<ConfirmedTx, string>;
  state: Database<JsonValue, string>;
  stateDeleted: Database<number, string>;
  trie: Database<Uint8Array, number>;
  trieRoots: Database<number, string>;
  trieRetired: Database<RetiredEntry, number>;
  stakes: Database<number, string>;
  validatorSets: Database<Validator[], number>;
  history: HistoryIndex;
  pruner: Pruner;
}

/** What planBlockWrite did beside writing the block. */
export interface PlannedBlockWrite {
  /** Entries it wrote (transactions, history index entries, trie nodes): what pruning keeps pace with. */
  written: number;
}

/** Items (transactions, state changes, trie nodes) planBlockWriteSteps plans between two yields. */
const ITEMS_PER_STEP = 256;

/**
 * Writes `write`'s block by `batch`: at once inside the caller's write transaction
 * (directWrites), or recorded in a WriteBatch to be made later (it then reads committed data
 * only and writes nothing, so it may throw without leaving a partial write). Its reads never
 * depend on its own writes. Prunes in the same write if `pruneInBlock` (see PRUNE_FLOOR).
 */
export function planBlockWrite(
  tables: BlockTables,
  write: BlockWrite,
  batch: TableWrites,
  pruneInBlock: boolean,
): PlannedBlockWrite {
  return runSteps(planBlockWriteSteps(tables, write, batch, pruneInBlock));
}

/**
 * planBlockWrite's work, yielding after every ITEMS_PER_STEP items of a kind: a plan recorded in
 * a WriteBatch may be made in slices (LmdbStore.commitBlock), the committed data it reads staying
 * as it was until the block's own write (block writes are sequential).
 */
function* planBlockWriteSteps(
  tables: BlockTables,
  write: BlockWrite,
  batch: TableWrites,
  pruneInBlock: boolean,
): Generator<void, PlannedBlockWrite, void> {
  const { block } = write;
  batch.put(tables.blocks, block.header.number, block);
  if (write.parent !== undefined) batch.put(tables.blocks, write.parent.header.number, write.parent);
  batch.put(tables.blockNumbers, block.hash, block.header.number);
  let indexed = 0;
  for (let start = 0; start < write.txs.length; start += ITEMS_PER_STEP) {
    const txs = write.txs.slice(start, start + ITEMS_PER_STEP);
    for (const confirmed of txs) batch.put(tables.txs, confirmed.tx.hash, confirmed);
    indexed += tables.history.add(batch, txs, write.credited?.slice(start, start + ITEMS_PER_STEP));
    yield;
  }
  batch.failpoint("commit.afterBlockWrites");
  const deleted: string[] = [];
  let items = 0;
  for (const [path, value] of write.stateChanges) {
    if (value !== null) batch.put(tables.state, path, value);
    // A change to null may name a path that held nothing (SET_VALUE clears its target first).
    else if (tables.state.doesExist(path)) {
      batch.remove(tables.state, path);
      batch.put(tables.stateDeleted, path, block.header.number);
      deleted.push(path);
    }
    if (++items % ITEMS_PER_STEP === 0) yield;
  }
  // Ids only grow, so these land at the end of the table: appended pages, not rewritten ones.
  let written = write.txs.length + indexed;
  for (const [id, record] of write.trie.nodes) {
    batch.put(tables.trie, id, record);
    if (++written % ITEMS_PER_STEP === 0) yield;
  }
  if (tables.pruner.prunesStates) recordRetired(tables, batch, write, deleted);
  if (write.trie.root !== undefined) batch.put(tables.trieRoots, write.trie.root.hash, write.trie.root.id);
  for (const [address, stake] of write.stakeChanges) {
    if (stake === 0) batch.remove(tables.stakes, address);
    else batch.put(tables.stakes, address, stake);
  }
  if (write.validatorSet !== undefined) {
    batch.put(tables.validatorSets, write.validatorSet.fromHeight, write.validatorSet.validators);
  }
  batch.failpoint("commit.afterStateWrites");
  if (pruneInBlock) {
    yield;
    tables.pruner.prune(batch, block.header.number, inBlockPruneBudget(written, write.txs.length), {
      root: write.trie.root?.hash,
      deleted: new Set(deleted),
      txHashes: block.tx_hashes,
    });
  }
  batch.put(tables.meta, "head", block.header.number);
  batch.put(tables.meta, "schema_version", SCHEMA_VERSION);
  batch.failpoint("commit.afterHeadWrite");
  return { written };
}

/** Writes recorded by a sliced plan (planForThread) that go to the writer thread as one part. */
const OPS_PER_PART = 2_048;

/**
 * Plans `write` for the writer thread (the block's pruning included): in one piece, or, with
 * `sliceMs`, in slices of the event loop, each part of the plan sent to the thread as it is
 * recorded (BlockWriter.begin). For 5,000 transfers the plan, its encoding into messages and their
 * copying take ~10 ms each (docs/performance.md); in slices, requests are answered in between.
 * Resolves to the write begun and the batch's rest, which `parted.write` sends to make it all.
 */
export async function planForThread(
  tables: BlockTables,
  write: BlockWrite,
  writer: BlockWriter,
  sliceMs: number | undefined,
): Promise<{ planned: PlannedBlockWrite; parted: PartedWrite; rest: WriteBatch }> {
  const batch = new WriteBatch();
  const parted = writer.begin();
  const steps = planBlockWriteSteps(tables, write, batch, true);
  if (sliceMs === undefined) return { planned: runSteps(steps), parted, rest: batch };
  const slices = new TimeSlices(sliceMs);
  for (;;) {
    const step = steps.next();
    if (step.done) return { planned: step.value, parted, rest: batch };
    if (batch.size >= OPS_PER_PART) parted.sendPart(batch);
    await slices.pause();
  }
}

/**
 * Notes what `write`'s block retired from the trie: its nodes, and its parent's root entry when
 * the root changed (an empty block keeps its parent's root, which then retires nothing).
 */
function recordRetired(tables: BlockTables, batch: TableWrites, write: BlockWrite, deleted: string[]): void {
  const { block, trie } = write;
  const entry: RetiredEntry = { ids: packIds(trie.retired) };
  if (deleted.length > 0) entry.deleted = deleted;
  if (trie.parent !== undefined && trie.parent.hash !== trie.root?.hash) {
    Object.assign(entry, { root: trie.parent.hash, rootId: trie.parent.id });
  }
  if (entry.ids.length > 0 || entry.root !== undefined)
    batch.put(tables.trieRetired, block.header.number, entry);
}
