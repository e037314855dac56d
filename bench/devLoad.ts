/**
 * A dev node committing at its full rate (issue 20): `--only devload`.
 *
 *  1. committed throughput: a fresh `chain-node dev` node (the dev genesis's block time, 1,000 ms,
 *     unless BENCH_DEVLOAD_BLOCK_TIME_MS: a dev node makes at most one block per block time, of at
 *     most the genesis's max_block_txs, 5,000) takes DEV_LOAD_TXS pre-signed unordered
 *     transactions in `chain_sendSignedTransactionBatch` calls of 100, 4 requests open
 *     (BENCH_DEVLOAD_IN_FLIGHT), from a separate process (bench/netLoad.ts, mode "all") that polls
 *     the head every 20 ms. Committed/s = the
 *     transactions / (first request sent → the poll that saw the block holding the last of them),
 *     against secp256k1 recover on one core (bench/recoverRate.ts; admission's runs when it ran).
 *     bench/hardhat.ts runs the same measurement (commitRun) beside hardhat's.
 *  2. `chain_getBalance` of random dev accounts (autocannon in its own process, bench/loadWorker.ts)
 *     on that node idle, and while the same submission load (mode "throughput", its own process)
 *     keeps it committing at full rate; loaded and idle runs alternate. p99 and req/s loaded / idle.
 *
 * The transactions are `/users/<sender>` writes from fresh keys (bench/presign.ts, pre-signed in
 * their own processes before any timing): every one has its own sender, so no per-account pool
 * limit binds, and no balance changes, so the balance reads always have one right answer. The
 * pool's `max_txs` is raised above the senders' backlog bound in the home's config.toml.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { devAccounts, devGenesis } from "../src/node/index.ts";
import { type BenchContext, cpuDetails } from "./context.ts";
import type { LoadSpec } from "./loadWorker.ts";
import { loadRun, type Measured, OTHER_CPU_LIMIT_PCT, recoverBaseline, responseProblem } from "./measure.ts";
import type { AllResult, NetLoadSpec, ThroughputResult } from "./netLoad.ts";
import { netLoad, tryCall, type Usage } from "./network.ts";
import { mainThreadCpuSeconds, post, runJson, startDevNode } from "./procs.ts";
import { round, type ScenarioResult, series } from "./report.ts";

/** Transactions per committed-throughput run (issue 20: 30,000). */
export const DEV_LOAD_TXS = 30_000;
/** Transactions per call (calls open at any time: settings.devLoadInFlight). */
const DEV_LOAD_BATCH = 100;
/** Admitted transactions not yet in a block above which the senders wait (two full dev blocks). */
const MAX_BACKLOG = 10_000;
/** The submission load of a loaded read run: ramp-up before the reads start, and its margin after. */
const LOADED_RAMP_S = 2;
const LOADED_MARGIN_S = 3;
/** Pre-signed transactions for all loaded read runs (a run takes what it sends; the next goes on). */
const LOADED_TXS_PER_RUN = 60_000;
const BALANCE_BODIES = 1_000;

interface ThreadMark {
  cpu: number | undefined;
  at: number;
}
const markThread = (pid: number | undefined): ThreadMark => ({
  cpu: mainThreadCpuSeconds(pid),
  at: performance.now(),
});
/** The node's main thread (its event loop) since `mark`, % of one core. */
function threadPctSince(pid: number | undefined, mark: ThreadMark | undefined): number | undefined {
  const now = mainThreadCpuSeconds(pid);
  if (mark === undefined || mark.cpu === undefined || now === undefined) return undefined;
  return ((now - mark.cpu) / ((performance.now() - mark.at) / 1000)) * 100;
}

/**
 * Waits until the node's pool is empty. A dev node makes blocks only while transactions wait, so
 * `drain` (bench/network.ts: empty blocks in a row) would wait forever; the pending list is read
 * instead (a list too long to answer counts as not empty).
 */
