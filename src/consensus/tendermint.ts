import { type Commit, hashHeader } from "../chain/index.ts";
import { failpoint } from "../faults/index.ts";
import type { ConsensusHost, ConsensusMessage, ConsensusStep, ConsensusTimeouts } from "./host.ts";
import {
  type ProposalBody,
  recoverBodySigner,
  type SignedProposal,
  type SignedVote,
  type VoteBody,
  type VoteType,
} from "./messages.ts";
import { ProposerSchedule } from "./proposer.ts";
import { realScheduler, type Scheduler } from "./scheduler.ts";
import { DoubleSignError, type VoteSigner } from "./signer.ts";
import { HeightVotes } from "./voteSet.ts";

/**
 * Tendermint consensus (Buchman, Kwon, Milosevic 2018, Algorithm 1) for one validator: rounds of
 * propose / prevote / precommit with locking, timeouts that grow with the round, and a decision
 * on +2/3 precommits of the stake. Inputs (messages, timeouts) are handled one at a time in
 * arrival order; after each, every "upon" rule of the paper is re-evaluated.
 *
 * Everything outside the rules is injected: the chain and the network (`ConsensusHost`), the
 * validator's key behind its double-sign guard (`VoteSigner`), time and timers (`Scheduler`) and
 * the signature check (`recover`). test/unit/consensus/scenarios.test.ts drives one engine on a
 * manual clock through the paper's cases; bench/consensusSim.ts runs a hundred of them.
 *
 * Why this file is long: the "upon" rules all read and write one round state (height, round,
 * step, lock, valid value, proposals, votes), and kept together they can be read against the
 * paper line by line; the engine's contract with the node is apart (host.ts).
 */

type Step = "propose" | "prevote" | "precommit";

interface HeldProposal {
  signed: SignedProposal;
  hash: string;
  valid: boolean;
}

const MAX_BUFFERED = 10_000;

/** The first round of a height, as its start scheduled it. */
interface FirstRound {
  height: number;
  /** Which start of the height this is (see heightStarts). */
  generation: number;
  /** 0, or the round a restart resumes in. */
  round: number;
  resumed: boolean;
  /** From when (scheduler time) a proposer holding transactions may propose. */
  busyAt: number;
}

export class TendermintEngine {
  private readonly host: ConsensusHost;
  private readonly signer: VoteSigner | undefined;
  private readonly scheduler: Scheduler;
  private readonly recover: (body: VoteBody | ProposalBody, signature: string) => string | undefined;
  private readonly chainId: number;
  private readonly timeouts: ConsensusTimeouts;
  private readonly schedule: ProposerSchedule;

  private height = 0;
  private round = 0;
  private step: Step = "propose";
  /** The part of the height under way and since when (scheduler time), for ConsensusHost.stepTook. */
  private timing: { part: ConsensusStep; since: number } | undefined;
  private votes: HeightVotes | undefined;
  private proposals = new Map<number, HeldProposal>();
  private locked: { round: number; proposal: HeldProposal | undefined } = { round: -1, proposal: undefined };
  private valid: { round: number; proposal: HeldProposal | undefined } = { round: -1, proposal: undefined };
  /** Once-per-round rules already fired, as "rule/round". */
  private fired = new Set<string>();
  private decided = false;
  /** False while waiting out the block time: messages are kept, rules wait for round 0. */
  private roundStarted = false;
  /** Starts of a height so far; a delayed first round belongs to the latest one only. */
  private heightStarts = 0;
  /** How the current height's first round begins (set by startHeight). */
  private firstRound: FirstRound | undefined;
  private readonly nextHeight: ConsensusMessage[] = [];
  /** When the first message of the next height arrived while we were still at this one. */
  private nextHeightSince: number | undefined;
  /** Cancels of the timers set and not yet fired. */
  private readonly timers = new Set<() => void>();
  private work: Promise<void> = Promise.resolve();
  private stopped = true;

