import { type Database, open, type RootDatabase } from "lmdb";
import type { Tx } from "../chain/index.ts";
import { failpoint } from "../faults/index.ts";
import { ENVIRONMENT_OPTIONS, openTable } from "./schema.ts";

/** A journaled pool entry; `seq` restores arrival order after a restart. */
export interface PoolRecord {
  seq: number;
  tx: Tx;
}

/**
 * The journal's LMDB environment: a file of its own beside the chain's (`data/journal.mdb`, and
 * LMDB's `journal.mdb-lock`), not a table of the chain's environment (docs/decisions/
 * 023-pool-journal-environment.md). LMDB has one writer per environment: in the chain's, a
 * submission's journal write waited for the block write under way (a dev node's full block:
 * ~230 ms on the writer thread; a synced range: seconds), and so did its acknowledgement.
 */
export const JOURNAL_FILE = "journal.mdb";

/**
 * The pool journal in LMDB (the `journal` table, keyed by arrival seq:
 * docs/decisions/009-pool-journal-by-arrival.md), in an environment of its own. Implements
 * txpool's PoolJournal (by shape: storage does not import txpool). Owns the hash → seq index
 * that removals by hash go through.
 *
 * Entries of committed transactions leave once their block is durable (LmdbStore.commitBlock
 * calls removePending), in a write of the journal's own: a kill in between leaves entries of
 * committed transactions, which the pool's restore drops as already committed.
 */
export class LmdbPoolJournal {
  private readonly root: RootDatabase;
  private readonly journal: Database<Tx, number>;
  /**
   * hash → seq of every journaled transaction (the table is keyed by seq): filled by loadPending
   * and savePending, emptied as entries leave the journal.
   */
  private readonly seqs = new Map<string, number>();
  /** The journal's asynchronous write transactions not yet ended (see writesEnded). */
  private readonly writes = new Set<Promise<unknown>>();

  /** Opens (or creates) the journal environment at `file`. */
  constructor(file: string) {
    this.root = open({ path: file, ...ENVIRONMENT_OPTIONS });
    this.journal = openTable<Tx, number>(this.root, "journal");
  }

  /**
   * Moves the entries of `legacy` (the journal table of a chain environment written before the
   * journal had its own) into this one, durably, before it empties `legacy`: a kill in between
   * leaves them in both, and the next open moves them again (same seqs, same entries).
   */
  adopt(legacy: Database<Tx, number>): void {
    const entries = [...legacy.getRange()];
    if (entries.length === 0) return;
    this.root.transactionSync(() => {
      for (const { key, value } of entries) this.journal.put(key, value);
    });
    legacy.clearSync();
  }

  /** Journals admitted transactions; resolves once they are durable. */
  async savePending(records: readonly PoolRecord[]): Promise<void> {
    // Known before the write, so that a block committing one of them meanwhile removes its entry.
    for (const { seq, tx } of records) this.seqs.set(tx.hash, seq);
    try {
      await this.write(() => {
        // An entry whose block committed (or that was dropped) before this write is not written back.
        for (const { seq, tx } of records) {
          if (this.seqs.get(tx.hash) === seq) this.journal.put(seq, tx);
        }
        failpoint("journal.inWrite");
      });
    } catch (error) {
      for (const { seq, tx } of records) {
        if (this.seqs.get(tx.hash) === seq) this.seqs.delete(tx.hash);
      }
      throw error;
    }
    failpoint("journal.afterWrite");
  }

  /**
   * Removes the entries of `hashes` the journal holds: transactions that left the pool, committed
   * (their block is durable) or not (evicted, invalidated). Their removal is written after any
   * journal write asked for before it (lmdb-js's asynchronous writes commit in order).
   */
  async removePending(hashes: readonly string[]): Promise<void> {
    const removed: [string, number][] = [];
    for (const hash of hashes) {
      const seq = this.seqs.get(hash);
      if (seq === undefined) continue;
      removed.push([hash, seq]);
      // Out of the index now: a savePending of the same entry not yet written skips it.
      this.seqs.delete(hash);
    }
    if (removed.length === 0) return;
    try {
      await this.write(() => {
        for (const [, seq] of removed) this.journal.remove(seq);
      });
    } catch (error) {
      // Still journaled: back in the index, unless journaled again meanwhile.
      for (const [hash, seq] of removed) if (!this.seqs.has(hash)) this.seqs.set(hash, seq);
      throw error;
    }
  }

  /** The journal in arrival order (its key order). */
  loadPending(): PoolRecord[] {
    const records: PoolRecord[] = [];
    for (const { key, value } of this.journal.getRange()) {
      records.push({ seq: key, tx: value });
      this.seqs.set(value.hash, key);
    }
    return records;
  }

  /** Resolves once the journal's write transactions under way have ended. */
  async writesEnded(): Promise<void> {
    while (this.writes.size > 0) await Promise.allSettled([...this.writes]);
  }

  /** Ends the writes under way, then closes the environment. */
  async close(): Promise<void> {
    await this.writesEnded();
    await this.root.close();
  }

  /**
   * One journal write, as an lmdb-js asynchronous child transaction: lmdb-js's plain asynchronous
   * `transaction()` commits what a callback wrote before it threw (as the store's pruning write
   * found, decision 011), so a savePending that failed part way would have left entries of
   * transactions its caller was told were not journaled, and a restart would bring them back.
   */
  private async write(body: () => void): Promise<void> {
    const transaction = this.root.childTransaction(body);
    this.writes.add(transaction);
    try {
      await transaction;
    } finally {
      this.writes.delete(transaction);
    }
  }
}

/**
 * Schema 3 → 4, in the chain's environment: the journal's entries move from the hash-keyed table
 * (`legacyPool`) to the seq-keyed one, which LmdbPoolJournal.adopt then moves into its own.
 */
export function migrateSchema3Journal(root: RootDatabase, journal: Database<Tx, number>): void {
  const legacy = openTable<PoolRecord, string>(root, "legacyPool");
  root.transactionSync(() => {
    for (const { value } of legacy.getRange()) journal.put(value.seq, value.tx);
    legacy.dropSync();
  });
}
