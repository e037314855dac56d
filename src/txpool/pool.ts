import { type Tx, txSize } from "../chain/index.ts";

/** A pending transaction with what it will take from its sender, for admission pre-checks. */
export interface PoolEntry {
  tx: Tx;
  /** Arrival order; survives restarts through the journal. */
  seq: number;
  /** Balance this transaction moves out of its sender (transfers, stakes). */
  debit: number;
  /** Stake this transaction moves back to balance (negative staking amounts). */
  unstake: number;
  /** The once-per-key transfer or staking path it writes, if any. */
  onceRef: string | undefined;
}

interface SenderPending {
  count: number;
  /** Nonces of the sender's pending ordered transactions (at most the per-account limit). */
  nonces: readonly number[];
  debit: number;
  unstake: number;
}

/**
 * The pending transactions, in arrival order, with per-sender totals kept incrementally so that
 * every admission check is O(1). Ordered transactions of one sender arrive in nonce order
 * (admission requires the next nonce), so arrival order is also a valid execution order.
 */
export class TxPool {
  private readonly byHash = new Map<string, PoolEntry>();
  private readonly senders = new Map<string, SenderPending>();
  private readonly onceRefs = new Set<string>();

  get size(): number {
    return this.byHash.size;
  }

  has(hash: string): boolean {
    return this.byHash.has(hash);
  }

  get(hash: string): Tx | undefined {
    return this.byHash.get(hash)?.tx;
  }

  sender(address: string): Readonly<SenderPending> {
    return this.senders.get(address) ?? { count: 0, nonces: [], debit: 0, unstake: 0 };
  }

  /**
   * The nonce a sender's next ordered transaction must carry, given its committed nonce. Taking
   * the maximum (not a sum) keeps this right in the instant after a block commits and before its
   * transactions leave the pool.
   */
  nextNonce(address: string, committedNonce: number): number {
    const { nonces } = this.sender(address);
    return nonces.length === 0 ? committedNonce : Math.max(committedNonce, Math.max(...nonces) + 1);
  }

  hasOnceRef(ref: string): boolean {
    return this.onceRefs.has(ref);
  }

  add(entry: PoolEntry): void {
    const { tx } = entry;
    // Measured (and remembered) as it arrives, ~10 µs within its own admission: otherwise the
    // first block to select it measured it, 5,000 of them in one turn of the event loop (15-90 ms
    // on a dev node under load, every request waiting meanwhile).
    txSize(tx);
    this.byHash.set(tx.hash, entry);
    const pending = { ...this.sender(tx.address) };
    pending.count += 1;
    if (tx.nonce >= 0) pending.nonces = [...pending.nonces, tx.nonce];
    pending.debit += entry.debit;
    pending.unstake += entry.unstake;
    this.senders.set(tx.address, pending);
    if (entry.onceRef !== undefined) this.onceRefs.add(entry.onceRef);
  }

  remove(hash: string): boolean {
    const entry = this.byHash.get(hash);
    if (entry === undefined) return false;
    this.byHash.delete(hash);
    const { tx } = entry;
    const pending = { ...this.sender(tx.address) };
    pending.count -= 1;
    if (tx.nonce >= 0) pending.nonces = pending.nonces.filter((nonce) => nonce !== tx.nonce);
    pending.debit -= entry.debit;
    pending.unstake -= entry.unstake;
    if (pending.count === 0) this.senders.delete(tx.address);
    else this.senders.set(tx.address, pending);
    if (entry.onceRef !== undefined) this.onceRefs.delete(entry.onceRef);
    return true;
  }

  /**
   * The oldest transactions that fit the block limits, in arrival order, leaving out those of
   * `skip` (a block being written holds them: they leave the pool once it is durable).
   */
  select(maxTxs: number, maxBytes: number, sizeOf: (tx: Tx) => number, skip?: ReadonlySet<string>): Tx[] {
    const picked: Tx[] = [];
    let bytes = 2; // "[]"
    for (const { tx } of this.byHash.values()) {
      if (picked.length >= maxTxs) break;
      if (skip?.has(tx.hash)) continue;
      const size = sizeOf(tx) + (picked.length > 0 ? 1 : 0);
      if (bytes + size > maxBytes) break; // keep arrival order: never skip ahead of a sender's nonce
      picked.push(tx);
      bytes += size;
    }
    return picked;
  }

  /** All pending transactions in arrival order. */
  list(): Tx[] {
    return [...this.byHash.values()].map((entry) => entry.tx);
  }
}
