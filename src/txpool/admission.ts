import {
  balanceOf,
  classifyOperation,
  Listeners,
  nonceOf,
  prepareSignedTx,
  type SignedTxInput,
  type StateReader,
  stakeOf,
  type Tx,
  TxRejectedError,
  txBody,
  txFromCheck,
  verifySignedTx,
} from "../chain/index.ts";
import {
  inlineVerifier,
  type SignatureVerifier,
  type SignedHashJob,
  type SignedHashResult,
} from "../crypto/index.ts";
import type { TxPoolOptions } from "./options.ts";
import { type PoolEntry, TxPool } from "./pool.ts";

/** What admission reads of the committed chain. */
export interface AdmissionChainView {
  state(): StateReader;
  isCommitted(hash: string): boolean;
}

/** Where admitted transactions are journaled; durable when the promise resolves. */
export interface PoolJournal {
  savePending(records: readonly { seq: number; tx: Tx }[]): Promise<void>;
  removePending(hashes: readonly string[]): Promise<void>;
}

/**
 * The admission pipeline (DESIGN.md §3): every check runs synchronously, in this order, before a
 * hash is returned — shape, size, signature (embedded hash, chain id, low-s), already known,
 * nonce, timestamp, pool room, and the operation against the pending state (permission, balance).
 * A transaction is acknowledged only after it is journaled.
 *
 * The signature work (hashing, recovery) of submit and submitBatch runs on the verifier, which
 * may use other threads; the stateful checks then run on the event loop strictly in arrival order,
 * so two transactions of one sender sent back to back are judged in the order they came.
 */
export class Admission {
  readonly pool = new TxPool();
  private readonly chain: AdmissionChainView;
  private readonly journal: PoolJournal;
  private readonly options: TxPoolOptions;
  private readonly now: () => number;
  private readonly verifier: SignatureVerifier;
  private nextSeq = 0;
  /** Settles when every earlier submission's stateful checks have run (see inOrder). */
  private turn: Promise<unknown> = Promise.resolve();
  /**
   * Told of transactions once they are admitted: journaled and acknowledged when submitted here,
   * in the pool when a peer gossiped them (RPC subscriptions, metrics).
   */
  readonly admitted = new Listeners<readonly Tx[]>();

  constructor(
    chain: AdmissionChainView,
    journal: PoolJournal,
    options: TxPoolOptions,
    now: () => number = Date.now,
    verifier: SignatureVerifier = inlineVerifier,
  ) {
    this.chain = chain;
    this.journal = journal;
    this.options = options;
    this.now = now;
    this.verifier = verifier;
  }

  async submit(input: SignedTxInput): Promise<string> {
    const entry = await this.admitOne(input);
    await this.persist([entry]);
    this.admitted.emit([entry.tx]);
    return entry.tx.hash;
  }

  /**
   * Admits a transaction a peer gossiped: every check of `submit`, but no journal write. This node
   * returned its hash to no one; the node that did journaled it (DESIGN.md §8 promises survival
   * to that node), and it commits through any proposer that holds it. So a restart drops it
   * from this pool, as geth keeps only local transactions in its journal. On a network of n
   * validators, n − 1 of every n admissions are gossiped: their LMDB writes were most of the
   * journal's (docs/performance.md, "Gossiped transactions are not journaled").
   */
  async submitFromPeer(input: SignedTxInput): Promise<string> {
    const entry = await this.admitOne(input);
    this.admitted.emit([entry.tx]);
    return entry.tx.hash;
  }

  /** The checks of one submission, in arrival order; its entry is in the pool when this resolves. */
  private admitOne(input: SignedTxInput): Promise<PoolEntry> {
    return this.inOrder(this.verifyAll([input]), ([verified]) => {
      const entry = this.checkVerified(verified as Tx | TxRejectedError);
      this.pool.add(entry);
      return entry;
    });
  }

  /** All or none: every entry is checked (each against the pending state the earlier ones make). */
  async submitBatch(inputs: readonly SignedTxInput[]): Promise<string[]> {
    const added = await this.inOrder(this.verifyAll(inputs), (verified) => {
      const added: PoolEntry[] = [];
      try {
        for (const [index, one] of verified.entries()) {
          try {
            const entry = this.checkVerified(one);
            this.pool.add(entry);
            added.push(entry);
          } catch (error) {
            throw error instanceof TxRejectedError ? error.atIndex(index) : error;
          }
        }
      } catch (error) {
        for (const entry of added) this.pool.remove(entry.tx.hash);
        throw error;
      }
      return added;
    });
    await this.persist(added);
    this.admitted.emit(added.map((entry) => entry.tx));
    return added.map((entry) => entry.tx.hash);
  }

