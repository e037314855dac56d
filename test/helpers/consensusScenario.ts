import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Commit, hashHeader, type ProposedBlock, type Validator } from "../../src/chain/index.ts";
import {
  type ConsensusHost,
  type ConsensusMessage,
  type ConsensusStep,
  type ConsensusTimeouts,
  ConsensusSigner,
  type Evidence,
  ProposerSchedule,
  recoverBodySigner,
  signBody,
  TendermintEngine,
  type VoteType,
} from "../../src/consensus/index.ts";
import { type DerivedAccount, deriveAccounts, hexToBytes, keccakHex } from "../../src/crypto/index.ts";
import { ManualScheduler } from "./manualScheduler.ts";

/**
 * One real TendermintEngine (validator "us") among stub validators that the test plays: it
 * writes their proposals and votes (really signed, with their own keys), delivers them, moves a
 * manual clock, and reads what the engine broadcast, committed and reported. The host is a stub
 * too: blocks are headers with no transactions, valid unless the test says otherwise, so a
 * scenario is about the consensus rules alone.
 */

export const SCENARIO_CHAIN_ID = 7;
export const SCENARIO_TIMEOUTS: ConsensusTimeouts = {
  proposeMs: 1_000,
  proposeDeltaMs: 500,
  voteMs: 800,
  voteDeltaMs: 400,
  commitMs: 1_000,
  busyBlockMs: 500,
  // Far beyond any scenario, so that re-sent votes do not blur what each step sent.
  rebroadcastMs: 600_000,
};
const ZERO_HASH = `0x${"00".repeat(32)}`;
const MNEMONIC = "test test test test test test test test test test test junk";

export type ProposalMessage = Extract<ConsensusMessage, { kind: "proposal" }>;
export type VoteMessage = Extract<ConsensusMessage, { kind: "vote" }>;

export interface Committed {
  block: ProposedBlock;
  commit: Commit;
}

export class Scenario {
  readonly clock = new ManualScheduler();
  readonly accounts: DerivedAccount[];
  readonly validators: Validator[];
  readonly schedule: ProposerSchedule;
  /** The validator the engine runs as. */
  readonly us: DerivedAccount;
  readonly engine: TendermintEngine;
  /** What the engine broadcast, in order. */
  readonly sent: ConsensusMessage[] = [];
  readonly committed: Committed[] = [];
  readonly evidence: Evidence[] = [];
  readonly behind: number[] = [];
  readonly warnings: string[] = [];
  /** What the engine told of each part of a height as it ended (ConsensusHost.stepTook). */
  readonly steps: { step: ConsensusStep; ms: number }[] = [];
  /** Signatures the engine recovered a signer from. */
  recoveries = 0;
  /** Heights for which the engine built a block of its own. */
  readonly built: number[] = [];
  /** What the host answers to hasPendingTransactions (the pool holds something a block could take). */
  pending = false;
  /** Block hashes the host judges invalid. */
  readonly invalid = new Set<string>();
  /** While set, commits wait for it (holdCommits). */
  private commitGate: Promise<void> | undefined;
  private releaseCommits = (): void => undefined;
  private head: { number: number; timestamp: number };
  private readonly dir: string;
  private readonly signer: ConsensusSigner;

  /**
   * `us` picks the engine's validator: an index, or a function of the proposer schedule (e.g.
   * "the one that proposes no round below 3").
   */
  constructor(options: { stakes?: number[]; us?: number | ((s: ProposerSchedule) => string) } = {}) {
    const stakes = options.stakes ?? [1_000, 1_000, 1_000, 1_000];
    this.accounts = deriveAccounts(MNEMONIC, stakes.length);
    this.validators = this.accounts.map((a, i) => ({ address: a.address, stake: stakes[i] ?? 0 }));
    this.schedule = new ProposerSchedule(() => this.validators);
    const pick = options.us ?? 0;
    const address = typeof pick === "number" ? this.accounts[pick]?.address : pick(this.schedule);
    const us = this.accounts.find((a) => a.address === address);
    if (us === undefined) throw new Error(`no validator ${String(address)}`);
    this.us = us;
    this.head = { number: 0, timestamp: this.clock.now() - SCENARIO_TIMEOUTS.commitMs };
    this.dir = mkdtempSync(join(tmpdir(), "chain-node-scenario-"));
    this.signer = ConsensusSigner.open(join(this.dir, "signed.jsonl"), hexToBytes(us.privateKey));
    this.engine = new TendermintEngine(this.host(), {
      chainId: SCENARIO_CHAIN_ID,
      timeouts: SCENARIO_TIMEOUTS,
      signer: this.signer,
      scheduler: this.clock,
      recover: (body, signature) => {
        this.recoveries++;
        return recoverBodySigner(body, signature);
      },
    });
  }

  private host(): ConsensusHost {
    return {
      headNumber: () => this.head.number,
      headTimestamp: () => this.head.timestamp,
      hasPendingTransactions: () => this.pending,
      validatorsAt: () => this.validators,
      buildBlock: async (height, timestamp) => {
        this.built.push(height);
        return this.block(height, `built by us at ${timestamp}`, this.us.address);
      },
      checkBlock: async (block) => !this.invalid.has(hashHeader(block.header)),
      commitBlock: async (block, commit) => {
        await this.commitGate;
        this.committed.push({ block, commit });
        this.head = { number: block.header.number, timestamp: block.header.timestamp };
      },
      broadcast: (message) => this.sent.push(message),
      release: () => undefined,
      onEvidence: (evidence) => this.evidence.push(evidence),
      onBehind: (height) => this.behind.push(height),
      log: (level, message, fields) => {
        if (level === "warn") this.warnings.push(`${message} ${JSON.stringify(fields ?? {})}`);
      },
      stepTook: (step, ms) => this.steps.push({ step, ms }),
    };
  }

