import type { Database } from "lmdb";
import type { ConfirmedTx, StoredBlock } from "../chain/index.ts";
import type { HistoryIndex } from "./historyIndex.ts";
import type { ReadView } from "./readView.ts";
import type { TableWrites } from "./writeBatch.ts";

/** How much history a node keeps (docs/decisions/011-pruning.md). */
export interface RetentionOptions {
  /**
   * Recent states whose trie nodes are kept: the head's and the `retainStates - 1` before it.
   * 0 keeps every state (archive).
   */
  retainStates: number;
  /** Recent blocks kept, the head's included; block 0 is always kept. 0 keeps every block. */
  retainBlocks: number;
}

export const defaultRetention: RetentionOptions = { retainStates: 128, retainBlocks: 0 };

/**
 * Smallest non-zero retention. Two states: a read of the head's parent that races a commit
 * still finds its nodes. Two blocks: the head's parent, which the next block's certificate
 * rewrites, is always there.
 */
export const MIN_RETAIN = 2;

/** What a block retired from the state trie: its parent's root entry and the nodes only it reached. */
export interface RetiredEntry {
  /** The parent's state root and its node id, when this block's root differs from it. */
  root?: string;
  rootId?: number;
  /** 6-byte big-endian node ids, packed. */
  ids: Uint8Array;
  /**
   * State leaves this block deleted: their `state_deleted` entries (if still this height's) go
   * with the states below it, the only ones that could hold them.
   */
  deleted?: string[];
}

const ID_BYTES = 6;

export function packIds(ids: readonly number[]): Uint8Array {
  const out = new Uint8Array(ids.length * ID_BYTES);
  const view = new DataView(out.buffer);
  ids.forEach((id, i) => {
    view.setUint16(i * ID_BYTES, Math.floor(id / 2 ** 32));
    view.setUint32(i * ID_BYTES + 2, id >>> 0);
  });
  return out;
}

function idAt(packed: Uint8Array, i: number): number {
  const view = new DataView(packed.buffer, packed.byteOffset, packed.byteLength);
  return view.getUint16(i * ID_BYTES) * 2 ** 32 + view.getUint32(i * ID_BYTES + 2);
}

/** The databases pruning deletes from; all belong to the store's environment. */
export interface PrunedTables {
  meta: Database<number, string>;
  blocks: Database<StoredBlock, number>;
  blockNumbers: Database<number, string>;
  txs: Database<ConfirmedTx, string>;
  /** A pruned block's transactions leave the history index with it. */
  history: HistoryIndex;
  trie: Database<Uint8Array, number>;
  trieRoots: Database<number, string>;
  /** Height d → what block d retired: nodes that only states below d reach. */
  trieRetired: Database<RetiredEntry, number>;
  /** Leaf path → height of the block that last deleted it. */
  stateDeleted: Database<number, string>;
}

/** meta keys: the lowest height whose state is whole, and the lowest block above 0 kept. */
export const STATES_FROM = "states_from";
export const BLOCKS_FROM = "blocks_from";
/** meta key: the first height whose deleted leaves `state_deleted` records. */
export const DELETIONS_FROM = "deletions_from";

/**
 * Deletes what the retention options no longer keep, a bounded amount at a time, in the write
 * of a block (so a crash keeps the deletions and the markers together).
 *
 * States: the nodes block d retired are reached only by states below d, so once d is at or below
 * the lowest kept height they go, and `states_from` moves to d first: a reader of a height below
 * it gets `pruned`, never a half-deleted trie. Blocks go with their transactions, hash index
 * and history index entries, oldest first, moving `blocks_from`.
 */
export class Pruner {
  private readonly tables: PrunedTables;
  private readonly options: RetentionOptions;

  constructor(tables: PrunedTables, options: RetentionOptions) {
    for (const [key, value] of Object.entries(options)) {
      if (!Number.isSafeInteger(value) || value < 0 || (value > 0 && value < MIN_RETAIN)) {
        throw new Error(`${key} must be 0 (keep all) or at least ${MIN_RETAIN}, not ${value}`);
      }
    }
    this.tables = tables;
    this.options = options;
  }

  /** Whether anything is ever pruned. */
  get prunes(): boolean {
    return this.options.retainStates > 0 || this.options.retainBlocks > 0;
  }

  /** Whether blocks record what they retire (only then can their states be pruned later). */
  get prunesStates(): boolean {
    return this.options.retainStates > 0;
  }

  /** Lowest height whose state trie is whole (0: every state since genesis). */
  statesFrom(at?: ReadView): number {
    return this.tables.meta.get(STATES_FROM, at) ?? 0;
  }

  /** Lowest block number above 0 that is stored; blocks from 1 below it were pruned. */
  blocksFrom(at?: ReadView): number {
    return this.tables.meta.get(BLOCKS_FROM, at) ?? 1;
  }

