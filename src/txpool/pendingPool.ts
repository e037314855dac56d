import { type Tx, txSize } from "../chain/index.ts";
import type { Admission } from "./admission.ts";

/** The block limits a selection stays within (genesis `consensus`). */
export interface BlockLimits {
  maxBlockTxs: number;
  maxBlockBytes: number;
}

/**
 * The pending pool as the makers and committers of blocks see it: the consensus host, the dev
 * producer and sync each get this one object (as their HostPool, ProducerPool, SyncPool), so a
 * committed block's transactions leave the pool through `removeCommitted` on every path. Their
 * journal entries already left in the block's own write (BlockWrite.journalRemovals), so a
 * crash between the two re-admits nothing committed.
 */
export class PendingPool {
  private readonly admission: Admission;
  private readonly limits: BlockLimits;

  constructor(admission: Admission, limits: BlockLimits) {
    this.admission = admission;
    this.limits = limits;
  }

  get size(): number {
    return this.admission.pool.size;
  }

  /**
   * The oldest pending transactions that fit one block, in arrival order, but for those of `skip`
   * (the block the dev producer is writing).
   */
  selectForBlock(skip?: ReadonlySet<string>): Tx[] {
    return this.admission.pool.select(this.limits.maxBlockTxs, this.limits.maxBlockBytes, txSize, skip);
  }

  /** True when the pool holds this exact signed transaction (its signature was verified). */
  holds(tx: Tx): boolean {
    return this.admission.pool.get(tx.hash)?.signature === tx.signature;
  }

  /** Called after a block commits, with its transaction hashes: they leave the pool. */
  removeCommitted(hashes: readonly string[]): void {
    this.admission.removeCommitted(hashes);
  }

  /**
   * After a block from another proposer: drops what can no longer be included from the pool and
   * the journal (Admission.prune). Returns the dropped hashes.
   */
  prune(): Promise<string[]> {
    return this.admission.prune();
  }
}