  /** Starts the engine and lets the block time pass: round 0 of height 1 is under way. */
  async start(): Promise<void> {
    this.engine.start();
    await this.advance(0);
  }

  /**
   * Makes commits wait until the returned function is called (stop() calls it too): a test can
   * act while a decided block is being written.
   */
  holdCommits(): () => void {
    this.commitGate = new Promise<void>((resolve) => {
      this.releaseCommits = () => {
        this.commitGate = undefined;
        resolve();
      };
    });
    return () => this.releaseCommits();
  }

  async stop(): Promise<void> {
    this.releaseCommits();
    await this.engine.stop();
    this.signer.close();
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** Lets every queued input be handled, and what those queued in turn. */
  async settle(): Promise<void> {
    for (let i = 0; i < 1_000; i++) {
      const work = this.engine.idle();
      await work;
      if (this.engine.idle() === work) return;
    }
    throw new Error("the engine never went idle");
  }

  advance(ms: number): Promise<void> {
    return this.clock.advance(ms, () => this.settle());
  }

  /** Fires timers one by one until `done()` holds; returns how much simulated time that took. */
  async runUntil(what: string, done: () => boolean, limitMs = 120_000): Promise<number> {
    const started = this.clock.now();
    await this.settle();
    while (!done()) {
      if (this.clock.fireNext(started + limitMs) === undefined) throw new Error(`never happened: ${what}`);
      await this.settle();
    }
    return this.clock.now() - started;
  }

  /** Hands messages to the engine as if from the network; returns its verdicts once handled. */
  async deliver(...messages: ConsensusMessage[]): Promise<Array<"accept" | "ignore" | "reject">> {
    const verdicts = messages.map((m) => this.engine.receive(structuredClone(m)));
    await this.settle();
    return verdicts;
  }

  /** A block for `height` that differs from others by `label` (folded into its state root). */
  block(height: number, label: string, proposer?: string): ProposedBlock {
    return {
      header: {
        parent_hash: ZERO_HASH,
        number: height,
        timestamp: Math.max(this.clock.now(), this.head.timestamp + 1),
        proposer: proposer ?? this.schedule.proposer(height, 0),
        transactions_hash: ZERO_HASH,
        state_root: keccakHex(label),
        last_commit_hash: ZERO_HASH,
        size: 2,
      },
      txs: [],
      last_commit: null,
    };
  }

  account(address: string): DerivedAccount {
    const account = this.accounts.find((a) => a.address === address);
    if (account === undefined) throw new Error(`no validator ${address}`);
    return account;
  }

  /** The validators other than us, in genesis order (the stub validators a test plays). */
  others(): DerivedAccount[] {
    return this.accounts.filter((a) => a !== this.us);
  }

  proposal(
    block: ProposedBlock,
    round: number,
    options: { polRound?: number; from?: string } = {},
  ): ProposalMessage {
    const height = block.header.number;
    const from = this.account(options.from ?? this.schedule.proposer(height, round));
    const body = {
      type: "proposal" as const,
      chain_id: SCENARIO_CHAIN_ID,
      height,
      round,
      pol_round: options.polRound ?? -1,
      block_hash: hashHeader(block.header),
    };
    return {
      kind: "proposal",
      proposal: body,
      signature: signBody(body, hexToBytes(from.privateKey)),
      block,
    };
  }

  vote(from: DerivedAccount, type: VoteType, height: number, round: number, blockHash: string): VoteMessage {
    const body = { type, chain_id: SCENARIO_CHAIN_ID, height, round, block_hash: blockHash };
    return { kind: "vote", vote: body, signature: signBody(body, hexToBytes(from.privateKey)) };
  }

  /** The same vote from each of `from`. */
  votes(
    from: DerivedAccount[],
    type: VoteType,
    height: number,
    round: number,
    blockHash: string,
  ): VoteMessage[] {
    return from.map((account) => this.vote(account, type, height, round, blockHash));
  }

  /** The block hash of our vote of `type` at height/round ("" for nil), undefined when we sent none. */
  ourVote(type: VoteType, round: number, height = 1): string | undefined {
    const votes = this.sent.flatMap((m) =>
      m.kind === "vote" && m.vote.type === type && m.vote.round === round && m.vote.height === height
        ? [m.vote.block_hash]
        : [],
    );
    if (new Set(votes).size > 1) throw new Error(`we sent two different ${type}s in round ${round}`);
    return votes[0];
  }

  ourProposals(): ProposalMessage[] {
    return this.sent.flatMap((m) => (m.kind === "proposal" ? [m] : []));
  }

  /** The proposer of (height, round) as a stub validator; throws when it is us. */
  proposerAccount(height: number, round: number): DerivedAccount {
    const account = this.account(this.schedule.proposer(height, round));
    if (account === this.us) throw new Error(`we propose round ${round} of height ${height}`);
    return account;
  }
}

export const hashOf = (block: ProposedBlock): string => hashHeader(block.header);