  /**
   * Records in `writes` deletions of what the retention options no longer keep at head `head`:
   * at most about `budget` entries of old states, and as many of old blocks. Each has its own
   * budget: a block is deleted whole once begun, so any budget takes the oldest due block and
   * blocks keep pace one for one, even while a backlog of states takes all of its share.
   *
   * Inside the write of block `head` (`block` names what that write puts that an old entry's
   * deletion must not undo; reads see the store before it), or in a write of its own once head
   * is committed (`block` empty: reads see everything). Returns whether a share ran out: more
   * may be due.
   */
  prune(
    writes: TableWrites,
    head: number,
    budget: number,
    block: PrunedBlockWrites = NO_BLOCK_WRITES,
  ): boolean {
    let more = false;
    if (this.options.retainStates > 0)
      more = this.pruneStates(writes, head - this.options.retainStates + 1, budget, block) || more;
    if (this.options.retainBlocks > 0)
      more = this.pruneBlocks(writes, head - this.options.retainBlocks + 1, budget, block) || more;
    return more;
  }

  /** Returns whether the budget ran out. */
  private pruneStates(
    writes: TableWrites,
    keepFrom: number,
    budget: number,
    block: PrunedBlockWrites,
  ): boolean {
    const { meta, trie, trieRoots, trieRetired, stateDeleted } = this.tables;
    let left = budget;
    // Nothing is old enough yet (and a negative bound would wrap as a uint32 key).
    if (keepFrom <= 0) return false;
    let statesFrom = this.statesFrom();
    for (const { key: height, value: entry } of trieRetired.getRange({ end: keepFrom + 1 })) {
      if (left <= 0) return true;
      if (statesFrom < height) {
        writes.put(meta, STATES_FROM, height);
        statesFrom = height;
      }
      const count = entry.ids.length / ID_BYTES;
      const upTo = Math.min(count, left);
      for (let i = 0; i < upTo; i++) writes.remove(trie, idAt(entry.ids, i));
      left -= upTo;
      writes.failpoint("prune.afterNodeDeletes");
      if (upTo < count) {
        writes.put(trieRetired, height, { ...entry, ids: entry.ids.slice(upTo * ID_BYTES) });
        return true;
      }
      // The block's own state may have the same root as this old one (the same leaves again).
      if (entry.root !== undefined && entry.root !== block.root && trieRoots.get(entry.root) === entry.rootId)
        writes.remove(trieRoots, entry.root);
      // A later deletion of the same path moved its entry on: that one is still needed.
      const deleted = entry.deleted ?? [];
      for (const path of deleted) {
        if (!block.deleted.has(path) && stateDeleted.get(path) === height) writes.remove(stateDeleted, path);
      }
      writes.remove(trieRetired, height);
      left -= 1 + deleted.length;
    }
    return false;
  }

  /** Returns whether the budget ran out. */
  private pruneBlocks(
    writes: TableWrites,
    keepFrom: number,
    budget: number,
    block: PrunedBlockWrites,
  ): boolean {
    const { meta, blocks, blockNumbers, txs, history } = this.tables;
    let left = budget;
    let number = this.blocksFrom();
    // Built only when a block is pruned: most writes prune none.
    let fresh: Set<string> | undefined;
    while (number < keepFrom && left > 0) {
      const old = blocks.get(number);
      if (old !== undefined) {
        // An unordered transaction whose old block is pruned here may be in the new block again:
        // its entry is then the new block's.
        fresh ??= new Set(block.txHashes);
        const kept = fresh;
        // A write of its own sees the entry the new block made instead of the old block's.
        const confirmed = old.tx_hashes.flatMap((hash) => {
          const entry = kept.has(hash) ? undefined : txs.get(hash);
          return entry?.block_number === number ? [entry] : [];
        });
        // The entries' keys are recomputed from the transactions (their accounts, block, index).
        const unindexed = history.remove(writes, confirmed);
        for (const entry of confirmed) writes.remove(txs, entry.tx.hash);
        writes.remove(blockNumbers, old.hash);
        writes.remove(blocks, number);
        left -= 1 + old.tx_hashes.length + unindexed;
      }
      number += 1;
      writes.put(meta, BLOCKS_FROM, number);
      writes.failpoint("prune.afterBlockDelete");
    }
    return number < keepFrom;
  }
}

/** What the write of the block being committed puts that pruning's deletions must leave alone. */
export interface PrunedBlockWrites {
  /** The block's state root (its `trie_roots` entry). */
  root: string | undefined;
  /** Leaf paths the block deletes (their `state_deleted` entries become the block's). */
  deleted: ReadonlySet<string>;
  /** The block's transactions (their `txs` entries). */
  txHashes: readonly string[];
}

/** For a prune in a write of its own: no block is being written beside it. */
const NO_BLOCK_WRITES: PrunedBlockWrites = { root: undefined, deleted: new Set(), txHashes: [] };