  /**
   * Re-admits journaled transactions after a restart, in arrival order. Entries that no longer
   * pass (committed meanwhile, stale) are dropped from the journal. Returns how many came back.
   */
  async restore(records: readonly { seq: number; tx: Tx }[]): Promise<number> {
    const dropped: string[] = [];
    // Restored entries keep their journaled seq and new ones are numbered after all of them: the
    // journal is never rewritten here, so a fresh count would sort new transactions before older
    // ones at the next restart (and drop them there as nonce_too_high).
    for (const { seq } of records) this.nextSeq = Math.max(this.nextSeq, seq + 1);
    for (const { seq, tx } of records) {
      try {
        this.pool.add({ ...this.check({ signature: tx.signature, transaction: txBody(tx) }, true), seq });
      } catch (error) {
        if (!(error instanceof TxRejectedError)) throw error;
        dropped.push(tx.hash);
      }
    }
    if (dropped.length > 0) await this.journal.removePending(dropped);
    return this.pool.size;
  }

  /** Called after a block commits: its transactions leave the pool (the block removed them from the journal). */
  removeCommitted(hashes: readonly string[]): void {
    for (const hash of hashes) this.pool.remove(hash);
  }

  /**
   * After a block from another proposer: drops what can no longer be included — an ordered
   * transaction whose nonce the chain has passed (another transaction took it), an unordered one
   * outside the replay window — from the pool and the journal. Returns the dropped hashes.
   */
  async prune(): Promise<string[]> {
    const state = this.chain.state();
    const now = this.now();
    const stale = this.pool
      .list()
      .filter((tx) =>
        tx.nonce >= 0
          ? tx.nonce < nonceOf(state, tx.address)
          : Math.abs(now - tx.timestamp) > this.options.replayWindowMs,
      )
      .map((tx) => tx.hash);
    for (const hash of stale) this.pool.remove(hash);
    if (stale.length > 0) await this.journal.removePending(stale);
    return stale;
  }

  private async persist(entries: PoolEntry[]): Promise<void> {
    try {
      await this.journal.savePending(entries.map(({ seq, tx }) => ({ seq, tx })));
    } catch (error) {
      for (const entry of entries) this.pool.remove(entry.tx.hash);
      throw error;
    }
  }

  /**
   * Runs `run` on `ready`'s value once every earlier call's `run` has run: signature checks finish
   * in any order, the stateful checks that follow them run in arrival order.
   */
  private inOrder<T, R>(ready: Promise<T>, run: (value: T) => R): Promise<R> {
    const result = this.turn.then(() => ready).then(run);
    this.turn = result.catch(() => undefined);
    return result;
  }

  /**
   * The stateless checks of each input (shape and size here, the signature on the verifier):
   * the transaction in block form, or the rejection that input gets.
   */
  private async verifyAll(inputs: readonly SignedTxInput[]): Promise<(Tx | TxRejectedError)[]> {
    const jobs: (SignedHashJob | TxRejectedError)[] = inputs.map((input) => {
      try {
        return prepareSignedTx(input, this.options);
      } catch (error) {
        if (error instanceof TxRejectedError) return error;
        throw error;
      }
    });
    const toCheck = jobs.filter((job): job is SignedHashJob => !(job instanceof TxRejectedError));
    const results = toCheck.length === 0 ? [] : await this.verifier.verify(toCheck);
    let next = 0;
    return jobs.map((job, i) => {
      if (job instanceof TxRejectedError) return job;
      try {
        return txFromCheck(
          inputs[i] as SignedTxInput,
          results[next++] as SignedHashResult,
          this.options.chainId,
        );
      } catch (error) {
        if (error instanceof TxRejectedError) return error;
        throw error;
      }
    });
  }

  /**
   * Runs every check on the calling thread; returns the pool entry to add, or throws
   * TxRejectedError. `restoring`: the transaction was acknowledged before a restart (see
   * precheckOperation).
   */
  check(input: SignedTxInput, restoring = false): PoolEntry {
    return this.checkVerified(verifySignedTx(input, this.options), restoring);
  }

