import type { Commit, ProposedBlock, Validator } from "../../src/chain/index.ts";
import {
  type ConsensusHost,
  type ConsensusMessage,
  type ConsensusTimeouts,
  DoubleSignError,
  type ProposalBody,
  type SignedRecord,
  TendermintEngine,
  type VoteBody,
  type VoteSigner,
} from "../../src/consensus/index.ts";
import { keccakHex } from "../../src/crypto/index.ts";
import { ManualScheduler } from "./manualScheduler.ts";
import { seededRandom } from "./seededRandom.ts";

/**
 * Many validators on one manual clock, to plan the network past one machine: real
 * TendermintEngines, each with a stub host (blocks are bare headers, always valid), a stub
 * signature (the signer's address and the body's canonical JSON: cheap, and still checked on
 * receipt), and a network that delivers every message to every other validator after a delay
 * drawn for that message and that receiver. Silent validators hold stake but never send. The clock
 * moves from one timer or delivery to the next; nothing waits for real time.
 */

const SIM_CHAIN_ID = 9;
const ZERO_HASH = `0x${"00".repeat(32)}`;
const STEP = { proposal: 1, prevote: 2, precommit: 3 } as const;

export interface SimOptions {
  validators: number;
  silent: number;
  heights: number;
  minDelayMs: number;
  maxDelayMs: number;
  timeouts: ConsensusTimeouts;
  seed: number;
}

export interface SimHeight {
  height: number;
  /** The round its block was decided in. */
  round: number;
  /** Live validators that committed it (every live one, or the run would not have ended). */
  committedBy: number;
  /** When the first live validator committed the previous height (0: the start) to when the first, median and last committed this one, ms. */
  firstMs: number;
  medianMs: number;
  lastMs: number;
}

export interface SimResult {
  heights: SimHeight[];
  /** Messages handed to the network (each broadcast counted once per receiver). */
  deliveries: number;
  /** Distinct blocks committed at any one height (1 everywhere, or the run found a fork). */
  maxBlocksPerHeight: number;
  /** Times a validator asked to sync (it saw votes of a later height before deciding). */
  behind: number;
  /** Live validators: `validators - silent`. */
  live: number;
  simulatedMs: number;
  realMs: number;
}

const simAddress = (i: number): string => `0x${(i + 1).toString(16).padStart(40, "0")}`;

/** A stub signature: who signed and what. Recovering it checks the body is the one signed. */
const bodyKey = (body: VoteBody | ProposalBody): string =>
  `${body.type}/${body.chain_id}/${body.height}/${body.round}/${"pol_round" in body ? body.pol_round : ""}/${body.block_hash}`;
const stubSign = (address: string, body: VoteBody | ProposalBody): string => `${address}|${bodyKey(body)}`;
function stubRecover(body: VoteBody | ProposalBody, signature: string): string | undefined {
  const bar = signature.indexOf("|");
  return bar > 0 && signature.slice(bar + 1) === bodyKey(body) ? signature.slice(0, bar) : undefined;
}

/** The double-sign guard of ConsensusSigner, in memory. */
class StubSigner implements VoteSigner {
  readonly address: string;
  private last: SignedRecord | undefined;

  constructor(address: string) {
    this.address = address;
  }

  sign(body: VoteBody | ProposalBody): string {
    const signature = stubSign(this.address, body);
    const record: SignedRecord = {
      height: body.height,
      round: body.round,
      step: STEP[body.type],
      body,
      signature,
    };
    const last = this.last;
    if (last !== undefined) {
      const order = record.height - last.height || record.round - last.round || record.step - last.step;
      if (order === 0 && last.signature === signature) return signature;
      if (order <= 0)
        throw new DoubleSignError(
          `${body.type} at ${body.height}/${body.round} is not after the last signed`,
        );
    }
    this.last = record;
    return signature;
  }
  lastSigned(): SignedRecord | undefined {
    return this.last;
  }
  signedAtOpen(): SignedRecord[] {
    return [];
  }
  saveProposal(): void {}
  savedProposals(): [] {
    return [];
  }
}

interface SimValidator {
  index: number;
  address: string;
  engine: TendermintEngine;
  head: { number: number; timestamp: number };
  commits: Map<number, { at: number; hash: string; round: number }>;
}

