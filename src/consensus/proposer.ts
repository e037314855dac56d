import type { Validator } from "../chain/index.ts";

/**
 * Stake-weighted proposer rotation after CometBFT's proposer-priority algorithm: every step each
 * validator's priority grows by its stake, the highest proposes and pays the total stake back.
 * Over any window a validator proposes in proportion to its stake, and the order is the same on
 * every node. Priorities are BigInt: stakes may be up to 2^53 and their sums exceed it.
 */
interface Entry {
  address: string;
  stake: bigint;
  priority: bigint;
}

type Priorities = Entry[];

const copy = (entries: Priorities): Priorities => entries.map((e) => ({ ...e }));
const total = (entries: Priorities): bigint => entries.reduce((sum, e) => sum + e.stake, 0n);

/** Keeps priorities within twice the total stake of each other, then centres them on zero. */
function normalise(entries: Priorities): void {
  const sum = total(entries);
  if (entries.length === 0 || sum === 0n) return;
  let max = entries[0]?.priority ?? 0n;
  let min = max;
  for (const e of entries) {
    if (e.priority > max) max = e.priority;
    if (e.priority < min) min = e.priority;
  }
  const window = 2n * sum;
  if (max - min > window) {
    const ratio = (max - min + window - 1n) / window;
    for (const e of entries) e.priority /= ratio;
  }
  const n = BigInt(entries.length);
  const all = entries.reduce((acc, e) => acc + e.priority, 0n);
  // Floor division, so the centre is the same whatever the sign (BigInt `/` truncates).
  const average = all >= 0n ? all / n : -((-all + n - 1n) / n);
  for (const e of entries) e.priority -= average;
}

/** One step: returns the proposer. Ties go to the lower address. */
function step(entries: Priorities): string {
  let chosen: Entry | undefined;
  for (const e of entries) {
    e.priority += e.stake;
    if (
      chosen === undefined ||
      e.priority > chosen.priority ||
      (e.priority === chosen.priority && e.address < chosen.address)
    ) {
      chosen = e;
    }
  }
  if (chosen === undefined) throw new Error("an empty validator set has no proposer");
  chosen.priority -= total(entries);
  return chosen.address;
}

function advance(entries: Priorities, times: number): string {
  normalise(entries);
  let proposer = "";
  for (let i = 0; i < times; i++) proposer = step(entries);
  return proposer;
}

/** Carries priorities into a new set: members keep theirs, newcomers start at the back. */
function carryOver(previous: Priorities, validators: readonly Validator[]): Priorities {
  const known = new Map(previous.map((e) => [e.address, e.priority]));
  const sum = validators.reduce((acc, v) => acc + BigInt(v.stake), 0n);
  const newcomer = -(sum + sum / 8n); // −1.125 × total, as CometBFT
  const entries = validators.map((v) => ({
    address: v.address,
    stake: BigInt(v.stake),
    priority: known.get(v.address) ?? newcomer,
  }));
  normalise(entries);
  return entries;
}

const sameSet = (entries: Priorities, validators: readonly Validator[]): boolean =>
  entries.length === validators.length &&
  entries.every(
    (e, i) => e.address === validators[i]?.address && e.stake === BigInt(validators[i]?.stake ?? -1),
  );

/**
 * Proposers by height and round. Heights are computed forward from the last one asked for (from
 * height 1 after a restart: O(height × validators) once, which is milliseconds for 10^5 blocks).
 */
export class ProposerSchedule {
  private readonly validatorsAt: (height: number) => readonly Validator[];
  private height = 0;
  private priorities: Priorities = [];
  private roundZero = "";

  constructor(validatorsAt: (height: number) => readonly Validator[]) {
    this.validatorsAt = validatorsAt;
  }

  proposer(height: number, round: number): string {
    if (height < 1 || round < 0) throw new Error(`no proposer for height ${height} round ${round}`);
    this.moveTo(height);
    if (round === 0) return this.roundZero;
    return advance(copy(this.priorities), round);
  }

  private moveTo(height: number): void {
    if (height < this.height) {
      this.height = 0;
      this.priorities = [];
    }
    while (this.height < height) {
      const next = this.height + 1;
      const validators = this.validatorsAt(next);
      if (!sameSet(this.priorities, validators)) this.priorities = carryOver(this.priorities, validators);
      this.roundZero = advance(this.priorities, 1);
      this.height = next;
    }
  }
}
