/**
 * Validators across a WAN (issue 19 item 4): four validators on four network namespaces, every
 * p2p byte through a delay proxy, at 0, 50 ± 10 and 150 ± 20 ms one way, the genesis block time
 * at its default (test/helpers/wanNetwork.ts; test/load/wanNetwork.test.ts runs the same,
 * shorter, in CI). At each delay:
 *  - latency: 40 transfers/s spread over the validators for `wanLatencyS`; submit → committed as
 *    bench/netLoad.ts measures it (the `newBlocks` notification of the block from validator 0);
 *  - throughput: full load (batches of 100, two requests in flight per validator, at most 10,000
 *    admitted and not committed) for `wanThroughputS` after a 3 s warm-up; committed transfers
 *    per second and blocks per second over the measured phase.
 * Needs root (`ip netns`); skipped with the reason otherwise. Nothing to compare side by side:
 * the rows carry the measurement at 0 ms as their baseline, so the ratio is the cost of the delay.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { canMakeNamespaces, removeLeftoverNamespaces } from "../test/helpers/netnsCleanup.ts";
import { describeSteps, type StepMeans } from "../test/helpers/consensusSteps.ts";
import { WAN_LINKS, WanNetwork } from "../test/helpers/wanNetwork.ts";
import type { BenchContext } from "./context.ts";
import type { LatencyResult, ThroughputResult } from "./netLoad.ts";
import { type ScenarioResult, series } from "./report.ts";

const LATENCY_RATE = 40;

interface Measured {
  delayMs: number;
  jitterMs: number;
  latency: LatencyResult;
  throughput: ThroughputResult;
  /** Validator 0's mean consensus step times over the latency phase, ms. */
  steps: StepMeans;
}

export async function wanScenarios(ctx: BenchContext): Promise<ScenarioResult[]> {
  const support = canMakeNamespaces();
  if (!support.ok) {
    ctx.problems.push(`wan: skipped (${support.reason})`);
    return [];
  }
  removeLeftoverNamespaces();
  const latencyS = Number(process.env.BENCH_WAN_LATENCY_S ?? 30);
  const throughputS = Number(process.env.BENCH_WAN_THROUGHPUT_S ?? 20);
  const dir = mkdtempSync(join(ctx.tmp, "wan-"));
  const wan = await WanNetwork.start({ dir, validators: 4, poolTxs: 1_000_000, transfers: 150_000 });
  const measured: Measured[] = [];
  try {
    for (const link of WAN_LINKS) {
      const { latency, throughput, steps } = await wan.measureLink(link, {
        latencyRate: LATENCY_RATE,
        latencyS,
        throughputS,
        windows: 3,
      });
      if (latency.committed !== latency.submitted)
        ctx.problems.push(`wan ${link.delayMs} ms: ${latency.committed} of ${latency.submitted} committed`);
      ctx.log(
        `wan ${link.delayMs} ± ${link.jitterMs} ms: latency p50 ${Math.round(latency.latencyP50Ms)} ms, ` +
          `p99 ${Math.round(latency.latencyP99Ms)} ms; full load ${Math.round(throughput.committedPerS)} transfers/s, ` +
          `${(throughput.blocksInPhase / throughput.spanS).toFixed(2)} blocks/s; ` +
          `validator 0's steps during the latency phase, mean ms: ${describeSteps(steps)}`,
      );
      measured.push({ ...link, latency, throughput, steps });
    }
  } finally {
    await wan.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const base = measured[0] as Measured;
  return measured.flatMap((m) => {
    const label = `${m.delayMs} ± ${m.jitterMs} ms one way`;
    const details = {
      latencyP50Ms: Math.round(m.latency.latencyP50Ms),
      latencyP90Ms: Math.round(m.latency.latencyP90Ms),
      latencyP99Ms: Math.round(m.latency.latencyP99Ms),
      committed: m.latency.committed,
      submitted: m.latency.submitted,
      committedPerS: Math.round(m.throughput.committedPerS),
      blocksPerS: Number((m.throughput.blocksInPhase / m.throughput.spanS).toFixed(2)),
      backlogMax: m.throughput.backlogMax,
      stepMeansMs: Object.fromEntries(Object.entries(m.steps).map(([step, ms]) => [step, Math.round(ms)])),
    };
    /** One row: this link's figure against the same figure at 0 ms. */
    const row = (
      kind: string,
      title: string,
      unit: string,
      figure: (r: Measured) => number,
    ): ScenarioResult => ({
      id: `wan-${kind}-${m.delayMs}`,
      title: `WAN, 4 validators, ${label}: ${title}`,
      unit,
      nodeLabel: label,
      baselineLabel: `${unit} at 0 ms one way`,
      node: series([figure(m)]),
      baseline: series([figure(base)]),
      ratio: figure(m) / figure(base),
      details,
    });
    return [
      row(
        "latency",
        `submit → committed p50 at ${LATENCY_RATE} transfers/s`,
        "ms",
        (r) => r.latency.latencyP50Ms,
      ),
      row(
        "throughput",
        "committed transfers/s at full load",
        "transfers/s",
        (r) => r.throughput.committedPerS,
      ),
    ];
  });
}
