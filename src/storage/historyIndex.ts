import type { Database } from "lmdb";
import { type ConfirmedTx, historyAddresses, historyAddressesExecuted } from "../chain/index.ts";
import { bytesToHex, hexToBytes } from "../crypto/index.ts";
import type { ReadView } from "./readView.ts";
import type { TableWrites } from "./writeBatch.ts";

/**
 * The history index (`tx_by_address`, docs/decisions/013-history-index.md): one entry per
 * committed transaction and account it belongs to (chain/history.ts), keyed
 *
 *     address (20 bytes) ‖ block number (uint32 BE) ‖ index in the block (uint32 BE)
 *
 * with the transaction's hash (32 bytes) as value. Big-endian numbers sort as numbers, so one
 * account's entries are contiguous and in chain order, and a page, newest first from any
 * position, is one reverse range read of `limit` entries whatever the account's size.
 */

const ADDRESS_BYTES = 20;
const KEY_BYTES = ADDRESS_BYTES + 8;
const MAX_UINT32 = 0xffffffff;

/** A place in the chain: a block and a transaction's index in it. */
export interface HistoryPosition {
  block: number;
  index: number;
}

export interface HistoryEntry extends HistoryPosition {
  /** The transaction's hash (0x + 64 lower-case hex). */
  hash: string;
}

export interface HistoryQuery {
  /** The lowest block listed. */
  fromBlock: number;
  /** The newest position listed (inclusive): entries come from here down. */
  upTo: HistoryPosition;
  /** Entries at most. */
  limit: number;
}

function historyKey(address: Uint8Array, block: number, index: number): Uint8Array {
  const key = new Uint8Array(KEY_BYTES);
  key.set(address, 0);
  const view = new DataView(key.buffer);
  view.setUint32(ADDRESS_BYTES, block);
  view.setUint32(ADDRESS_BYTES + 4, index);
  return key;
}

const clampUint32 = (n: number): number => Math.max(0, Math.min(MAX_UINT32, Math.floor(n)));

/** Reads and writes `tx_by_address`; the caller's `writes` make (or record) its writes. */
export class HistoryIndex {
  private readonly table: Database<Uint8Array, Uint8Array>;

  constructor(table: Database<Uint8Array, Uint8Array>) {
    this.table = table;
  }

  /**
   * Indexes committed transactions; returns the entries written. `credited`, by position, is what
   * execution found each one credited (BlockWrite.credited); without it the accounts are
   * recomputed from the transaction (a restored snapshot's block).
   */
  add(writes: TableWrites, txs: readonly ConfirmedTx[], credited?: readonly (string | undefined)[]): number {
    let written = 0;
    for (const [i, confirmed] of txs.entries()) {
      const hash = hexToBytes(confirmed.tx.hash);
      const accounts =
        credited === undefined
          ? historyAddresses(confirmed.tx, confirmed.result)
          : historyAddressesExecuted(confirmed.tx, credited[i]);
      for (const key of this.keysFor(confirmed, accounts)) {
        writes.put(this.table, key, hash);
        written++;
      }
    }
    return written;
  }

  /** Removes the entries of committed transactions (their block is being pruned); returns how many. */
  remove(writes: TableWrites, txs: Iterable<ConfirmedTx>): number {
    let removed = 0;
    for (const confirmed of txs) {
      for (const key of this.keysOf(confirmed)) {
        writes.remove(this.table, key);
        removed++;
      }
    }
    return removed;
  }

  /** The entries of `address` (0x + 40 hex, any case), newest first, as `query` bounds them. */
  entries(address: string, query: HistoryQuery, at?: ReadView): HistoryEntry[] {
    const account = hexToBytes(address);
    const fromBlock = clampUint32(query.fromBlock);
    const upTo = { block: clampUint32(query.upTo.block), index: clampUint32(query.upTo.index) };
    if (query.limit <= 0 || upTo.block < fromBlock) return [];
    const range = this.table.getRange({
      // Reverse: `start` is the highest key, included; `end` excluded (the account's block
      // `fromBlock - 1`, index max: everything of `fromBlock` and above stays in).
      start: historyKey(account, upTo.block, upTo.index),
      end:
        fromBlock === 0
          ? account // the bare address sorts below every key that starts with it
          : historyKey(account, fromBlock - 1, MAX_UINT32),
      reverse: true,
      limit: query.limit,
      ...at,
    });
    const out: HistoryEntry[] = [];
    for (const { key, value } of range) {
      const view = new DataView(key.buffer, key.byteOffset, key.byteLength);
      out.push({
        block: view.getUint32(ADDRESS_BYTES),
        index: view.getUint32(ADDRESS_BYTES + 4),
        hash: bytesToHex(value),
      });
    }
    return out;
  }

  private keysOf(confirmed: ConfirmedTx): Uint8Array[] {
    return this.keysFor(confirmed, historyAddresses(confirmed.tx, confirmed.result));
  }

  private keysFor(confirmed: ConfirmedTx, accounts: readonly string[]): Uint8Array[] {
    return accounts.map((address) =>
      historyKey(hexToBytes(address), confirmed.block_number, confirmed.index),
    );
  }
}
