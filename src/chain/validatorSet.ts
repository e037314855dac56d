import type { StateChanges } from "./state.ts";
import type { Validator } from "./types.ts";

/**
 * A stake change in block n takes effect for the blocks from n + VALIDATOR_SET_DELAY on. Two, as
 * in CometBFT: block n + 1 is already being agreed on by the old set when block n commits.
 */
export const VALIDATOR_SET_DELAY = 2;

/** The validator set that signs blocks from `fromHeight` on, until a later entry replaces it. */
export interface ValidatorSetChange {
  fromHeight: number;
  validators: Validator[];
}

const byAddress = (a: Validator, b: Validator): number =>
  a.address < b.address ? -1 : a.address > b.address ? 1 : 0;

/**
 * The validators among all stakers: stake ≥ `minStake`, the `maxValidators` largest (ties broken
 * by address, so every node picks the same), returned sorted by address.
 */
export function selectValidators(
  stakes: Iterable<Validator>,
  minStake: number,
  maxValidators: number,
): Validator[] {
  const eligible = [...stakes].filter((v) => v.stake > 0 && v.stake >= minStake);
  eligible.sort((a, b) => b.stake - a.stake || byAddress(a, b));
  return eligible.slice(0, maxValidators).sort(byAddress);
}

export function totalStake(validators: readonly Validator[]): number {
  return validators.reduce((sum, v) => sum + v.stake, 0);
}

/** True when `stake` is more than two thirds of `total` (exact in integers). */
export function isQuorum(stake: number, total: number): boolean {
  return stake * 3 > total * 2;
}

export function sameValidators(a: readonly Validator[], b: readonly Validator[]): boolean {
  return a.length === b.length && a.every((v, i) => v.address === b[i]?.address && v.stake === b[i]?.stake);
}

/**
 * The set that a block's stake changes make for `fromHeight` (its height + VALIDATOR_SET_DELAY),
 * if it differs from `current`, the set in force there. `stakers` are every staking account
 * before the block. A selection that would leave no validator is not applied: the chain keeps its
 * signers rather than halt.
 */
export function nextValidatorSet(
  stakers: Iterable<Validator>,
  stakeChanges: ReadonlyMap<string, number>,
  current: readonly Validator[],
  fromHeight: number,
  rules: { min_validator_stake: number; max_validators: number },
): ValidatorSetChange | undefined {
  const stakes = new Map<string, number>();
  for (const { address, stake } of stakers) stakes.set(address, stake);
  for (const [address, stake] of stakeChanges) stakes.set(address, stake);
  const validators = selectValidators(
    [...stakes].map(([address, stake]) => ({ address, stake })),
    rules.min_validator_stake,
    rules.max_validators,
  );
  if (validators.length === 0 || sameValidators(validators, current)) return undefined;
  return { fromHeight, validators };
}

/** The accounts whose stake a block changed, with their new stake (0 when it went away). */
export function stakeChangesOf(changes: StateChanges): Map<string, number> {
  const stakes = new Map<string, number>();
  for (const [path, value] of changes) {
    const match = STAKE_LEAF.exec(path);
    if (match?.[1] === undefined) continue;
    stakes.set(match[1], typeof value === "number" ? value : 0);
  }
  return stakes;
}

// The form stakePath() writes: /account/<checksum address>/stake.
const STAKE_LEAF = /^\/account\/(0x[0-9a-fA-F]{40})\/stake$/;
