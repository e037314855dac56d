import {
  type Commit,
  type ExecutedBlock,
  precommitVote,
  type StoredBlock,
  signVote,
  type Tx,
  type Validator,
  verifyCommit,
} from "../chain/index.ts";
import { failpoint } from "../faults/index.ts";
import { realScheduler, type Scheduler } from "./scheduler.ts";

/** What block production needs from the chain core. */
export interface ProducerChain {
  head(): StoredBlock;
  validators(): Validator[];
  execute(txs: Tx[], proposer: string, timestamp: number): Promise<ExecutedBlock>;
  commit(executed: ExecutedBlock, commit: Commit, signers: string[]): Promise<StoredBlock>;
  abandon(): void;
}

/** What block production needs from the pool. */
export interface ProducerPool {
  readonly size: number;
  selectForBlock(): Tx[];
  /** Called after commit with the block's transaction hashes. */
  removeCommitted(hashes: readonly string[]): void;
}

export interface ValidatorKey {
  address: string;
  privateKey: Uint8Array;
}

export interface SingleValidatorOptions {
  chainId: number;
  /** Minimum interval between two blocks that are not full, ms. */
  blockTimeMs: number;
  /** The genesis's block limits: a block at them is full, and the next one does not wait. */
  limits: { maxBlockTxs: number; maxBlockBytes: number; maxTxBytes: number };
}

export interface ProducerEvents {
  onBlock?(block: StoredBlock, executed: ExecutedBlock): void;
  onError?(error: unknown): void;
}

/**
 * Block production for a chain with exactly one validator (the dev chain): with 100% of the
 * stake, the validator's own precommit is a complete commit certificate, so a block is final the
 * moment it is signed. A block is made only when transactions are pending, at most one per
 * `blockTimeMs`, except that after a full block, or while the pool holds a full block's worth,
 * the next one begins as soon as the last is committed: a backlog of a block or more is committed
 * as fast as the node executes and writes, not one block per block time
 * (docs/decisions/017-dev-blocks-back-to-back.md). The multi-validator BFT rounds replace this
 * for networks of validators.
 */
export class SingleValidatorProducer {
  private readonly chain: ProducerChain;
  private readonly pool: ProducerPool;
  private readonly key: ValidatorKey;
  private readonly options: SingleValidatorOptions;
  private readonly events: ProducerEvents;
  private readonly scheduler: Scheduler;
  private cancelTimer: (() => void) | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;
  /** The last block this producer made was full: the next one does not wait for the block time. */
  private lastFull = false;
  /**
   * Transactions the last block (if not full) or the last selection that took none left in the
   * pool: ones a block could not take then. Only what arrives beyond them counts
   * toward a full block's worth.
   */
  private leftBehind = 0;

  constructor(
    chain: ProducerChain,
    pool: ProducerPool,
    key: ValidatorKey,
    options: SingleValidatorOptions,
    events: ProducerEvents = {},
    scheduler: Scheduler = realScheduler(),
  ) {
    const validators = chain.validators();
    if (validators.length !== 1 || validators[0]?.address !== key.address) {
      throw new Error(`single-validator production needs the set to be exactly ${key.address}`);
    }
    this.chain = chain;
    this.pool = pool;
    this.key = key;
    this.options = options;
    this.events = events;
    this.scheduler = scheduler;
  }

  start(): void {
    this.stopped = false;
    this.notify();
  }

  /** Waits for a block in progress to finish committing, then stops. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    await this.running;
  }

  /** Tells the producer that transactions arrived. Cheap; safe to call on every admission. */
  notify(): void {
    if (this.stopped || this.running !== undefined || this.pool.size === 0) return;
    const wait = this.chain.head().header.timestamp + this.options.blockTimeMs - this.scheduler.now();
    if (wait > 0 && !this.backlog()) {
      this.cancelTimer ??= this.scheduler.after(wait, () => {
        this.cancelTimer = undefined;
        this.notify();
      });
      return;
    }
    // A full block's worth that arrived during the wait goes now.
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    this.running = this.produce().then(
      (block) => {
        this.running = undefined;
        // After a selection that took nothing, the next arrival tries again (not this turn: a
        // pool of transactions no block can take would have it spin).
        if (block !== undefined) this.notify();
      },
      (error: unknown) => {
        this.running = undefined;
        this.events.onError?.(error);
        this.retryLater();
      },
    );
  }

  /** After a failed block: the next try in a block time, not at once (the failure may persist). */
  private retryLater(): void {
    if (this.stopped || this.cancelTimer !== undefined) return;
    this.cancelTimer = this.scheduler.after(this.options.blockTimeMs, () => {
      this.cancelTimer = undefined;
      this.notify();
    });
  }

  /** Builds, signs and commits one block from the pool. */
  async produce(): Promise<StoredBlock | undefined> {
    const txs = this.pool.selectForBlock();
    // What this selection leaves in the pool; transactions that arrive while the block is made
    // were not offered to it, and count toward the next block's worth.
    const notTaken = this.pool.size - txs.length;
    this.lastFull = false;
    if (txs.length === 0) {
      this.leftBehind = this.pool.size;
      return undefined;
    }
    const parent = this.chain.head();
    const timestamp = Math.max(this.scheduler.now(), parent.header.timestamp + 1);
    const executed = await this.chain.execute(txs, this.key.address, timestamp);
    const round = 0;
    const vote = precommitVote(this.options.chainId, executed.header.number, round, executed.hash);
    const commit: Commit = {
      height: vote.height,
      round,
      block_hash: executed.hash,
      signatures: [signVote(vote, this.key.privateKey)],
    };
    const check = verifyCommit(commit, this.options.chainId, this.chain.validators());
    if (!check.ok) {
      this.chain.abandon();
      throw new Error(`own commit does not verify: ${check.message}`);
    }
    const block = await this.chain.commit(executed, commit, check.signers);
    failpoint("commit.beforePoolPrune");
    this.pool.removeCommitted(block.tx_hashes);
    failpoint("commit.afterPoolPrune");
    this.lastFull = this.isFull(block);
    this.leftBehind = this.lastFull ? 0 : notTaken;
    this.events.onBlock?.(block, executed);
    return block;
  }

  /**
   * More waits than a block takes: the last block was full, or a full block's worth of
   * transactions arrived since the last block.
   */
  private backlog(): boolean {
    return this.lastFull || this.pool.size - this.leftBehind >= this.options.limits.maxBlockTxs;
  }

  /** At the block limits: no more transactions, or no room for one more of the largest size. */
  private isFull(block: StoredBlock): boolean {
    const { maxBlockTxs, maxBlockBytes, maxTxBytes } = this.options.limits;
    return block.tx_hashes.length >= maxBlockTxs || block.header.size + maxTxBytes > maxBlockBytes;
  }
}
