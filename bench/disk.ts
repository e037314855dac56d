/**
 * Disk growth with and without pruning (issue 17): a store filled with `execLargeAccounts` funded
 * accounts (1,000,000 by default), then blocks that rewrite a fixed set of hot keys (so the state
 * itself stops growing after the first blocks), run three times on copies of the same filled
 * store: archive (retain_states = 0), states pruned (retain_states = 16, every block kept), and
 * states and blocks pruned (16 and 16). The figure is the data file's extent (LmdbStore.usedPages)
 * per block over the measured blocks: what a year of such blocks costs in disk.
 */
import { cpSync } from "node:fs";
import { join } from "node:path";
import type { BenchContext } from "./context.ts";
import type { ExecutionRun, ExecutionSpec } from "./executionWorker.ts";
import { runJson } from "./procs.ts";
import { type ScenarioResult, series } from "./report.ts";

const TXS_PER_BLOCK = 5_000;
const HOT_KEYS = 50_000;
const RETAIN = 16;
/**
 * Left out of the figures: the blocks until every hot key exists (the state's growth), then those
 * that fill the retained window (nothing is pruned before a block leaves it), and two more.
 */
const WARMUP_BLOCKS = HOT_KEYS / TXS_PER_BLOCK + RETAIN + 2;
const MEASURED_BLOCKS = 30;

const fmt = (n: number) => Math.round(n).toLocaleString("en-US");

function runWorker(ctx: BenchContext, name: string, spec: ExecutionSpec): Promise<ExecutionRun> {
  ctx.log(`disk: ${name}`);
  return runJson<ExecutionRun>(`disk ${name}`, [
    "--expose-gc",
    "--import",
    "tsx",
    "bench/executionWorker.ts",
    JSON.stringify(spec),
  ]);
}

/** Pages the data file grew per block over the measured blocks. */
function pagesPerBlock(run: ExecutionRun): number {
  const pages = run.blocks.map((block) => block.usedPages ?? Number.NaN);
  const first = pages[WARMUP_BLOCKS - 1] as number;
  return ((pages.at(-1) as number) - first) / (pages.length - WARMUP_BLOCKS);
}

export async function diskScenarios(ctx: BenchContext): Promise<ScenarioResult[]> {
  const accounts = ctx.settings.execLargeAccounts;
  const base: ExecutionSpec = {
    phase: "fill",
    accounts,
    blocks: WARMUP_BLOCKS + MEASURED_BLOCKS,
    txsPerBlock: TXS_PER_BLOCK,
    reads: 1_000,
    store: "lmdb",
    dir: join(ctx.tmp, "disk-filled"),
    workload: "rewrites",
    hotKeys: HOT_KEYS,
  };
  await runWorker(ctx, `fill (${fmt(accounts)} accounts)`, base);
  const run = async (name: string, retainStates: number, retainBlocks: number): Promise<ExecutionRun> => {
    const dir = join(ctx.tmp, `disk-${name}`);
    cpSync(base.dir, dir, { recursive: true });
    return runWorker(ctx, name, { ...base, phase: "run", dir, retention: { retainStates, retainBlocks } });
  };
  const archive = await run("archive", 0, 0);
  const states = await run("states-pruned", RETAIN, 0);
  const both = await run("states-and-blocks-pruned", RETAIN, RETAIN);
  for (const r of [archive, states, both]) {
    if (r.failedTxs > 0) ctx.problems.push(`disk: ${r.failedTxs} rewrites failed in a run`);
  }
  const kib = (run: ExecutionRun) => (pagesPerBlock(run) * 4096) / 1024;
  const details = (r: ExecutionRun) => ({
    kibPerBlock: Math.round(kib(r)),
    pagesAtWarmup: r.blocks[WARMUP_BLOCKS - 1]?.usedPages,
    pagesAtEnd: r.blocks.at(-1)?.usedPages,
    txPerSMedian: Math.round(series(r.blocks.slice(WARMUP_BLOCKS).map((b) => b.txPerS)).median),
  });
  const label = `${fmt(accounts)} accounts, ${fmt(TXS_PER_BLOCK)} rewrites/block of ${fmt(HOT_KEYS)} hot keys, ${MEASURED_BLOCKS} blocks`;
  return [
    {
      id: "disk-growth-states-pruned-vs-archive",
      title: `data file growth per block, retain_states = ${RETAIN} vs archive (blocks kept by both), ${label} (target ≤ 0.6)`,
      unit: "KiB/block",
      nodeLabel: `retain_states = ${RETAIN}`,
      baselineLabel: "KiB/block (archive)",
      node: series([kib(states)]),
      baseline: series([kib(archive)]),
      ratio: kib(states) / kib(archive),
      details: { states: details(states), archive: details(archive) },
    },
    {
      id: "disk-growth-all-pruned-vs-archive",
      title: `data file growth per block, retain_states = retain_blocks = ${RETAIN} vs archive, ${label} (flat: about 0)`,
      unit: "KiB/block",
      nodeLabel: `states and blocks pruned`,
      baselineLabel: "KiB/block (archive)",
      node: series([kib(both)]),
      baseline: series([kib(archive)]),
      ratio: kib(both) / kib(archive),
      details: { both: details(both), archive: details(archive) },
    },
    {
      id: "disk-execution-pruned-vs-archive",
      title: `block execution + root + commit with pruning (${RETAIN}/${RETAIN}) vs archive, ${label}`,
      unit: "tx/s",
      nodeLabel: "pruned",
      baselineLabel: "tx/s (archive)",
      node: series(both.blocks.slice(WARMUP_BLOCKS).map((b) => b.txPerS)),
      baseline: series(archive.blocks.slice(WARMUP_BLOCKS).map((b) => b.txPerS)),
      ratio:
        series(both.blocks.slice(WARMUP_BLOCKS).map((b) => b.txPerS)).median /
        series(archive.blocks.slice(WARMUP_BLOCKS).map((b) => b.txPerS)).median,
      details: {},
    },
  ];
}