  constructor(
    host: ConsensusHost,
    options: {
      chainId: number;
      timeouts: ConsensusTimeouts;
      signer?: VoteSigner;
      /** Real timers and Date.now unless given. */
      scheduler?: Scheduler;
      /** The signer of a message body, undefined when the signature is bad (secp256k1 unless given). */
      recover?: (body: VoteBody | ProposalBody, signature: string) => string | undefined;
    },
  ) {
    this.host = host;
    this.signer = options.signer;
    this.scheduler = options.scheduler ?? realScheduler();
    this.recover = options.recover ?? recoverBodySigner;
    this.chainId = options.chainId;
    this.timeouts = options.timeouts;
    this.schedule = new ProposerSchedule((h) => host.validatorsAt(h));
  }

  start(): void {
    this.stopped = false;
    this.enqueue(() => this.startHeight());
  }

  /** Stops timers and waits for the input being handled. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const cancel of this.timers) cancel();
    this.timers.clear();
    await this.work;
  }

  /** Resolves once every input queued so far has been handled (tests on a manual clock wait on it). */
  idle(): Promise<void> {
    return this.work;
  }

  /** Where the engine is, for logs and status. */
  status(): { height: number; round: number; step: Step } {
    return { height: this.height, round: this.round, step: this.step };
  }

