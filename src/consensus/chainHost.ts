import {
  type Commit,
  type ExecutedBlock,
  hashHeader,
  InvalidBlockError,
  type ProposedBlock,
  type StoredBlock,
  type Tx,
  type Validator,
  verifyCommit,
} from "../chain/index.ts";
import { failpoint } from "../faults/index.ts";
import { performance } from "node:perf_hooks";
import { BuildBudget } from "./buildBudget.ts";
import type { ConsensusHost, ConsensusMessage, ConsensusStep } from "./host.ts";
import type { Evidence } from "./voteSet.ts";

/**
 * How far ahead of our clock a proposal's timestamp may be. Without a bound a proposer could push
 * block time arbitrarily forward (and with it the unordered-transaction window).
 */
export const MAX_CLOCK_DRIFT_MS = 10_000;

/** The chain as the consensus host uses it (implemented by chain/Chain). */
export interface HostChain {
  head(): StoredBlock;
  validatorsAt(height: number): Validator[];
  execute(
    txs: Tx[],
    proposer: string,
    timestamp: number,
    lastCommit?: { commit: Commit | null; signers: string[] },
  ): Promise<ExecutedBlock>;
  executeProposed(
    block: ProposedBlock,
    limits: { maxTxBytes: number },
    alreadyVerified?: (tx: Tx) => boolean,
  ): Promise<ExecutedBlock>;
  commit(executed: ExecutedBlock, commit: Commit, signers: string[]): Promise<StoredBlock>;
  abandon(): void;
  includable(txs: readonly Tx[], timestamp: number): Tx[];
}

export interface HostPool {
  readonly size: number;
  selectForBlock(): Tx[];
  removeCommitted(hashes: readonly string[]): void;
  /** True when the pool holds this exact signed transaction (its signature was verified). */
  holds(tx: Tx): boolean;
}

export interface HostNetwork {
  broadcast(message: ConsensusMessage): void;
  onBehind(height: number): void;
}

export interface ChainHostEvents {
  onBlock?(block: StoredBlock, executed: ExecutedBlock): void;
  onEvidence?(evidence: Evidence): void;
  /** A part of a height ended (ConsensusHost.stepTook): for the node's metrics. */
  onStep?(step: ConsensusStep, ms: number): void;
  log(level: "debug" | "info" | "warn", message: string, fields?: Record<string, unknown>): void;
}

/**
 * Connects the consensus engine to the chain, the pool and the network. The chain holds at most
 * one executed (uncommitted) block; the host tracks which one, and executes again when the
 * decided block is not the one held (a proposal checked after ours, or a re-proposal).
 */
export class ChainConsensusHost implements ConsensusHost {
  private readonly chain: HostChain;
  private readonly pool: HostPool;
  private readonly network: HostNetwork;
  private readonly events: ChainHostEvents;
  private readonly address: string;
  private readonly chainId: number;
  private readonly maxTxBytes: number;
  private readonly clock: () => number;
  private held: ExecutedBlock | undefined;
  private readonly budget: BuildBudget;

  constructor(options: {
    chain: HostChain;
    pool: HostPool;
    network: HostNetwork;
    events: ChainHostEvents;
    /** The validator's address, the proposer of the blocks it builds. */
    address: string;
    chainId: number;
    maxTxBytes: number;
    /** How long building a proposal may take (a fraction of the propose timeout), ms. */
    buildBudgetMs: number;
    now?: () => number;
  }) {
    this.chain = options.chain;
    this.pool = options.pool;
    this.network = options.network;
    this.events = options.events;
    this.address = options.address;
    this.chainId = options.chainId;
    this.maxTxBytes = options.maxTxBytes;
    this.clock = options.now ?? Date.now;
    this.budget = new BuildBudget({ budgetMs: options.buildBudgetMs });
  }

  headNumber(): number {
    return this.chain.head().header.number;
  }

  headTimestamp(): number {
    return this.chain.head().header.timestamp;
  }

  validatorsAt(height: number): Validator[] {
    return this.chain.validatorsAt(height);
  }

  hasPendingTransactions(): boolean {
    // A transaction held behind a nonce gap would make every block early and empty: count only
    // what a block could take now (asked once per height, and on arrivals while a proposer waits).
    return this.pool.size > 0 && this.chain.includable(this.pool.selectForBlock(), this.clock()).length > 0;
  }

  async buildBlock(_height: number, timestamp: number): Promise<ProposedBlock> {
    this.release();
    const parent = this.chain.head();
    // A prefix of includable transactions is includable too (nonce runs stay unbroken).
    const txs = this.chain.includable(this.pool.selectForBlock(), timestamp).slice(0, this.budget.limit());
    const started = performance.now();
    this.held = await this.chain.execute(txs, this.address, timestamp);
    this.budget.record(txs.length, performance.now() - started);
    return { header: this.held.header, txs: this.held.txs, last_commit: parent.commit };
  }

  async checkBlock(block: ProposedBlock): Promise<boolean> {
    this.release();
    if (block.header.timestamp > this.clock() + MAX_CLOCK_DRIFT_MS) {
      this.events.log("warn", "proposed block is from the future", { timestamp: block.header.timestamp });
      return false;
    }
    try {
      const started = performance.now();
      this.held = await this.chain.executeProposed(block, { maxTxBytes: this.maxTxBytes }, (tx) =>
        this.pool.holds(tx),
      );
      this.budget.record(block.txs.length, performance.now() - started);
      return true;
    } catch (error) {
      if (!(error instanceof InvalidBlockError)) throw error;
      this.events.log("warn", "proposed block is invalid", { reason: error.message });
      return false;
    }
  }

  async commitBlock(block: ProposedBlock, commit: Commit): Promise<void> {
    const hash = hashHeader(block.header);
    if (this.held?.hash !== hash && !(await this.checkBlock(block))) {
      throw new Error(`decided block ${hash} does not execute`);
    }
    const executed = this.held as ExecutedBlock;
    const check = verifyCommit(commit, this.chainId, this.chain.validatorsAt(block.header.number));
    if (!check.ok) throw new Error(`certificate of block ${hash} does not verify: ${check.message}`);
    this.held = undefined;
    const stored = await this.chain.commit(executed, commit, check.signers);
    failpoint("commit.beforePoolPrune");
    this.pool.removeCommitted(stored.tx_hashes);
    failpoint("commit.afterPoolPrune");
    this.events.onBlock?.(stored, executed);
  }

  broadcast(message: ConsensusMessage): void {
    this.network.broadcast(message);
  }

  onEvidence(evidence: Evidence): void {
    this.events.onEvidence?.(evidence);
  }

  onBehind(height: number): void {
    this.network.onBehind(height);
  }

  log(level: "debug" | "info" | "warn", message: string, fields?: Record<string, unknown>): void {
    this.events.log(level, message, fields);
  }

  stepTook(step: ConsensusStep, ms: number): void {
    this.events.onStep?.(step, ms);
  }

  release(): void {
    if (this.held === undefined) return;
    this.held = undefined;
    this.chain.abandon();
  }
}