export async function runConsensusSim(options: SimOptions): Promise<SimResult> {
  const started = performance.now();
  const random = seededRandom(options.seed);
  const clock = new ManualScheduler();
  const startedAt = clock.now();
  const validators: Validator[] = Array.from({ length: options.validators }, (_, i) => ({
    address: simAddress(i),
    stake: 1_000,
  }));
  // The silent ones are drawn at random, so that they are spread over the proposer rotation.
  const order = validators.map((_, i) => i).sort(() => random() - 0.5);
  const silent = new Set(order.slice(0, options.silent));
  const live: SimValidator[] = [];
  let deliveries = 0;
  let behind = 0;

  const broadcast = (from: SimValidator, message: ConsensusMessage) => {
    for (const to of live) {
      if (to === from) continue;
      deliveries++;
      const delay = options.minDelayMs + random() * (options.maxDelayMs - options.minDelayMs);
      clock.forOwner(to).after(Math.round(delay), () => to.engine.receive(message));
    }
  };

  for (let index = 0; index < options.validators; index++) {
    if (silent.has(index)) continue;
    const address = simAddress(index);
    const node = { index, address, head: { number: 0, timestamp: startedAt }, commits: new Map() } as Omit<
      SimValidator,
      "engine"
    > as SimValidator;
    const host: ConsensusHost = {
      headNumber: () => node.head.number,
      headTimestamp: () => node.head.timestamp,
      hasPendingTransactions: () => false,
      validatorsAt: () => validators,
      buildBlock: async (height, timestamp) => stubBlock(height, timestamp, address),
      checkBlock: async () => true,
      commitBlock: async (block: ProposedBlock, commit: Commit) => {
        node.commits.set(block.header.number, {
          at: clock.now(),
          hash: commit.block_hash,
          round: commit.round,
        });
        node.head = { number: block.header.number, timestamp: block.header.timestamp };
      },
      broadcast: (message) => broadcast(node, message),
      release: () => undefined,
      onEvidence: () => undefined,
      onBehind: () => {
        behind++;
      },
      log: () => undefined,
    };
    node.engine = new TendermintEngine(host, {
      chainId: SIM_CHAIN_ID,
      timeouts: options.timeouts,
      signer: new StubSigner(address),
      scheduler: clock.forOwner(node),
      recover: stubRecover,
    });
    live.push(node);
  }

  for (const node of live) node.engine.start();
  const done = () => live.every((n) => n.head.number >= options.heights);
  const limit = startedAt + options.heights * 600_000;
  await Promise.all(live.map((n) => n.engine.idle()));
  while (!done()) {
    // Everything due at one instant fires together; then each engine it touched settles.
    const owners = clock.fireDue(limit);
    if (owners.size === 0)
      throw new Error(`the simulation stalled at heads ${live.map((n) => n.head.number)}`);
    for (const owner of owners) {
      const engine = (owner as SimValidator).engine;
      for (let work = engine.idle(); ; work = engine.idle()) {
        await work;
        if (engine.idle() === work) break;
      }
    }
  }
  await Promise.all(live.map((n) => n.engine.stop()));

  const heights: SimHeight[] = [];
  let previousFirst = startedAt;
  let maxBlocksPerHeight = 0;
  for (let height = 1; height <= options.heights; height++) {
    const commits = live.map((n) => n.commits.get(height)).filter((c) => c !== undefined);
    const times = commits.map((c) => c.at).sort((a, b) => a - b);
    maxBlocksPerHeight = Math.max(maxBlocksPerHeight, new Set(commits.map((c) => c.hash)).size);
    const first = times[0] ?? previousFirst;
    heights.push({
      height,
      round: commits[0]?.round ?? -1,
      committedBy: commits.length,
      firstMs: first - previousFirst,
      medianMs: (times[Math.floor(times.length / 2)] ?? first) - previousFirst,
      lastMs: (times.at(-1) ?? first) - previousFirst,
    });
    previousFirst = first;
  }
  return {
    heights,
    deliveries,
    maxBlocksPerHeight,
    behind,
    live: live.length,
    simulatedMs: clock.now() - startedAt,
    realMs: performance.now() - started,
  };
}

function stubBlock(height: number, timestamp: number, proposer: string): ProposedBlock {
  const header = {
    parent_hash: ZERO_HASH,
    number: height,
    timestamp,
    proposer,
    transactions_hash: ZERO_HASH,
    state_root: keccakHex(`${height}/${proposer}/${timestamp}`),
    last_commit_hash: ZERO_HASH,
    size: 2,
  };
  return { header, txs: [], last_commit: null };
}