  /**
   * Runs `task` between two inputs, with the chain free (sync commits blocks this way). If the
   * head moved meanwhile, consensus starts over at the new height.
   */
  exclusive<T>(task: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.work = this.work.then(async () => {
        this.host.release();
        try {
          resolve(await task());
        } catch (error) {
          reject(error);
        }
        if (!this.stopped && this.host.headNumber() + 1 !== this.height) {
          await this.startHeight().catch((error: unknown) =>
            this.host.log("warn", "consensus restart failed", { error: String(error) }),
          );
        }
      });
    });
  }

  /**
   * A message from a peer (already schema-checked). Returns "reject" when it is provably bad
   * (wrong signature, not a validator, not the round's proposer), so its sender can be scored down.
   */
  receive(message: ConsensusMessage): "accept" | "ignore" | "reject" {
    const body = message.kind === "vote" ? message.vote : message.proposal;
    if (body.chain_id !== this.chainId) return "reject";
    if (body.height < this.height || (body.height === this.height && this.decided)) return "ignore";
    if (body.height > this.height + 1) {
      this.host.onBehind(body.height);
      return "ignore";
    }
    if (body.height === this.height + 1) {
      // Usually peers are ahead by a moment and we commit too. If we missed this height's
      // decision (its proposal never reached us), no one will send it again: fetch the block.
      const now = this.scheduler.now();
      this.nextHeightSince ??= now;
      if (now - this.nextHeightSince > this.timeouts.proposeMs) this.host.onBehind(body.height);
      if (this.nextHeight.length < MAX_BUFFERED) this.nextHeight.push(message);
      return "ignore";
    }
    // Validators re-send the votes of an undecided height (rebroadcastMs): with many validators
    // most votes that arrive are such copies (bench/consensusSim.ts), each worth a signature recovery.
    if (message.kind === "vote" && this.votes?.holds(message) === true) return "accept";
    const signer = this.recover(body, message.signature);
    if (signer === undefined || this.votes?.isValidator(signer) !== true) return "reject";
    if (message.kind === "proposal") {
      if (signer !== this.schedule.proposer(body.height, body.round)) return "reject";
      if (hashHeader(message.block.header) !== message.proposal.block_hash) return "reject";
    }
    this.enqueue(() => this.handle(message, signer));
    return "accept";
  }

  private enqueue(task: () => Promise<void> | void): void {
    this.work = this.work
      .then(async () => {
        if (!this.stopped) await task();
      })
      .catch((error: unknown) => {
        this.host.log("warn", "consensus step failed", { error: String(error), height: this.height });
      });
  }

  private after(ms: number, task: () => Promise<void> | void): void {
    const cancel = this.scheduler.after(ms, () => {
      this.timers.delete(cancel);
      this.enqueue(task);
    });
    this.timers.add(cancel);
  }

  // ---- heights and rounds ----

  private async startHeight(): Promise<void> {
    const next = this.host.headNumber() + 1;
    if (next === this.height && this.votes !== undefined && !this.decided) {
      // Already deciding this height: starting it over would drop its votes, proposals and lock,
      // and a second round-0 start would try to sign behind what was signed since (the guard in
      // signer.ts refused such votes in the network bench: "prevote at 33/0, already 33/1").
      this.host.log("debug", "height already started", { height: next, round: this.round });
      return;
    }
    this.height = next;
    // Whatever part of an abandoned height was under way (sync moved the head) is not reported.
    this.timing = { part: "new_height", since: this.scheduler.now() };
    this.votes = new HeightVotes(this.height, this.host.validatorsAt(this.height));
    this.proposals = new Map();
    this.locked = { round: -1, proposal: undefined };
    this.valid = { round: -1, proposal: undefined };
    this.fired = new Set();
    this.decided = false;
    this.roundStarted = false;
    this.nextHeightSince = undefined;
    // After a restart mid-height, rounds we already signed in are behind us.
    const last = this.signer?.lastSigned();
    const resumed = last !== undefined && last.height === this.height;
    const start: FirstRound = {
      height: this.height,
      generation: ++this.heightStarts,
      round: resumed ? last.round : 0,
      resumed,
      busyAt: this.scheduler.now() + this.untilHeadPlus(this.timeouts.busyBlockMs),
    };
    this.firstRound = start;
    this.after(this.untilHeadPlus(this.timeouts.commitMs), () => this.beginFirstRound(start));
    if (resumed) return;
    // Messages of this height that came while we were finishing the last one: kept now (a
    // proposal among them may begin round 0 at once), acted on once round 0 begins.
    for (const message of this.nextHeight.splice(0)) this.receive(message);
    if (this.isOurProposal(start.height, 0)) {
      this.after(this.untilHeadPlus(this.timeouts.busyBlockMs), () => this.proposeIfBusy());
    }
  }

  /**
   * How long from now until the head's timestamp plus `ms`, but never longer than `ms` itself:
   * that timestamp comes from its proposer's clock, and a validator whose clock is behind (by 30 s
   * in test/e2e/networkFaults.test.ts) otherwise sat out every height until its own clock caught
   * up with it, signing nothing; two such of four halt the chain.
   */
  private untilHeadPlus(ms: number): number {
    return Math.max(0, Math.min(ms, this.host.headTimestamp() + ms - this.scheduler.now()));
  }

  private isOurProposal(height: number, round: number): boolean {
    return this.signer !== undefined && this.schedule.proposer(height, round) === this.signer.address;
  }

  /**
   * Transactions arrived (admitted here or from a peer): a proposer waiting out the block time
   * with its pool empty proposes now if the busy block time has passed.
   */
  transactionsArrived(): void {
    const start = this.firstRound;
    if (start === undefined || start.resumed || this.roundStarted || this.scheduler.now() < start.busyAt)
      return;
    if (!this.isOurProposal(start.height, 0)) return;
    this.enqueue(() => this.proposeIfBusy());
  }

  /** Round 0 now, if it is ours to propose and there is something to propose. */
  private async proposeIfBusy(): Promise<void> {
    const start = this.firstRound;
    if (start === undefined || start.height !== this.height || this.roundStarted || this.decided) return;
    if (!this.host.hasPendingTransactions()) return;
    await this.beginFirstRound(start);
  }

  /** Begins the height's first round (round 0, or where a restart left us): once per start of the height. */
  private async beginFirstRound(start: FirstRound): Promise<void> {
    const { height, generation, round, resumed } = start;
    // Only the latest start of this height may begin its first round, and only once.
    if (generation !== this.heightStarts || this.height !== height || this.decided || this.roundStarted)
      return;
    if (resumed) {
      await this.restoreSigned(height);
      if (this.height !== height || this.decided || this.roundStarted) return;
    }
    await this.startRound(round);
    if (resumed) {
      // Resumed in a round we had signed in before a crash: the guard refuses every step of it
      // but the identical last message. If what was signed could not all be restored (a crash
      // between signing our proposal and keeping it) and no one else can end the round (a
      // validator with more than 2/3 of the stake, e.g. a one-validator network), nothing would
      // ever fire and the height stalled for good (test/e2e/failpoints.test.ts). So the round
      // gets a deadline: a whole round's timeouts, then the next round, as a precommit timeout.
      this.after(
        this.timeouts.proposeMs + this.timeouts.proposeDeltaMs * round + 2 * this.voteTimeout(round),
        () => this.onTimeoutPrecommit(height, round),
      );
    }
    const buffered = this.nextHeight.splice(0);
    for (const message of buffered) this.receive(message);
    this.scheduleRebroadcast(height);
  }

  private async startRound(round: number): Promise<void> {
    this.round = round;
    this.enterStep("propose");
    this.roundStarted = true;
    const height = this.height;
    const proposer = this.schedule.proposer(height, round);
    this.host.log("debug", "round started", { height, round, proposer });
    if (this.signer !== undefined && proposer === this.signer.address) {
      await this.propose(height, round);
    } else {
      this.after(this.timeouts.proposeMs + this.timeouts.proposeDeltaMs * round, () =>
        this.onTimeoutPropose(height, round),
      );
    }
    await this.evaluate();
  }

  /**
   * After a restart mid-height: takes back what this validator signed at `height` before the
   * crash — the proposals it proposed or voted for (kept with their blocks by the signer), its
   * prevotes and precommits, and the lock its precommit made — so it goes on from where it was,
   * as Algorithm 1 assumes of a correct process, instead of forgetting ("amnesia"): a validator
   * that forgot its precommit could go on to commit another block at the height, and with more
   * than 2/3 of the stake its lone precommit may already have certified the first one.
   */
  private async restoreSigned(height: number): Promise<void> {
    const signer = this.signer;
    if (signer === undefined || this.votes === undefined) return;
    const saved = signer.savedProposals(height);
    for (const signed of saved) {
      if (this.proposals.has(signed.proposal.round)) continue;
      const valid = await this.host.checkBlock(signed.block);
      if (this.height !== height) return;
      this.proposals.set(signed.proposal.round, { signed, hash: signed.proposal.block_hash, valid });
    }
    for (const record of signer.signedAtOpen(height)) {
      const body = record.body;
      if (body.type === "proposal") continue;
      this.votes.add({ vote: body, signature: record.signature }, signer.address);
      if (body.type !== "precommit" || body.block_hash === "" || record.round <= this.locked.round) continue;
      const proposal = [...this.proposals.values()].find((p) => p.valid && p.hash === body.block_hash);
      if (proposal === undefined) continue;
      this.locked = { round: record.round, proposal };
      this.valid = { round: record.round, proposal };
    }
    this.host.log("info", "resumed a height signed in before a restart", {
      height,
      restoredProposals: saved.length,
      lockedRound: this.locked.round,
    });
  }

  private async propose(height: number, round: number): Promise<void> {
    // Our own proposal of this round, restored after a restart: it stands (the guard would refuse another).
    if (this.proposals.has(round)) return;
    const reuse = this.valid.proposal;
    const block =
      reuse?.signed.block ??
      (await this.host.buildBlock(height, Math.max(this.scheduler.now(), this.host.headTimestamp() + 1)));
    const body: ProposalBody = {
      type: "proposal",
      chain_id: this.chainId,
      height,
      round,
      pol_round: reuse === undefined ? -1 : this.valid.round,
      block_hash: hashHeader(block.header),
    };
    const signature = this.sign(body);
    if (signature === undefined) return;
    const signed: SignedProposal = { proposal: body, signature, block };
    // Kept before anyone can see it; a crash before this leaves a proposal no one received.
    this.signer?.saveProposal(signed);
    this.proposals.set(round, { signed, hash: body.block_hash, valid: true });
    this.host.broadcast({ kind: "proposal", ...signed });
    failpoint("sign.afterSend");
  }

  private async handle(message: ConsensusMessage, signer: string): Promise<void> {
    if (message.kind === "vote") {
      if (message.vote.height !== this.height) return;
      const result = this.votes?.add(message, signer);
      if (result?.kind === "conflict") this.host.onEvidence(result.evidence);
      if (result?.kind !== "added") return;
    } else {
      const { proposal, block } = message;
      if (proposal.height !== this.height || this.proposals.has(proposal.round)) return;
      if (proposal.pol_round >= proposal.round) return;
      const valid = await this.host.checkBlock(block);
      if (this.height !== proposal.height) return;
      this.proposals.set(proposal.round, { signed: message, hash: proposal.block_hash, valid });
      if (!valid)
        this.host.log("warn", "invalid proposal", { height: proposal.height, round: proposal.round });
      // The round's proposer proposed before our block time was up (it held transactions, see
      // ConsensusTimeouts.busyBlockMs): round 0 begins now rather than when our timer says.
      const start = this.firstRound;
      if (!this.roundStarted && proposal.round === 0 && start?.height === this.height && !start.resumed) {
        await this.beginFirstRound(start);
        return;
      }
    }
    await this.evaluate();
  }

  // ---- the paper's "upon" rules ----

  private async evaluate(): Promise<void> {
    const votes = this.votes;
    if (votes === undefined || this.decided || !this.roundStarted) return;
    if (await this.tryDecide(votes)) return;
    const skipTo = this.roundToSkipTo(votes);
    if (skipTo !== undefined) {
      await this.startRound(skipTo);
      return;
    }
    const round = this.round;
    const stepBefore = this.step;
    const proposal = this.proposals.get(round);
    if (this.step === "propose" && proposal !== undefined) this.prevoteOnProposal(proposal, votes);
    // A timeout is for the height and round it was set in (captured here, not read when it fires:
    // it fires voteMs later, often heights later, and must not end a round of that later height).
    const height = this.height;
    if (this.step === "prevote" && votes.hasQuorumAny("prevote", round)) {
      this.once(`prevote-wait/${round}`, () =>
        this.after(this.voteTimeout(round), () => this.onTimeoutPrevote(height, round)),
      );
    }
    if (
      proposal?.valid === true &&
      this.step !== "propose" &&
      votes.hasQuorumFor("prevote", round, proposal.hash)
    ) {
      this.once(`polka/${round}`, () => {
        if (this.step === "prevote") {
          this.locked = { round, proposal };
          this.vote("precommit", proposal.hash);
          this.enterStep("precommit");
        }
        this.valid = { round, proposal };
      });
    }
    if (this.step === "prevote" && votes.quorumFor("prevote", round) === "") {
      this.vote("precommit", "");
      this.enterStep("precommit");
    }
    if (votes.hasQuorumAny("precommit", round)) {
      this.once(`precommit-wait/${round}`, () =>
        this.after(this.voteTimeout(round), () => this.onTimeoutPrecommit(height, round)),
      );
    }
    // Our own votes are messages too: the prevote we just cast may make the polka, the precommit
    // the +2/3 that decides (a validator with most of the stake, or alone). The step only moves
    // forward within a round, so this recursion ends.
    if (this.step !== stepBefore && this.height === height && this.round === round) await this.evaluate();
  }

  /** Lines 22–33 of the paper: prevote the round's proposal, or nil. */
  private prevoteOnProposal(proposal: HeldProposal, votes: HeightVotes): void {
    const { pol_round } = proposal.signed.proposal;
    const lockedHash = this.locked.proposal?.hash;
    if (pol_round === -1) {
      const ok = proposal.valid && (this.locked.round === -1 || lockedHash === proposal.hash);
      this.vote("prevote", ok ? proposal.hash : "");
      this.enterStep("prevote");
      return;
    }
    if (votes.hasQuorumFor("prevote", pol_round, proposal.hash)) {
      const ok = proposal.valid && (this.locked.round <= pol_round || lockedHash === proposal.hash);
      this.vote("prevote", ok ? proposal.hash : "");
      this.enterStep("prevote");
    }
  }

  /** Lines 49–54: +2/3 precommits for a proposal we hold and judged valid, in any round. */
  private async tryDecide(votes: HeightVotes): Promise<boolean> {
    for (const [round, proposal] of this.proposals) {
      if (!proposal.valid || !votes.hasQuorumFor("precommit", round, proposal.hash)) continue;
      this.decided = true;
      this.endPart("commit");
      const commit: Commit = {
        height: this.height,
        round,
        block_hash: proposal.hash,
        signatures: votes.precommitSignatures(round, proposal.hash),
      };
      await this.host.commitBlock(proposal.signed.block, commit);
      this.endPart(undefined);
      this.host.log("debug", "block committed", { height: this.height, round, hash: proposal.hash });
      await this.startHeight();
      return true;
    }
    return false;
  }

  /** Line 55: +1/3 of the stake is already in a later round, so some honest validator is. */
  private roundToSkipTo(votes: HeightVotes): number | undefined {
    let target: number | undefined;
    for (const r of votes.votedIn()) {
      if (r <= this.round || r > this.round + 100 || (target !== undefined && r < target)) continue;
      if (votes.hasOneThirdAny(r)) target = r;
    }
    return target;
  }

  private onTimeoutPropose(height: number, round: number): Promise<void> | undefined {
    if (height !== this.height || round !== this.round || this.step !== "propose" || this.decided) return;
    this.vote("prevote", "");
    this.enterStep("prevote");
    return this.evaluate();
  }

  private onTimeoutPrevote(height: number, round: number): Promise<void> | undefined {
    if (height !== this.height || round !== this.round || this.step !== "prevote" || this.decided) return;
    this.vote("precommit", "");
    this.enterStep("precommit");
    return this.evaluate();
  }

  private onTimeoutPrecommit(height: number, round: number): Promise<void> | undefined {
    if (height !== this.height || round !== this.round || this.decided) return;
    return this.startRound(round + 1);
  }

  private enterStep(step: Step): void {
    this.step = step;
    this.endPart(step);
  }

  /** Ends the part of the height under way, telling the host how long it took, and begins `next`. */
  private endPart(next: ConsensusStep | undefined): void {
    const now = this.scheduler.now();
    if (this.timing !== undefined) this.host.stepTook?.(this.timing.part, now - this.timing.since);
    this.timing = next === undefined ? undefined : { part: next, since: now };
  }

  private voteTimeout(round: number): number {
    return this.timeouts.voteMs + this.timeouts.voteDeltaMs * round;
  }

  private once(rule: string, action: () => void): void {
    if (this.fired.has(rule)) return;
    this.fired.add(rule);
    action();
  }

  // ---- signing and sending ----

  private vote(type: VoteType, blockHash: string): void {
    if (this.signer === undefined || this.votes?.isValidator(this.signer.address) !== true) return;
    const body: VoteBody = {
      type,
      chain_id: this.chainId,
      height: this.height,
      round: this.round,
      block_hash: blockHash,
    };
    if (blockHash !== "") {
      // The block this vote is about is kept before the vote is signed (see restoreSigned).
      const proposal = [...this.proposals.values()].find((p) => p.hash === blockHash);
      if (proposal !== undefined) this.signer.saveProposal(proposal.signed);
    }
    const signature = this.sign(body);
    if (signature === undefined) return;
    const signed: SignedVote = { vote: body, signature };
    this.votes.add(signed, this.signer.address);
    this.host.broadcast({ kind: "vote", ...signed });
    failpoint("sign.afterSend");
  }

  /** Signs through the double-sign guard; a refusal means we stay silent this step. */
  private sign(body: VoteBody | ProposalBody): string | undefined {
    if (this.signer === undefined) return undefined;
    try {
      return this.signer.sign(body);
    } catch (error) {
      if (!(error instanceof DoubleSignError)) throw error;
      this.host.log("warn", "not signing", { reason: error.message });
      return undefined;
    }
  }

  private scheduleRebroadcast(height: number): void {
    this.after(this.timeouts.rebroadcastMs, () => {
      if (this.height !== height || this.decided) return;
      const own = this.signer?.address;
      const proposal = this.proposals.get(this.round);
      if (proposal !== undefined && own !== undefined && this.schedule.proposer(height, this.round) === own) {
        this.host.broadcast({ kind: "proposal", ...proposal.signed });
      }
      for (const vote of this.votes?.all() ?? []) this.host.broadcast({ kind: "vote", ...vote });
      this.scheduleRebroadcast(height);
    });
  }
}
