/**
 * Consensus past one machine, simulated (bench part `consensus`): 100 validators of equal stake on
 * a manual clock (test/helpers/consensusSim.ts: real TendermintEngines, stub blocks and signatures),
 * every message delayed 20–300 ms per receiver, the node's default timeouts and re-sending, a
 * one-second block time. The node figure is with 33 validators silent; the baseline is the same
 * network with all 100 live, in the same run. Reported: simulated time per height (from the
 * first validator's commit of the previous height to the median validator's commit of this one),
 * rounds per height, and the messages the network carried.
 */
import { consensusTimeouts, defaultConsensusTimeouts } from "../src/node/options.ts";
import { runConsensusSim, type SimResult } from "../test/helpers/consensusSim.ts";
import type { BenchContext } from "./context.ts";
import { quantile, type ScenarioResult, series } from "./report.ts";

const VALIDATORS = 100;
const SILENT = 33;

function summary(result: SimResult) {
  const perHeight = result.heights.map((h) => h.medianMs).sort((a, b) => a - b);
  const rounds: Record<string, number> = {};
  for (const h of result.heights) rounds[h.round] = (rounds[h.round] ?? 0) + 1;
  return {
    meanMs: perHeight.reduce((a, b) => a + b, 0) / perHeight.length,
    p50Ms: quantile(perHeight, 0.5),
    p90Ms: quantile(perHeight, 0.9),
    maxMs: perHeight.at(-1),
    roundsPerHeight: rounds,
    meanRounds: result.heights.reduce((a, h) => a + h.round + 1, 0) / result.heights.length,
    deliveriesPerHeight: Math.round(result.deliveries / result.heights.length),
    behind: result.behind,
    forks: result.maxBlocksPerHeight > 1,
    realS: Math.round(result.realMs / 100) / 10,
    heights: result.heights,
  };
}

export async function consensusSimScenarios(ctx: BenchContext): Promise<ScenarioResult[]> {
  const heights = ctx.settings.simHeights;
  const run = async (silent: number) => {
    ctx.log(`consensus: ${VALIDATORS} validators, ${silent} silent, ${heights} heights (simulated)`);
    const result = await runConsensusSim({
      validators: VALIDATORS,
      silent,
      heights,
      minDelayMs: 20,
      maxDelayMs: 300,
      seed: 1,
      timeouts: consensusTimeouts(defaultConsensusTimeouts, 1_000),
    });
    const s = summary(result);
    ctx.log(
      `consensus: ${silent} silent: mean ${Math.round(s.meanMs)} ms a height, p90 ${s.p90Ms} ms, rounds ${JSON.stringify(s.roundsPerHeight)}, ${s.deliveriesPerHeight} messages a height, ${s.realS} s real`,
    );
    if (s.forks) ctx.problems.push(`consensus: two blocks committed at one height with ${silent} silent`);
    return s;
  };
  const all = await run(0);
  const some = await run(SILENT);
  return [
    {
      id: "consensus-100-validators",
      title: `${VALIDATORS} validators, ${SILENT} silent, 20–300 ms delays (simulated): ms per height, mean`,
      unit: "ms",
      nodeLabel: `${SILENT} silent`,
      baselineLabel: "all live",
      node: series([some.meanMs]),
      baseline: series([all.meanMs]),
      ratio: some.meanMs / all.meanMs,
      details: { silent: some, allLive: all },
    },
  ];
}