async function poolEmpty(
  { url, blockTimeMs }: { url: string; blockTimeMs: number },
  timeoutMs: number,
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  // The pending list is asked for only once the head has stood still for longer than the block
  // time (a pool with anything in it would have made a block by then): each answer holds up to
  // the whole backlog, megabytes a call, which took 13.5 % of the node's CPU when asked every
  // 100 ms (docs/performance.md, seventh stop of 2026-11-27).
  let head: number | undefined;
  let since = performance.now();
  while (performance.now() < deadline) {
    const now = await tryCall<number>(url, "chain_getRecentBlockNumber");
    if (now !== head) {
      head = now;
      since = performance.now();
    } else if (performance.now() - since > blockTimeMs + 100) {
      const pending = await tryCall<unknown[]>(url, "chain_getPendingTransactions");
      if (pending !== undefined && pending.length === 0) return;
      since = performance.now();
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the dev node's pool did not empty within ${timeoutMs} ms`);
}

function presign(count: number, file: string): Promise<unknown> {
  const chainId = devGenesis(devAccounts(), 0).chain_id;
  return runJson(`presign ${file}`, ["bench/presign.ts", String(count), file, String(chainId), "objects"]);
}

/**
 * The files of the committed-throughput runs, DEV_LOAD_TXS pre-signed writes each, named after `tag`;
 * `signed` resolves once all are written, signed one after another (one core of the two).
 */
export function presignCommitFiles(
  ctx: BenchContext,
  tag: string,
): { files: string[]; signed: Promise<void> } {
  const files = Array.from({ length: ctx.settings.runs }, (_, i) => join(ctx.tmp, `${tag}-${i + 1}.json`));
  const signed = files
    .reduce<Promise<unknown>>(
      (chain, file) => chain.then(() => presign(DEV_LOAD_TXS, file)),
      Promise.resolve(),
    )
    .then(() => undefined);
  return { files, signed };
}

/** A fresh dev node for committed-throughput runs, at the devload block time. */
export interface CommitNode {
  url: string;
  pid: number | undefined;
  blockTimeMs: number;
}

/** Starts a `chain-node dev` node in a new `home` whose pool takes the senders' whole backlog. */
export async function startCommitNode(ctx: BenchContext, name: string, home: string): Promise<CommitNode> {
  const blockTimeMs = ctx.settings.devLoadBlockTimeMs || devGenesis(devAccounts(), 0).consensus.block_time_ms;
  mkdirSync(home, { recursive: true });
  writeFileSync(join(home, "config.toml"), `[pool]\nmax_txs = ${4 * MAX_BACKLOG}\n`);
  const node = await startDevNode(name, home, blockTimeMs);
  ctx.log(`dev node at ${node.url}, block time ${blockTimeMs} ms`);
  return { ...node, blockTimeMs };
}

/**
 * The committed-throughput load (bench/netLoad.ts, mode "all"): `count` transactions of `txsFile`
 * from `firstTx`, in calls of DEV_LOAD_BATCH with settings.devLoadInFlight open, the head polled
 * every 20 ms. `rpc: "eth"` for an Ethereum peer (bench/hardhat.ts), whose file holds request bodies.
 */
export function commitLoad(
  ctx: BenchContext,
  url: string,
  txsFile: string,
  firstTx: number,
  count: number,
  rpc: "chain" | "eth" = "chain",
): NetLoadSpec {
  return {
    mode: "all",
    rpc,
    urls: [url],
    pollUrl: url,
    pollMs: 20,
    txsFile,
    firstTx,
    count,
    durationS: 180,
    batch: DEV_LOAD_BATCH,
    inFlightPerNode: ctx.settings.devLoadInFlight,
    maxBacklog: MAX_BACKLOG,
  };
}

/** How the committed-throughput runs load a node, for a row's title. */
export function commitHow(ctx: BenchContext, txs: number): string {
  return `${txs.toLocaleString("en-US")} tx in batches of ${DEV_LOAD_BATCH}, ${ctx.settings.devLoadInFlight} in flight`;
}

export type CommitRun = AllResult & Usage & { mainThreadPct: number | undefined };

/**
 * One committed-throughput run on `node`: DEV_LOAD_TXS of `file` once its pool is empty, repeated
 * with newly signed transactions when other processes disturbed it. Its problems go to ctx.problems.
 */
export async function commitRun(
  ctx: BenchContext,
  node: CommitNode,
  file: string,
  what: string,
): Promise<CommitRun> {
  const result = await ctx.policy.run<CommitRun>(
    what,
    (r) => r.committedPerS,
    async (previous) => {
      let txsFile = file;
      if (previous !== undefined) {
        // A repeat sends transactions no run sent before.
        txsFile = file.replace(/\.json$/, "-again.json");
        await presign(DEV_LOAD_TXS, txsFile);
      }
      await poolEmpty(node, 120_000);
      let mark: ThreadMark | undefined;
      const result = await netLoad<AllResult>(
        commitLoad(ctx, node.url, txsFile, 0, DEV_LOAD_TXS),
        [node.pid],
        () => {
          mark = markThread(node.pid);
        },
      );
      return { ...result, mainThreadPct: threadPctSince(node.pid, mark) };
    },
  );
  if (result.timedOut) ctx.problems.push(`${what}: not everything admitted was committed`);
  if (Object.keys(result.rejected).length > 0) {
    ctx.problems.push(`${what}: rejected ${JSON.stringify(result.rejected)}`);
  }
  ctx.log(
    `${what}: ${result.admitted} tx committed in ${result.spanS.toFixed(2)} s = ` +
      `${Math.round(result.committedPerS)} tx/s, ${result.blocks.filter((b) => b.txs > 0).length} blocks ` +
      `(last reply at ${result.submitS.toFixed(2)} s; a call's reply p50 ${round(result.requestP50Ms)} / ` +
      `p99 ${round(result.requestP99Ms)} ms); ` +
      `node CPU ${round(result.processPct[0])} % (main thread ${round(result.mainThreadPct)} %)`,
  );
  return result;
}

export async function devLoadScenarios(ctx: BenchContext): Promise<ScenarioResult[]> {
  const { settings, log } = ctx;
  const loadedFile = join(ctx.tmp, "devload-loaded.json");
  const loadedTxs = settings.runs * LOADED_TXS_PER_RUN;
  log(`pre-signing ${settings.runs} × ${DEV_LOAD_TXS} + ${loadedTxs} transactions from fresh keys`);
  // Two signers at a time (the machine's cores), before the node starts.
  const commitFiles = presignCommitFiles(ctx, "devload");
  await Promise.all([commitFiles.signed, presign(loadedTxs, loadedFile)]);
  const node = await startCommitNode(ctx, "chain-node (dev load)", join(ctx.tmp, "devload"));
  const { blockTimeMs } = node;
  // The baseline as the network scenarios take it: admission's runs, else measured now (the node idle).
  const recovered = await recoverBaseline(ctx);

  // 1. Committed throughput.
  const commits: CommitRun[] = [];
  for (let run = 1; run <= settings.runs; run++) {
    commits.push(await commitRun(ctx, node, commitFiles.files[run - 1] as string, `dev commit run ${run}`));
  }

  // 2. Balance reads idle and while committing.
  const accounts = devAccounts();
  const bodies = Array.from({ length: BALANCE_BODIES }, () =>
    JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "chain_getBalance",
      params: { address: accounts[Math.floor(Math.random() * accounts.length)]?.address },
    }),
  );
  const bodiesFile = join(ctx.tmp, "devload-balances.json");
  writeFileSync(bodiesFile, JSON.stringify(bodies));
  const answers = new Set(
    await Promise.all(
      accounts.map(
        async (a) =>
          (await post(node.url, bodies[0]?.replace(/0x[0-9a-fA-F]{40}/, a.address) as string)).text,
      ),
    ),
  );
  const expectBody = [...answers][0] as string;
  if (answers.size !== 1 || !/"result":[1-9]/.test(expectBody)) {
    throw new Error(`the dev accounts' balances are not one positive figure: ${[...answers].join(" ")}`);
  }
  const readSpec: LoadSpec = {
    mode: "fixed",
    url: node.url,
    body: bodies[0] as string,
    expectBody,
    bodiesFile,
    connections: settings.connections,
    durationS: settings.durationS,
    warmupS: settings.warmupS,
  };
  const idle: Measured[] = [];
  const loaded: Measured[] = [];
  const submissions: (ThroughputResult & Usage)[] = [];
  let loadedUsed = 0;
  // The node's main thread over each read run (the load process's start and warm-up included).
  const idleThread: (number | undefined)[] = [];
  const loadedThread: (number | undefined)[] = [];
  for (let run = 1; run <= settings.runs; run++) {
    await poolEmpty(node, 120_000);
    const what = `dev balance reads idle, run ${run}`;
    const idleMark = markThread(node.pid);
    const quiet = await ctx.policy.run<Measured>(
      what,
      (r) => r.rps,
      () => loadRun(readSpec, node.pid),
    );
    idleThread.push(threadPctSince(node.pid, idleMark));
    const quietProblem = responseProblem(quiet, what);
    if (quietProblem !== undefined) ctx.problems.push(quietProblem);
    idle.push(quiet);

    // The submitter ramps up, then the reads run inside its measured phase.
    const loadedWhat = `dev balance reads while committing, run ${run}`;
    let phase: () => void = () => undefined;
    const begun = new Promise<void>((resolve) => {
      phase = resolve;
    });
    const submitting = netLoad<ThroughputResult>(
      {
        mode: "throughput",
        urls: [node.url],
        pollUrl: node.url,
        pollMs: 20,
        txsFile: loadedFile,
        firstTx: loadedUsed,
        warmupS: LOADED_RAMP_S,
        durationS: settings.warmupS + settings.durationS + LOADED_MARGIN_S,
        windows: 1,
        batch: DEV_LOAD_BATCH,
        inFlightPerNode: settings.devLoadInFlight,
        maxBacklog: MAX_BACKLOG,
      },
      [node.pid],
      phase,
    );
    await Promise.race([begun, submitting]);
    const loadedMark = markThread(node.pid);
    const reads = await loadRun(readSpec, node.pid);
    loadedThread.push(threadPctSince(node.pid, loadedMark));
    const submitted = await submitting;
    loadedUsed += submitted.sent;
    // The submitter is part of the measured setup, not a disturbance: its CPU is taken out.
    const other = (reads.otherCpuPct ?? 0) - submitted.loadCpuPct;
    const kept = { ...reads, otherCpuPct: other };
    if (other > OTHER_CPU_LIMIT_PCT) {
      ctx.policy.disturbed.push({
        what: loadedWhat,
        otherCpuPct: Math.round(other),
        figure: Math.round(reads.rps),
      });
    }
    const problem = responseProblem(reads, loadedWhat);
    if (problem !== undefined) ctx.problems.push(problem);
    if (submitted.exhausted)
      ctx.problems.push(`${loadedWhat}: the submitter ran out of pre-signed transactions`);
    if (Object.keys(submitted.rejected).length > 0) {
      ctx.problems.push(`${loadedWhat}: rejected ${JSON.stringify(submitted.rejected)}`);
    }
    loaded.push(kept);
    submissions.push(submitted);
    log(
      `balance reads run ${run}: idle ${Math.round(quiet.rps)} req/s p99 ${quiet.latencyP99Ms} ms; ` +
        `committing ${Math.round(submitted.committedPerS)} tx/s: ${Math.round(reads.rps)} req/s p99 ${reads.latencyP99Ms} ms`,
    );
  }

  const raw = series(recovered.map((r) => r.rawPerS));
  const committed = series(commits.map((r) => r.committedPerS));
  const p99Loaded = series(loaded.map((r) => r.latencyP99Ms));
  const p99Idle = series(idle.map((r) => r.latencyP99Ms));
  const rpsLoaded = series(loaded.map((r) => r.rps));
  const rpsIdle = series(idle.map((r) => r.rps));
  const readDetails = {
    latencyP50MsIdle: idle.map((r) => r.latencyP50Ms),
    latencyP50MsLoaded: loaded.map((r) => r.latencyP50Ms),
    latencyP99MsIdle: idle.map((r) => r.latencyP99Ms),
    latencyP99MsLoaded: loaded.map((r) => r.latencyP99Ms),
    rpsIdle: idle.map((r) => round(r.rps)),
    rpsLoaded: loaded.map((r) => round(r.rps)),
    committedPerSDuringReads: submissions.map((s) => round(s.committedPerS)),
    blocksDuringReads: submissions.map((s) => s.blocksInPhase),
    submittedDuringReads: submissions.map((s) => s.sent),
    submitterCpuPct: submissions.map((s) => round(s.loadCpuPct)),
    nodeMainThreadCpuPctIdle: idleThread.map(round),
    nodeMainThreadCpuPctLoaded: loadedThread.map(round),
    ...cpuDetails(loaded, idle),
  };
  const how = `${commitHow(ctx, DEV_LOAD_TXS)}, block time ${blockTimeMs} ms`;
  return [
    {
      id: "devload-committed-vs-recover",
      title: `dev node committed (${how}) vs secp256k1 recover (1 core)`,
      unit: "tx/s",
      nodeLabel: "chain-node dev",
      baselineLabel: "recover/s",
      node: committed,
      baseline: raw,
      ratio: committed.median / raw.median,
      details: {
        txs: commits.map((r) => r.admitted),
        spanS: commits.map((r) => r.spanS),
        submitS: commits.map((r) => r.submitS),
        blocksWithTxs: commits.map((r) => r.blocks.filter((b) => b.txs > 0).length),
        txsPerBlock: commits.map((r) => r.blocks.filter((b) => b.txs > 0).map((b) => b.txs)),
        batchRequestP50Ms: commits.map((r) => round(r.requestP50Ms)),
        batchRequestP99Ms: commits.map((r) => round(r.requestP99Ms)),
        backlogMax: commits.map((r) => r.backlogMax),
        recoverPerS: recovered.map((r) => round(r.rawPerS)),
        nodeCpuPct: commits.map((r) => round(r.processPct[0])),
        nodeMainThreadCpuPct: commits.map((r) => round(r.mainThreadPct)),
        loadCpuPctAgainstNode: commits.map((r) => round(r.loadCpuPct)),
        machineBusyPctAgainstNode: commits.map((r) => round(r.machineBusyPct)),
        otherCpuPctAgainstNode: commits.map((r) => round(r.otherCpuPct)),
      },
    },
    {
      id: "devload-balance-p99",
      title: "`chain_getBalance` p99 while the dev node commits at full rate vs idle",
      unit: "ms",
      nodeLabel: "committing",
      baselineLabel: "ms idle",
      node: p99Loaded,
      baseline: p99Idle,
      ratio: p99Loaded.median / p99Idle.median,
      details: readDetails,
    },
    {
      id: "devload-balance-rps",
      title: "`chain_getBalance` while the dev node commits at full rate vs idle",
      unit: "req/s",
      nodeLabel: "committing",
      baselineLabel: "req/s idle",
      node: rpsLoaded,
      baseline: rpsIdle,
      ratio: rpsLoaded.median / rpsIdle.median,
      details: {},
    },
  ];
}
