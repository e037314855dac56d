/**
 * A node's consensus step times as its /metrics shows them (chain_node_consensus_step_duration_seconds,
 * docs/monitoring.md): read, compared between two readings, and printed.
 */
import type { ConsensusStep } from "../../src/consensus/index.ts";

/** Per consensus step: total ms and how many (a node's consensus_step_duration_seconds). */
export type StepTotals = Record<string, { ms: number; count: number }>;
/** Per consensus step: mean ms over a phase. */
export type StepMeans = Record<string, number>;

/** The mean of each step between two readings of the same node's totals. */
export function stepMeans(before: StepTotals, after: StepTotals): StepMeans {
  const means: StepMeans = {};
  for (const [step, { ms, count }] of Object.entries(after)) {
    const n = count - (before[step]?.count ?? 0);
    if (n > 0) means[step] = (ms - (before[step]?.ms ?? 0)) / n;
  }
  return means;
}

/** The parts of a height in their order (src/consensus's ConsensusStep). */
export const CONSENSUS_STEPS = [
  "new_height",
  "propose",
  "prevote",
  "precommit",
  "commit",
] as const satisfies readonly ConsensusStep[];

/** The steps of a height in their order, with their mean ms. */
export function describeSteps(steps: StepMeans): string {
  return CONSENSUS_STEPS.map(
    (step) => `${step} ${steps[step] === undefined ? "-" : Math.round(steps[step] as number)}`,
  ).join(", ");
}

/** Each step's total ms and count in a /metrics text. */
export function stepTotalsOf(metrics: string): StepTotals {
  const totals: StepTotals = {};
  const line = /^chain_node_consensus_step_duration_seconds_(sum|count)\{step="([a-z_]+)"\} ([0-9.e+-]+)$/gm;
  for (const [, kind, step = "", value] of metrics.matchAll(line)) {
    const entry = totals[step] ?? { ms: 0, count: 0 };
    totals[step] = entry;
    if (kind === "sum") entry.ms = Number(value) * 1000;
    else entry.count = Number(value);
  }
  return totals;
}
