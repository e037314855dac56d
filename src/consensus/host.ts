import type { Commit, ProposedBlock, Validator } from "../chain/index.ts";
import type { SignedProposal, SignedVote } from "./messages.ts";
import type { Evidence } from "./voteSet.ts";

/**
 * The engine's contract with the node (tendermint.ts): the messages it exchanges, its timeouts,
 * and what it needs of the chain, the pool and the network (ChainConsensusHost in the node; a
 * hand-written host of its own in the scenario tests and the simulation).
 */

export type ConsensusMessage = ({ kind: "proposal" } & SignedProposal) | ({ kind: "vote" } & SignedVote);

export interface ConsensusTimeouts {
  /** Wait for a proposal: base + delta × round. */
  proposeMs: number;
  proposeDeltaMs: number;
  /** After +2/3 of any prevotes (or precommits), wait for a decisive +2/3: base + delta × round. */
  voteMs: number;
  voteDeltaMs: number;
  /**
   * The block time: round 0 of the next height starts this long after the head's timestamp (an
   * idle chain makes a block each time).
   */
  commitMs: number;
  /**
   * The block time while transactions wait (at most commitMs): a proposer holding transactions
   * proposes this long after the head's timestamp instead, and the others start round 0 when its
   * proposal arrives. Below the block time, a transaction waits less for the next proposal; the
   * chain makes blocks faster only while it has transactions to put in them.
   */
  busyBlockMs: number;
  /** Re-send our proposal and votes of an undecided height, for peers that missed them. */
  rebroadcastMs: number;
}

/**
 * The parts of a height whose durations the engine reports (ConsensusHost.stepTook):
 * `new_height` from the start of the height to its first round (the block time's wait), then each
 * round's `propose`, `prevote` and `precommit` (a step ends when the next begins, a round when the
 * next round or the decision begins), and `commit`, from the decision to the block being stored.
 */
export type ConsensusStep = "new_height" | "propose" | "prevote" | "precommit" | "commit";

/** What the engine needs from the node: the chain, block building/checking, and the network. */
export interface ConsensusHost {
  headNumber(): number;
  headTimestamp(): number;
  /** True when the pool holds transactions a block could take (a proposer may propose early). */
  hasPendingTransactions(): boolean;
  validatorsAt(height: number): Validator[];
  /** Builds and executes this validator's block for the height (transactions from the pool). */
  buildBlock(height: number, timestamp: number): Promise<ProposedBlock>;
  /** Checks and executes a proposed block; false (never a throw) when it is invalid. */
  checkBlock(block: ProposedBlock): Promise<boolean>;
  /** Commits the decided block with its certificate; the head moves to it. */
  commitBlock(block: ProposedBlock, commit: Commit): Promise<void>;
  broadcast(message: ConsensusMessage): void;
  /** Drops any executed, uncommitted block the host holds (before another task uses the chain). */
  release(): void;
  onEvidence(evidence: Evidence): void;
  /**
   * Validators are voting at `height`, above ours: blocks below it are committed elsewhere and
   * we should fetch them (sync). Called at once for heights beyond the next, and for the next
   * height only once its messages have waited a propose timeout (normally we commit meanwhile).
   */
  onBehind(height: number): void;
  log(level: "debug" | "info" | "warn", message: string, fields?: Record<string, unknown>): void;
  /** How long a step took, ms, told as it ends (the node's metrics; scheduler time). */
  stepTook?(step: ConsensusStep, ms: number): void;
}
