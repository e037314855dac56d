import type { Database } from "lmdb";
import type { ConfirmedTx, StoredBlock } from "../chain/index.ts";
import { failpoint } from "../faults/index.ts";
import type { HistoryIndex } from "./historyIndex.ts";

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
 * Deletes what the retention options no longer keep, a bounded amount at a time, inside the
 * write transaction of a block (so a crash keeps the deletions and the markers together).
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

  /** Whether blocks record what they retire (only then can their states be pruned later). */
  get prunesStates(): boolean {
    return this.options.retainStates > 0;
  }

  /** Lowest height whose state trie is whole (0: every state since genesis). */
  statesFrom(): number {
    return this.tables.meta.get(STATES_FROM) ?? 0;
  }

  /** Lowest block number above 0 that is stored; blocks from 1 below it were pruned. */
  blocksFrom(): number {
    return this.tables.meta.get(BLOCKS_FROM) ?? 1;
  }

  /** Called in the write transaction of block `head`; deletes at most about `budget` entries. */
  prune(head: number, budget: number): void {
    let left = budget;
    if (this.options.retainStates > 0) left = this.pruneStates(head - this.options.retainStates + 1, left);
    if (this.options.retainBlocks > 0) this.pruneBlocks(head - this.options.retainBlocks + 1, left);
  }

  private pruneStates(keepFrom: number, budget: number): number {
    const { meta, trie, trieRoots, trieRetired, stateDeleted } = this.tables;
    let left = budget;
    // Nothing is old enough yet (and a negative bound would wrap as a uint32 key).
    if (keepFrom <= 0) return left;
    while (left > 0) {
      const next = first(trieRetired.getRange({ end: keepFrom + 1, limit: 1 }));
      if (next === undefined) break;
      const { key: height, value: entry } = next;
      if (this.statesFrom() < height) meta.put(STATES_FROM, height);
      const count = entry.ids.length / ID_BYTES;
      const upTo = Math.min(count, left);
      for (let i = 0; i < upTo; i++) trie.remove(idAt(entry.ids, i));
      left -= upTo;
      failpoint("prune.afterNodeDeletes");
      if (upTo < count) {
        trieRetired.put(height, { ...entry, ids: entry.ids.slice(upTo * ID_BYTES) });
        break;
      }
      if (entry.root !== undefined && trieRoots.get(entry.root) === entry.rootId)
        trieRoots.remove(entry.root);
      // A later deletion of the same path moved its entry on: that one is still needed.
      const deleted = entry.deleted ?? [];
      for (const path of deleted) if (stateDeleted.get(path) === height) stateDeleted.remove(path);
      trieRetired.remove(height);
      left -= 1 + deleted.length;
    }
    return left;
  }

  private pruneBlocks(keepFrom: number, budget: number): void {
    const { meta, blocks, blockNumbers, txs, history } = this.tables;
    let left = budget;
    let number = this.blocksFrom();
    while (number < keepFrom && left > 0) {
      const block = blocks.get(number);
      if (block !== undefined) {
        // The entries' keys are recomputed from the transactions (their accounts, block, index).
        const confirmed = block.tx_hashes.flatMap((hash) => txs.get(hash) ?? []);
        const unindexed = history.remove(confirmed);
        for (const hash of block.tx_hashes) txs.remove(hash);
        blockNumbers.remove(block.hash);
        blocks.remove(number);
        left -= 1 + block.tx_hashes.length + unindexed;
      }
      number += 1;
      meta.put(BLOCKS_FROM, number);
      failpoint("prune.afterBlockDelete");
    }
  }
}

function first<T>(range: Iterable<T>): T | undefined {
  for (const item of range) return item;
  return undefined;
}
