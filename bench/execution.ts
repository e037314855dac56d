/**
 * Block execution (issue 5): transfers applied per second in-process, signatures pre-checked,
 * including the state root and the block's durable LMDB commit, with 10,000 and with 1,000,000
 * funded accounts; RSS after the fill; balance-read latency at both sizes. Each size runs in its
 * own process (bench/executionWorker.ts), so memory and GC are its own; a 10,000-account run on
 * the in-memory test store shows what LMDB costs.
 *
 * Figures are per block of `execTxsPerBlock` transfers; the first `execWarmupBlocks` blocks (JIT,
 * and the trie's top levels read back from the store after the fill) are left out of the median.
 */
import { join } from "node:path";
import type { BenchContext } from "./context.ts";
import type { ExecutionRun, ExecutionSpec } from "./executionWorker.ts";
import { runJson } from "./procs.ts";
import { type ScenarioResult, type Series, series } from "./report.ts";

/** Issue 5's targets, shown beside the figures. */
const TARGET_TX_PER_S = 50_000;
const TARGET_RSS_MIB = 1024;
const TARGET_READ_RATIO = 2;
/** Sync's range commits, measured on blocks like the network bench's (about 100 transfers). */
const SYNC_ACCOUNTS = 30_000;
const SYNC_TXS_PER_BLOCK = 100;
const SYNC_GROUP = 64;
const SYNC_GROUPS = 4;

const fmt = (n: number) => Math.round(n).toLocaleString("en-US");

function runWorker(ctx: BenchContext, name: string, spec: ExecutionSpec): Promise<ExecutionRun> {
  ctx.log(`execution: ${name} (${spec.accounts.toLocaleString("en-US")} accounts, ${spec.store})`);
  return runJson<ExecutionRun>(`execution ${name}`, [
    "--expose-gc",
    "--import",
    "tsx",
    "bench/executionWorker.ts",
    JSON.stringify(spec),
  ]);
}

/** Per-block rates of the measured blocks (after the warm-up). */
function measured(run: ExecutionRun, warmup: number): Series {
  return series(run.blocks.slice(warmup).map((b) => b.txPerS));
}

function blockDetails(run: ExecutionRun, warmup: number): Record<string, unknown> {
  const kept = run.blocks.slice(warmup);
  const median = (values: number[]) => Math.round(series(values).median);
  return {
    accounts: run.spec.accounts,
    store: run.spec.store,
    txsPerBlock: run.spec.txsPerBlock,
    warmupBlocks: run.blocks.slice(0, warmup).map((b) => Math.round(b.txPerS)),
    executeMsMedian: median(kept.map((b) => b.executeMs)),
    commitMsMedian: median(kept.map((b) => b.commitMs)),
    cpuMsPerBlockMedian: median(kept.map((b) => b.cpuMs)),
    fillS: Number(run.fillS.toFixed(1)),
    openS: Number(run.openS.toFixed(1)),
    rssAfterOpenMiB: run.rssAfterOpenMiB,
    rssAfterBlocksMiB: run.rssAfterBlocksMiB,
    maxRssMiB: run.maxRssMiB,
    readUs: Number(run.readUs.toFixed(2)),
    dbMiBAfterFill: Math.round(run.dbBytesAfterFill / 2 ** 20),
    dbMiBPerBlock: Number(
      ((run.dbBytesAfterBlocks - run.dbBytesAfterFill) / 2 ** 20 / run.blocks.length).toFixed(1),
    ),
    failedTxs: run.failedTxs,
    keccak: run.keccak,
    otherCpuPct: run.otherCpuPct === undefined ? null : Math.round(run.otherCpuPct),
  };
}

