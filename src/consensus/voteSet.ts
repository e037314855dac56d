import { isQuorum, totalStake, type Validator } from "../chain/index.ts";
import type { SignedVote, VoteType } from "./messages.ts";

/** Two signed votes of one validator for one height/round/type that differ: proof of misbehaviour. */
export interface Evidence {
  validator: string;
  first: SignedVote;
  second: SignedVote;
}

export type AddResult = { kind: "added" } | { kind: "duplicate" } | { kind: "conflict"; evidence: Evidence };

class RoundVotes {
  readonly byValidator = new Map<string, SignedVote>();
  readonly stakeByHash = new Map<string, number>();
  stake = 0;
}

/**
 * The prevotes and precommits of one height, by round, weighted by the stake of each signer.
 * The caller has verified each vote's signature and that its signer is a validator of the height.
 */
export class HeightVotes {
  readonly height: number;
  private readonly stakes: Map<string, number>;
  private readonly total: number;
  private readonly rounds = new Map<string, RoundVotes>();
  /** The votes counted, by signature: a re-sent copy is known without recovering its signer. */
  private readonly bySignature = new Map<string, SignedVote>();
  /** Every round some vote was counted in (a handful): what a round skip looks through. */
  private readonly votedRounds = new Set<number>();

  constructor(height: number, validators: readonly Validator[]) {
    this.height = height;
    this.stakes = new Map(validators.map((v) => [v.address, v.stake]));
    this.total = totalStake(validators);
  }

  isValidator(address: string): boolean {
    return this.stakes.has(address);
  }

  add(signed: SignedVote, validator: string): AddResult {
    const stake = this.stakes.get(validator);
    if (stake === undefined) throw new Error(`${validator} is not a validator of height ${this.height}`);
    const { type, round, block_hash } = signed.vote;
    const votes = this.entry(type, round);
    const previous = votes.byValidator.get(validator);
    if (previous !== undefined) {
      if (previous.vote.block_hash === block_hash) return { kind: "duplicate" };
      return { kind: "conflict", evidence: { validator, first: previous, second: signed } };
    }
    votes.byValidator.set(validator, signed);
    votes.stakeByHash.set(block_hash, (votes.stakeByHash.get(block_hash) ?? 0) + stake);
    votes.stake += stake;
    this.bySignature.set(signed.signature, signed);
    this.votedRounds.add(round);
    return { kind: "added" };
  }

  /**
   * True when this very vote (the same body under the same signature) is already counted: a copy
   * that a peer re-sent. Its signer is the one recovered when it was counted, so the caller may
   * skip recovering it again.
   */
  holds(signed: SignedVote): boolean {
    const held = this.bySignature.get(signed.signature)?.vote;
    const vote = signed.vote;
    return (
      held !== undefined &&
      held.type === vote.type &&
      held.chain_id === vote.chain_id &&
      held.height === vote.height &&
      held.round === vote.round &&
      held.block_hash === vote.block_hash
    );
  }

  /** The block hash ("" for nil) that more than 2/3 of the stake voted for in this round, if any. */
  quorumFor(type: VoteType, round: number): string | undefined {
    for (const [hash, stake] of this.peek(type, round).stakeByHash) {
      if (isQuorum(stake, this.total)) return hash;
    }
    return undefined;
  }

  hasQuorumFor(type: VoteType, round: number, hash: string): boolean {
    return isQuorum(this.peek(type, round).stakeByHash.get(hash) ?? 0, this.total);
  }

  /** More than 2/3 of the stake voted in this round, for anything. */
  hasQuorumAny(type: VoteType, round: number): boolean {
    return isQuorum(this.peek(type, round).stake, this.total);
  }

  /** The rounds in which some vote is counted. */
  votedIn(): ReadonlySet<number> {
    return this.votedRounds;
  }

  /** More than 1/3 of the stake sent some vote in `round`: at least one honest validator is there. */
  hasOneThirdAny(round: number): boolean {
    const voters = new Set([
      ...this.peek("prevote", round).byValidator.keys(),
      ...this.peek("precommit", round).byValidator.keys(),
    ]);
    let stake = 0;
    for (const v of voters) stake += this.stakes.get(v) ?? 0;
    return stake * 3 > this.total;
  }

  /** The signatures of the precommits for `hash` in `round`: a commit certificate. */
  precommitSignatures(round: number, hash: string): string[] {
    const signatures: string[] = [];
    for (const signed of this.peek("precommit", round).byValidator.values()) {
      if (signed.vote.block_hash === hash) signatures.push(signed.signature);
    }
    return signatures;
  }

  /** Every vote held, for re-broadcast to peers that missed them. */
  all(): SignedVote[] {
    return [...this.rounds.values()].flatMap((r) => [...r.byValidator.values()]);
  }

  /** The votes of one type and round, created empty when there are none yet. */
  private entry(type: VoteType, round: number): RoundVotes {
    const key = `${type}/${round}`;
    let votes = this.rounds.get(key);
    if (votes === undefined) {
      votes = new RoundVotes();
      this.rounds.set(key, votes);
    }
    return votes;
  }

  /** The votes of one type and round, for reading (nothing is created for a query). */
  private peek(type: VoteType, round: number): RoundVotes {
    return this.rounds.get(`${type}/${round}`) ?? NO_VOTES;
  }
}

const NO_VOTES = new RoundVotes();
