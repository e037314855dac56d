/**
 * How many transactions a proposer may put in a block so that the block is built, sent and
 * received within the validators' propose timeout. Without a bound, a full pool makes a block
 * (5,000 transfers) that takes the proposer longer to execute than the timeout: every validator
 * prevotes nil, the next round's proposer builds the same block just as slowly, and a height took
 * 80 s in the network bench. CometBFT leaves this to the operator (block size in genesis); here the
 * proposer measures how fast it executes and caps its proposals at what fits in `budgetMs`.
 *
 * The rate is an exponentially weighted average over recent executions (own builds and checks of
 * others' proposals), so it follows the machine's load; blocks too small to time are ignored.
 */
export class BuildBudget {
  private readonly budgetMs: number;
  private readonly minTxs: number;
  private readonly initialTxs: number;
  /** Transactions executed per millisecond; undefined until a block big enough was timed. */
  private perMs: number | undefined;

  constructor(options: { budgetMs: number; minTxs?: number; initialTxs?: number }) {
    this.budgetMs = options.budgetMs;
    this.minTxs = options.minTxs ?? MIN_TXS;
    this.initialTxs = options.initialTxs ?? INITIAL_TXS;
  }

  /** Records one execution of `txs` transactions that took `ms`. */
  record(txs: number, ms: number): void {
    if (txs < MIN_TIMED_TXS || !(ms > 0)) return;
    const rate = txs / ms;
    this.perMs = this.perMs === undefined ? rate : (1 - WEIGHT) * this.perMs + WEIGHT * rate;
  }

  /** The most transactions the next proposal should hold. */
  limit(): number {
    if (this.perMs === undefined) return this.initialTxs;
    return Math.max(this.minTxs, Math.floor(this.perMs * this.budgetMs));
  }
}

/** Never fewer than this per block, however slow the machine: progress over latency. */
const MIN_TXS = 100;
/** Before anything was timed: small enough for a slow machine, big enough to time. */
const INITIAL_TXS = 500;
/** Executions of fewer transactions than this say more about fixed costs than about the rate. */
const MIN_TIMED_TXS = 50;
/** Weight of the newest measurement. */
const WEIGHT = 0.3;