export async function executionScenarios(ctx: BenchContext): Promise<ScenarioResult[]> {
  const { execBlocks, execTxsPerBlock, execWarmupBlocks, execLargeAccounts } = ctx.settings;
  const spec = (accounts: number, store: "lmdb" | "memory", name: string): ExecutionSpec => ({
    phase: store === "lmdb" ? "run" : "both",
    accounts,
    blocks: execWarmupBlocks + execBlocks,
    txsPerBlock: execTxsPerBlock,
    reads: 200_000,
    store,
    dir: join(ctx.tmp, `execution-${name}`),
    ...(ctx.settings.execCpuProfDir === undefined
      ? {}
      : { cpuProfile: join(ctx.settings.execCpuProfDir, `execution-${name}.cpuprofile`) }),
  });
  /** Fills a store in one process, then measures in another that opens it (a restarted node). */
  const onLmdb = (accounts: number, name: string): Promise<ExecutionRun> =>
    onLmdbSpec(spec(accounts, "lmdb", name), name);
  const onLmdbSpec = async (run: ExecutionSpec, name: string): Promise<ExecutionRun> => {
    const filled = await runWorker(ctx, `${name} fill`, { ...run, phase: "fill" });
    const opened = await runWorker(ctx, name, run);
    return { ...opened, fillS: filled.fillS, dbBytesAfterFill: filled.dbBytesAfterFill };
  };
  const small = await onLmdb(10_000, "10k-lmdb");
  const memory = await runWorker(ctx, "10k-memory", spec(10_000, "memory", "10k-memory"));
  // A dev node with the writer thread: the next block executes while the last is written.
  const smallAside = await onLmdbSpec({ ...spec(10_000, "lmdb", "10k-aside"), aside: true }, "10k-aside");
  const large = await onLmdb(execLargeAccounts, "large-lmdb");
  // Sync's range commits: the same small blocks committed one at a time and a group at a time.
  const syncSpec = (together: boolean): ExecutionSpec => ({
    ...spec(SYNC_ACCOUNTS, "lmdb", together ? "sync-together" : "sync-each"),
    blocks: SYNC_GROUP * (SYNC_GROUPS + 1),
    txsPerBlock: SYNC_TXS_PER_BLOCK,
    reads: 1_000,
    group: { blocks: SYNC_GROUP, together },
  });
  const syncEach = await onLmdbSpec(syncSpec(false), "sync-each");
  const syncTogether = await onLmdbSpec(syncSpec(true), "sync-together");
  for (const run of [small, memory, smallAside, large, syncEach, syncTogether]) {
    if (run.failedTxs > 0) ctx.problems.push(`execution: ${run.failedTxs} transfers failed in a run`);
    if (run.otherCpuPct !== undefined && run.otherCpuPct > 25) {
      ctx.log(`execution: other processes used ${Math.round(run.otherCpuPct)} % of a core during a run`);
    }
  }

  const smallSeries = measured(small, execWarmupBlocks);
  const memorySeries = measured(memory, execWarmupBlocks);
  const largeSeries = measured(large, execWarmupBlocks);
  const smallAsideSeries = measured(smallAside, execWarmupBlocks);
  const largeLabel = `${fmt(execLargeAccounts)} accounts`;
  // The first group is warm-up, as the first blocks are above.
  const togetherSeries = series(syncTogether.blocks.slice(1).map((b) => b.txPerS));
  const eachSeries = series(syncEach.blocks.slice(1).map((b) => b.txPerS));
  const read = (run: ExecutionRun) => series([run.readUs * 1000]);
  return [
    {
      id: "execution-10k-lmdb-vs-memory",
      title: `block execution + root + commit, ${fmt(execTxsPerBlock)} transfers/block, 10,000 accounts: LMDB vs in-memory store (issue 5 target ${fmt(TARGET_TX_PER_S)}/s)`,
      unit: "tx/s",
      nodeLabel: "LmdbStore",
      baselineLabel: "tx/s (MemoryStore)",
      node: smallSeries,
      baseline: memorySeries,
      ratio: smallSeries.median / memorySeries.median,
      details: {
        lmdb: blockDetails(small, execWarmupBlocks),
        memory: blockDetails(memory, execWarmupBlocks),
      },
    },
    {
      id: "execution-large-vs-10k",
      title: `block execution + root + commit, ${largeLabel} vs 10,000 (LMDB)`,
      unit: "tx/s",
      nodeLabel: largeLabel,
      baselineLabel: "tx/s (10,000 accounts)",
      node: largeSeries,
      baseline: smallSeries,
      ratio: largeSeries.median / smallSeries.median,
      details: blockDetails(large, execWarmupBlocks),
    },
    {
      id: "execution-10k-next-while-written",
      title: `block execution + root + commit, 10,000 accounts: blocks written by the store's thread, each executed while the last is written (a dev node with storage.write_thread, decision 021) vs one at a time on the event loop (the default)`,
      unit: "tx/s",
      nodeLabel: "next while written",
      baselineLabel: "tx/s (one at a time)",
      node: smallAsideSeries,
      baseline: smallSeries,
      ratio: smallAsideSeries.median / smallSeries.median,
      details: blockDetails(smallAside, execWarmupBlocks),
    },
    {
      id: "execution-sync-commit-together",
      title: `sync's commits: ${SYNC_TXS_PER_BLOCK}-transfer blocks committed ${SYNC_GROUP} per LMDB write (Chain.commitTogether) vs one per block, ${fmt(SYNC_ACCOUNTS)} accounts`,
      unit: "tx/s",
      nodeLabel: `${SYNC_GROUP} blocks per write`,
      baselineLabel: "tx/s (one write per block)",
      node: togetherSeries,
      baseline: eachSeries,
      ratio: togetherSeries.median / eachSeries.median,
      details: {
        together: blockDetails(syncTogether, 1),
        each: blockDetails(syncEach, 1),
      },
    },
    {
      id: "execution-read-latency",
      title: `\`balanceOf\` on committed state, ${largeLabel} vs 10,000 (target ratio ≤ ${TARGET_READ_RATIO})`,
      unit: "ns",
      nodeLabel: largeLabel,
      baselineLabel: "ns (10,000 accounts)",
      node: read(large),
      baseline: read(small),
      ratio: large.readUs / small.readUs,
      details: { reads: large.spec.reads },
    },
    {
      id: "execution-rss",
      title: `RSS after the measured blocks on a reopened store, ${largeLabel} vs 10,000 (target ≤ ${fmt(TARGET_RSS_MIB)} MiB)`,
      unit: "MiB",
      nodeLabel: largeLabel,
      baselineLabel: "MiB (10,000 accounts)",
      node: series([large.rssAfterBlocksMiB]),
      baseline: series([small.rssAfterBlocksMiB]),
      ratio: large.rssAfterBlocksMiB / small.rssAfterBlocksMiB,
      details: {
        anonymousAfterBlocksMiB: large.anonymousAfterBlocksMiB ?? null,
        heapAfterBlocksMiB: large.heapAfterBlocksMiB,
        anonymousAfterBlocksMiB10k: small.anonymousAfterBlocksMiB ?? null,
        rssAfterOpenMiB: large.rssAfterOpenMiB,
        maxRssMiB: large.maxRssMiB,
        heapAfterOpenMiB: large.heapAfterOpenMiB,
      },
    },
    {
      id: "execution-anonymous-memory",
      title: `of that RSS, anonymous memory (V8 heap + malloc; the rest is LMDB's mapped file), ${largeLabel} vs 10,000`,
      unit: "MiB",
      nodeLabel: largeLabel,
      baselineLabel: "MiB (10,000 accounts)",
      node: series([large.anonymousAfterBlocksMiB ?? Number.NaN]),
      baseline: series([small.anonymousAfterBlocksMiB ?? Number.NaN]),
      ratio: (large.anonymousAfterBlocksMiB ?? Number.NaN) / (small.anonymousAfterBlocksMiB ?? Number.NaN),
      details: {},
    },
  ];
}
