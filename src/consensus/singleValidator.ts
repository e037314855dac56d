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

/** What block production needs from the chain core (Chain). */
export interface ProducerChain {
  /** The block the next one builds on (the one being written, else the head). */
  tip(): StoredBlock;
  validators(): Validator[];
  validatorsAt(height: number): Validator[];
  execute(txs: Tx[], proposer: string, timestamp: number): Promise<ExecutedBlock>;
  /** Resolves once the write is under way; `durable` once the block is stored and the head. */
  commitAside(
    executed: ExecutedBlock,
    commit: Commit,
    signers: string[],
  ): Promise<{ block: StoredBlock; durable: Promise<StoredBlock> }>;
  abandon(): void;
}

/** What block production needs from the pool. */
export interface ProducerPool {
  readonly size: number;
  /** The next block's transactions, leaving out `skip` (those of the block being written). */
  selectForBlock(skip?: ReadonlySet<string>): Tx[];
  /** Called once a block is durable, with its transaction hashes. */
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
 * (docs/decisions/017-dev-blocks-back-to-back.md). Where the store writes off the event loop, the
 * next block executes while the last is written (Chain.commitAside, docs/decisions/021); its
 * transactions leave the pool, and `onBlock` hears of it, once it is durable. The
 * multi-validator BFT rounds replace this for networks of validators.
 */
export class SingleValidatorProducer {
  private readonly chain: ProducerChain;
  private readonly pool: ProducerPool;
  private readonly key: ValidatorKey;
  private readonly options: SingleValidatorOptions;
  private readonly events: ProducerEvents;
  private readonly scheduler: Scheduler;
  private cancelTimer: (() => void) | undefined;
  /** The block being made: selected, executed, signed and handed to the store. */
  private running: Promise<void> | undefined;
  /** The block handed to the store and not yet durable: its transactions, and its settling. */
  private writing: { hashes: ReadonlySet<string>; settled: Promise<void> } | undefined;
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
    await this.writing?.settled;
  }

  /** Tells the producer that transactions arrived. Cheap; safe to call on every admission. */
  notify(): void {
    if (this.stopped || this.running !== undefined || this.pending() === 0) return;
    const wait = this.chain.tip().header.timestamp + this.options.blockTimeMs - this.scheduler.now();
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

  /**
   * Builds and signs one block from the pool, and hands it to the chain to store; resolves once
   * its write is under way (see `written` for what follows its durability).
   */
  async produce(): Promise<StoredBlock | undefined> {
    const skip = this.writing?.hashes;
    const txs = this.pool.selectForBlock(skip);
    // What this selection leaves in the pool; transactions that arrive while the block is made
    // were not offered to it, and count toward the next block's worth.
    const notTaken = this.pending() - txs.length;
    this.lastFull = false;
    if (txs.length === 0) {
      this.leftBehind = this.pending();
      return undefined;
    }
    const parent = this.chain.tip();
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
    const check = verifyCommit(commit, this.options.chainId, this.chain.validatorsAt(executed.header.number));
    if (!check.ok) {
      this.chain.abandon();
      throw new Error(`own commit does not verify: ${check.message}`);
    }
    const { block, durable } = await this.chain.commitAside(executed, commit, check.signers);
    this.lastFull = this.isFull(block);
    this.leftBehind = this.lastFull ? 0 : notTaken;
    const hashes = new Set(block.tx_hashes);
    const settled = durable.then(
      (stored) => this.written(stored, executed, hashes),
      (error: unknown) => {
        if (this.writing?.hashes === hashes) this.writing = undefined;
        this.events.onError?.(error);
        this.retryLater();
      },
    );
    this.writing = { hashes, settled };
    return block;
  }

  /** A block is durable: its transactions leave the pool, and a block waiting on it may go. */
  private written(block: StoredBlock, executed: ExecutedBlock, hashes: ReadonlySet<string>): void {
    failpoint("commit.beforePoolPrune");
    this.pool.removeCommitted(block.tx_hashes);
    failpoint("commit.afterPoolPrune");
    if (this.writing?.hashes === hashes) this.writing = undefined;
    this.events.onBlock?.(block, executed);
    this.notify();
  }

  /** Transactions in the pool that no block holds yet. */
  private pending(): number {
    return this.pool.size - (this.writing?.hashes.size ?? 0);
  }

  /**
   * More waits than a block takes: the last block was full, or a full block's worth of
   * transactions arrived since the last block.
   */
  private backlog(): boolean {
    return this.lastFull || this.pending() - this.leftBehind >= this.options.limits.maxBlockTxs;
  }

  /** At the block limits: no more transactions, or no room for one more of the largest size. */
  private isFull(block: StoredBlock): boolean {
    const { maxBlockTxs, maxBlockBytes, maxTxBytes } = this.options.limits;
    return block.tx_hashes.length >= maxBlockTxs || block.header.size + maxTxBytes > maxBlockBytes;
  }
}