  /** The stateful checks of a transaction whose stateless checks gave `verified`. */
  private checkVerified(verified: Tx | TxRejectedError, restoring = false): PoolEntry {
    if (verified instanceof TxRejectedError) throw verified;
    const { options, pool } = this;
    const tx = verified;
    if (pool.has(tx.hash) || this.chain.isCommitted(tx.hash)) {
      throw new TxRejectedError("already_known", `transaction ${tx.hash} is already known`);
    }
    const state = this.chain.state();
    const pending = pool.sender(tx.address);
    if (tx.nonce >= 0) {
      const expected = pool.nextNonce(tx.address, nonceOf(state, tx.address));
      if (tx.nonce < expected) {
        throw new TxRejectedError("nonce_too_low", `nonce ${tx.nonce} is below the next nonce ${expected}`, {
          expected,
          actual: tx.nonce,
        });
      }
      if (tx.nonce > expected) {
        throw new TxRejectedError("nonce_too_high", `nonce ${tx.nonce} is above the next nonce ${expected}`, {
          expected,
          actual: tx.nonce,
        });
      }
    } else {
      const skew = Math.abs(this.now() - tx.timestamp);
      if (skew > options.replayWindowMs) {
        throw new TxRejectedError(
          "stale_timestamp",
          `an unordered transaction's timestamp must be within ${options.replayWindowMs} ms of the node's clock`,
          { expected: this.now(), actual: tx.timestamp },
        );
      }
    }
    if (pool.size >= options.maxPoolTxs) {
      throw new TxRejectedError(
        "pool_full",
        `the pool holds its limit of ${options.maxPoolTxs} transactions`,
      );
    }
    if (pending.count >= options.maxPoolTxsPerAccount) {
      throw new TxRejectedError(
        "account_pool_full",
        `${tx.address} has ${pending.count} pending transactions, the per-account limit`,
      );
    }
    return { ...this.precheckOperation(tx, state, pending, restoring), tx, seq: this.nextSeq++ };
  }

  /**
   * Permission and balance of the operation against committed state plus what is pending.
   * When restoring an acknowledged transaction, only the permission is checked again: a block made
   * elsewhere may since have used its key or spent the balance it counted on, which makes it fail
   * at execution (consuming its nonce) as it would have without the restart. Dropping it instead
   * lost a transaction whose hash was returned (DESIGN §8) and left a nonce gap that dropped the
   * sender's later, valid ones as nonce_too_high.
   */
  private precheckOperation(
    tx: Tx,
    state: StateReader,
    pending: { debit: number; unstake: number },
    restoring: boolean,
  ): Pick<PoolEntry, "debit" | "unstake" | "onceRef"> {
    const classified = classifyOperation(tx.operation, tx.address);
    if (!classified.ok) throw new TxRejectedError(classified.reason, classified.message);
    const op = classified.op;
    if (op.kind === "userData") return { debit: 0, unstake: 0, onceRef: undefined };
    if (restoring) {
      return op.amount > 0
        ? { debit: op.amount, unstake: 0, onceRef: op.ref }
        : { debit: 0, unstake: -op.amount, onceRef: op.ref };
    }
    if (state.getLeaf(`${op.ref}/value`) !== undefined || this.pool.hasOnceRef(op.ref)) {
      throw new TxRejectedError(
        "permission_denied",
        `${op.ref} has already been written: each key is used once`,
      );
    }
    const address = op.kind === "transfer" ? op.from : op.address;
    if (op.amount > 0) {
      const available = balanceOf(state, address) - pending.debit;
      if (op.amount > available) {
        throw new TxRejectedError("insufficient_balance", `balance available is ${available}`, {
          expected: op.amount,
          actual: available,
        });
      }
      return { debit: op.amount, unstake: 0, onceRef: op.ref };
    }
    const stakeAvailable = stakeOf(state, address) - pending.unstake;
    if (-op.amount > stakeAvailable) {
      throw new TxRejectedError("insufficient_balance", `stake available to withdraw is ${stakeAvailable}`, {
        expected: -op.amount,
        actual: stakeAvailable,
      });
    }
    return { debit: 0, unstake: -op.amount, onceRef: op.ref };
  }
}
