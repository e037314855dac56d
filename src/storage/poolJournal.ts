import type { Database, RootDatabase } from "lmdb";
import type { Tx } from "../chain/index.ts";
import { failpoint } from "../faults/index.ts";
import { directWrites, type TableWrites } from "./writeBatch.ts";

/** A journaled pool entry; `seq` restores arrival order after a restart. */
export interface PoolRecord {
  seq: number;
  tx: Tx;
}

/**
 * The pool journal in LMDB (the `journal` database, keyed by arrival seq:
 * docs/decisions/009-pool-journal-by-arrival.md). Implements txpool's PoolJournal (by shape:
 * storage does not import txpool). Owns the hash → seq index that removals by hash go through,
 * and the tracking of its own asynchronous write transactions, which the store's grouped block
 * writes must not overlap (see hold).
 *
 * Entries of committed transactions leave in the block's own write: the store records them with
 * removeInWrite, and takes them out of the index once that write has committed (forget) or, for
 * a write made on the block writer thread, as it begins (removeAside).
 */
export class LmdbPoolJournal {
  private readonly root: RootDatabase;
  private readonly journal: Database<Tx, number>;
  /**
   * hash → seq of every journaled transaction (the table is keyed by seq): filled by loadPending
   * and savePending, emptied as entries leave the journal.
   */
  private readonly seqs = new Map<string, number>();
  /** Entries a write on another thread is removing (removeAside), by hash, until it settles. */
  private readonly removing = new Map<string, { seq: number; committed: () => boolean }>();
  /** Hashes of `removing` whose entry a journal write put back meanwhile. */
  private readonly putBack = new Set<string>();
  /** True while the store holds LMDB's writer for a grouped write (see hold). */
  private holding = false;
  /** Journal writes asked for during a hold, in arrival order: each begins its transaction. */
  private queued: (() => void)[] = [];
  /** The journal's asynchronous write transactions not yet ended (see writesEnded). */
  private readonly writes = new Set<Promise<unknown>>();

  constructor(root: RootDatabase, journal: Database<Tx, number>) {
    this.root = root;
    this.journal = journal;
  }

  /** Journals admitted transactions; resolves once they are durable. */
  async savePending(records: readonly PoolRecord[]): Promise<void> {
    // Known before the write, so that a block committing one of them meanwhile removes its entry.
    for (const { seq, tx } of records) this.seqs.set(tx.hash, seq);
    try {
      await this.write(() => {
        // An entry whose block committed (or that was dropped) before this write is not written
        // back; one that a block's write on the writer thread is removing is, until that commits.
        for (const { seq, tx } of records) {
          if (this.seqs.get(tx.hash) === seq) {
            this.journal.put(seq, tx);
            continue;
          }
          const removal = this.removing.get(tx.hash);
          if (removal?.seq === seq && !removal.committed()) {
            this.journal.put(seq, tx);
            this.putBack.add(tx.hash);
          }
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

  /** Drops journal entries that left the pool without being committed (evicted, invalidated). */
  async removePending(hashes: readonly string[]): Promise<void> {
    let removed: string[] = [];
    await this.write(() => {
      removed = this.removeInWrite(directWrites, hashes);
    });
    this.forget(removed);
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

  /**
   * Removes, by the caller's `writes`, the entries of `hashes` the journal holds and returns their
   * hashes. They stay in the index until `forget` (call it once that write has committed), so a
   * write that fails leaves index and table in agreement.
   */
  removeInWrite(writes: TableWrites, hashes: readonly string[]): string[] {
    const removed: string[] = [];
    for (const hash of hashes) {
      const seq = this.seqs.get(hash);
      if (seq === undefined) continue;
      writes.remove(this.journal, seq);
      removed.push(hash);
    }
    return removed;
  }

  /**
   * For a write made on another thread (the store's block writer) that removes the entries of
   * `hashes` (as removeInWrite planned): they leave the index now, and wait in `removing` until
   * the write has ended (`settle`). `committed` says, without waiting, whether that write has
   * committed: a journal write that runs meanwhile puts an entry back only while it has not (if
   * the block's write then fails, or is killed, the entry is still journaled). `settle` resolves
   * once such an entry that outlived the commit is removed again.
   */
  removeAside(
    hashes: readonly string[],
    committed: () => boolean,
  ): { settle(committed: boolean): Promise<void> } {
    const aside = new Map<string, number>();
    for (const hash of hashes) {
      const seq = this.seqs.get(hash);
      if (seq === undefined) continue;
      aside.set(hash, seq);
      this.seqs.delete(hash);
      this.removing.set(hash, { seq, committed });
    }
    return {
      settle: (ok) => {
        const stale: string[] = [];
        for (const [hash, seq] of aside) {
          this.removing.delete(hash);
          const put = this.putBack.delete(hash);
          if (!ok) {
            if (!this.seqs.has(hash)) this.seqs.set(hash, seq);
          } else if (put && this.journal.doesExist(seq)) {
            // Put back after the block's write removed it (in the moment between that write's
            // commit and `committed` saying so): an entry of a committed transaction.
            this.seqs.set(hash, seq);
            stale.push(hash);
          }
        }
        // Awaited by the block's commit, so that the journal holds no committed entry once it
        // resolves (a failure leaves one for a restart to drop as already committed).
        return stale.length > 0 ? this.removePending(stale).catch(() => undefined) : Promise.resolve();
      },
    };
  }

  /** Drops `hashes` from the index: their removal has committed. */
  forget(hashes: readonly string[]): void {
    for (const hash of hashes) this.seqs.delete(hash);
  }

  /**
   * From now until the returned release is called, journal writes wait: the store holds LMDB's
   * writer for a grouped write (inside it a journal entry would be acknowledged before it is
   * durable, and undone with it). Pair with writesEnded before that write begins.
   *
   * The release begins the waiting writes' transactions before it returns, in the order they were
   * asked for: a store that holds again at once (its next grouped write) then waits for them in
   * writesEnded instead of holding them back for another write.
   */
  hold(): () => void {
    this.holding = true;
    return () => {
      this.holding = false;
      const queued = this.queued;
      this.queued = [];
      for (const begin of queued) begin();
    };
  }

  /** Resolves once the journal's write transactions under way have ended. */
  async writesEnded(): Promise<void> {
    while (this.writes.size > 0) await Promise.allSettled([...this.writes]);
  }

  /** True while a journal write waits for a hold to end. */
  writeWaiting(): boolean {
    return this.queued.length > 0;
  }

  /**
   * Runs `body` as an asynchronous write transaction, at once or, during a hold, when it is
   * released. Either way the check and the start happen in one step, with no await between
   * them, and the transaction is tracked until it ends (writesEnded).
   */
  private write(body: () => void): Promise<void> {
    if (!this.holding) return this.begin(body);
    return new Promise<void>((resolve, reject) => {
      this.queued.push(() => {
        this.begin(body).then(resolve, reject);
      });
    });
  }

  /**
   * One journal write, as an lmdb-js asynchronous child transaction: lmdb-js's plain asynchronous
   * `transaction()` commits what a callback wrote before it threw (as the store's pruning write
   * found, decision 011), so a savePending that failed part way would have left entries of
   * transactions its caller was told were not journaled, and a restart would bring them back.
   */
  private async begin(body: () => void): Promise<void> {
    const transaction = this.root.childTransaction(body);
    this.writes.add(transaction);
    try {
      await transaction;
    } finally {
      this.writes.delete(transaction);
    }
  }
}
