/**
 * Network scenarios: four validators (`chain-node testnet` + `chain-node start`, each its own
 * process) on this machine, loaded from a separate process (bench/netLoad.ts) with transfers
 * pre-signed in separate processes (bench/netPresign.ts).
 *
 *  1. committed transfers per second at the highest load the network takes (bounded backlog),
 *     against the baseline of issue 5: secp256k1 recoveries per second on one core × 2 cores / 4
 *     nodes (bench/recoverRate.ts, measured in the same bench);
 *  2. submission-to-commit latency (median, p99) at about half of that rate, steady;
 *  3. sync: a fifth node (a full node of the same testnet, never started until now) catches up
 *     with the chain made by 1 and 2; blocks/s and transactions/s from its start until its head
 *     reaches the validators' head, against the single-core recovery rate.
 *
 * Every process is started through bench/procs.ts, so run.ts stops them all (also on failure and
 * Ctrl-C); the testnet lives under the bench's temporary directory, which run.ts removes.
 */
import { appendFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import type { TestnetFile } from "../src/node/index.ts";
import type { BenchContext } from "./context.ts";
import { type MachineUsage, type MeasuredRecover, recoverBaseline } from "./measure.ts";
import type { LatencyResult, NetLoadSpec, ThroughputResult } from "./netLoad.ts";
import { presignTransfers, type SignedTransfer } from "./netPresign.ts";
import { type Child, cpuSeconds, machineCpu, post, runJson, spawnNode, waitForRpc } from "./procs.ts";
import { quantile, round, type ScenarioResult, series } from "./report.ts";

const VALIDATORS = 4;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function call<T>(url: string, method: string, params?: unknown): Promise<T> {
  const request: Record<string, unknown> = { jsonrpc: "2.0", id: 1, method };
  if (params !== undefined) request.params = params;
  const reply = await post(url, JSON.stringify(request));
  const json = JSON.parse(reply.text) as { result?: T; error?: unknown };
  if (reply.status !== 200 || json.error !== undefined) {
    throw new Error(`${method} answered ${reply.status}: ${reply.text.slice(0, 300)}`);
  }
  return json.result as T;
}

/** `call`, or undefined when the node does not answer properly. */
export async function tryCall<T>(url: string, method: string, params?: unknown): Promise<T | undefined> {
  try {
    return await call<T>(url, method, params);
  } catch {
    return undefined;
  }
}

/** Transaction counts of blocks from..to, 100 per JSON-RPC batch. */
export async function txCounts(url: string, from: number, to: number): Promise<number[]> {
  const counts: number[] = [];
  for (let start = from; start <= to; start += 100) {
    const numbers = Array.from({ length: Math.min(100, to - start + 1) }, (_, i) => start + i);
    const body = numbers.map((number, i) => ({
      jsonrpc: "2.0",
      id: i,
      method: "chain_getBlockTransactionCountByNumber",
      params: { number },
    }));
    const reply = await post(url, JSON.stringify(body));
    const replies = JSON.parse(reply.text) as { id: number; result?: number | null }[];
    const byId = new Map(replies.map((r) => [r.id, r.result]));
    for (const [i, number] of numbers.entries()) {
      const count = byId.get(i);
      if (typeof count !== "number") throw new Error(`no transaction count for block ${number}`);
      counts.push(count);
    }
  }
  return counts;
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/**
 * A base port whose RPC (base + i) and p2p (base + 100 + i) ports are all free on 127.0.0.1, below
 * the kernel's ephemeral range (32768–60999 on Linux): a port in it that is free now can become the
 * local port of an outgoing connection (the load, the nodes' dials) before the node that is to
 * listen there starts; the full node of the sync scenario starts minutes later and once found its
 * p2p port taken (EADDRINUSE).
 */
export async function freeBase(nodes: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * 120) * 100;
    const ports = Array.from({ length: nodes }, (_, i) => [base + i, base + 100 + i]).flat();
    if ((await Promise.all(ports.map(portFree))).every(Boolean)) return base;
  }
  throw new Error("no free range of ports");
}

/** CPU of some processes and of the machine between `begin` and `end`, % of one core. */
class CpuSample {
  private readonly pids: (number | undefined)[];
  private readonly cpu: (number | undefined)[];
  private readonly machine: ReturnType<typeof machineCpu>;
  private readonly at = performance.now();

  constructor(pids: (number | undefined)[]) {
    this.pids = pids;
    this.cpu = pids.map(cpuSeconds);
    this.machine = machineCpu();
  }

  /** Per process, and the machine's busy and other (busy minus these and `extraPct`) use. */
  end(extraPct = 0): MachineUsage & { processPct: (number | undefined)[] } {
    const wall = (performance.now() - this.at) / 1000;
    const processPct = this.pids.map((pid, i) => {
      const now = cpuSeconds(pid);
      const before = this.cpu[i];
      return now === undefined || before === undefined ? undefined : ((now - before) / wall) * 100;
    });
    const machine = machineCpu();
    if (machine === undefined || this.machine === undefined) {
      return { processPct, machineBusyPct: undefined, machineStealPct: undefined, otherCpuPct: undefined };
    }
    const machineBusyPct = ((machine.busy - this.machine.busy) / wall) * 100;
    const ours = processPct.reduce<number>((sum, p) => sum + (p ?? 0), 0) + extraPct;
    return {
      processPct,
      machineBusyPct,
      machineStealPct: ((machine.steal - this.machine.steal) / wall) * 100,
      otherCpuPct: machineBusyPct - ours,
    };
  }
}

export type Usage = MachineUsage & { processPct: (number | undefined)[] };

/** Runs bench/netLoad.ts; samples the given processes' CPU over its measured phase (`onPhase`: it began). */
export async function netLoad<T extends { loadCpuPct: number }>(
  spec: NetLoadSpec,
  pids: (number | undefined)[],
  onPhase?: () => void,
): Promise<T & Usage> {
  let sample: CpuSample | undefined;
  let usage: Omit<Usage, "otherCpuPct"> | undefined;
  const onLine = (line: string) => {
    if (line === "phase measured") {
      sample = new CpuSample(pids);
      onPhase?.();
    }
    if (line === "phase end" && sample !== undefined) usage = sample.end();
  };
  const result = await runJson<T>("load (network)", ["bench/netLoad.ts", JSON.stringify(spec)], onLine);
  const machineBusyPct = usage?.machineBusyPct;
  const ours = (usage?.processPct ?? []).reduce<number>((s, p) => s + (p ?? 0), 0) + result.loadCpuPct;
  return {
    ...result,
    processPct: usage?.processPct ?? [],
    machineBusyPct,
    machineStealPct: usage?.machineStealPct,
    otherCpuPct: machineBusyPct === undefined ? undefined : machineBusyPct - ours,
  };
}

const sum = (values: (number | undefined)[]) => values.reduce<number>((s, v) => s + (v ?? 0), 0);

/** Waits until the chain has made `quiet` blocks in a row without transactions (the pools drained). */
export async function drain(
  url: string,
  quiet: number,
  timeoutMs: number,
): Promise<{ ms: number; blocks: number }> {
  const started = performance.now();
  let last = await call<number>(url, "chain_getRecentBlockNumber");
  let emptyInARow = 0;
  let blocks = 0;
  while (performance.now() - started < timeoutMs) {
    await sleep(100);
    const head = await call<number>(url, "chain_getRecentBlockNumber");
    if (head > last) {
      for (const count of await txCounts(url, last + 1, head)) {
        emptyInARow = count === 0 ? emptyInARow + 1 : 0;
        blocks++;
      }
      last = head;
    }
    if (emptyInARow >= quiet) return { ms: performance.now() - started, blocks };
  }
  throw new Error(`the network did not drain its pools within ${timeoutMs} ms`);
}

export interface Testnet {
  file: TestnetFile;
  path: string;
  nodes: (Child | undefined)[];
}

/** `chain-node testnet` (4 validators + 1 full node) with the bench's pool (and consensus) settings. */
export async function createTestnet(ctx: BenchContext): Promise<Testnet> {
  const { settings } = ctx;
  const out = join(ctx.tmp, "testnet");
  const base = await freeBase(VALIDATORS + 1);
  const create = spawnNode("chain-node testnet", [
    "bin/chain-node.js",
    "testnet",
    ...["--validators", String(VALIDATORS), "--full-nodes", "1"],
    ...["--out", out, "--base-port", String(base), "--block-time", String(settings.netBlockTimeMs)],
  ]);
  create.child.stdin?.end();
  const code = await create.exited;
  if (code !== 0) throw new Error(`chain-node testnet exited with ${code}:\n${create.stderr()}`);
  const path = join(out, "testnet.json");
  const file = JSON.parse(readFileSync(path, "utf8")) as TestnetFile;
  // The pools must hold every transfer in flight: ten accounts send them all.
  let extra = `\n[pool]\nmax_txs = ${settings.netPoolTxs}\nmax_txs_per_account = ${settings.netPoolTxs}\n`;
  const timeouts = Object.entries(settings.netConsensus);
  if (timeouts.length > 0) extra += `\n[consensus]\n${timeouts.map(([k, v]) => `${k} = ${v}\n`).join("")}`;
  for (const node of file.nodes) appendFileSync(join(node.home, "config.toml"), extra);
  return { file, path, nodes: file.nodes.map(() => undefined) };
}

/** `node [--cpu-prof ...] bin/chain-node.js start --home <home> --log-level <level>`. */
function startArgs(ctx: BenchContext, home: string): string[] {
  const profile = ctx.settings.netCpuProfDir;
  return [
    ...(profile === undefined ? [] : ["--cpu-prof", "--cpu-prof-dir", profile]),
    "bin/chain-node.js",
    ...["start", "--home", home, "--log-level", logLevel(ctx)],
  ];
}

/** `chain-node start` for node `i`; resolves when its RPC answers. */
export async function startNode(ctx: BenchContext, net: Testnet, i: number): Promise<Child> {
  const node = net.file.nodes[i];
  if (node === undefined) throw new Error(`no node ${i}`);
  const child = spawnNode(`chain-node ${node.name}`, startArgs(ctx, node.home));
  net.nodes[i] = child;
  await waitForRpc(child, node.rpc_url, 60_000);
  return child;
}

/** Nodes log warnings and worse, or from `netLogLevel` (default info) when their logs are kept. */
const logLevel = (ctx: BenchContext) =>
  ctx.settings.netLogDir === undefined ? "warn" : (ctx.settings.netLogLevel ?? "info");

/** Copies every node's stderr (its pino log) to the directory the settings name, if any. */
function keepLogs(ctx: BenchContext, net: Testnet): void {
  const dir = ctx.settings.netLogDir;
  if (dir === undefined) return;
  mkdirSync(dir, { recursive: true });
  for (const [i, child] of net.nodes.entries()) {
    if (child !== undefined) writeFileSync(join(dir, `node${i}.log`), child.stderr());
  }
  ctx.log(`node logs in ${dir}`);
}

/** Warnings and errors the nodes logged (pino JSON on stderr), as problems worth reading. */
function nodeLogProblems(net: Testnet): string[] {
  const problems: string[] = [];
  for (const [i, child] of net.nodes.entries()) {
    if (child === undefined) continue;
    const lines = child
      .stderr()
      .split("\n")
      .filter((l) => /"level":(40|50|60)/.test(l));
    const byMessage = new Map<string, number>();
    for (const line of lines) {
      const msg = /"msg":"([^"]*)"/.exec(line)?.[1] ?? line.slice(0, 120);
      byMessage.set(msg, (byMessage.get(msg) ?? 0) + 1);
    }
    for (const [msg, count] of byMessage) problems.push(`node${i}: ${count} × "${msg}"`);
  }
  return problems;
}

export async function networkScenarios(ctx: BenchContext): Promise<ScenarioResult[]> {
  const { log } = ctx;

  // The baseline first, while nothing else runs (admission measured it already in a full bench).
  const recovered = await recoverBaseline(ctx);
  const raw = series(recovered.map((r) => r.rawPerS));
  log(`secp256k1 recover on one core: ${Math.round(raw.median)}/s (median of ${recovered.length})`);

  const net = await createTestnet(ctx);
  try {
    return await onTestnet(ctx, net, recovered);
  } finally {
    // Also on failure: the nodes stop here (run.ts would stop them too) and their logs are kept.
    await Promise.all(net.nodes.map((c) => c?.stop(10_000)));
    keepLogs(ctx, net);
  }
}

async function onTestnet(
  ctx: BenchContext,
  net: Testnet,
  recovered: MeasuredRecover[],
): Promise<ScenarioResult[]> {
  const { settings, log } = ctx;
  const raw = series(recovered.map((r) => r.rawPerS));
  const urls = net.file.nodes.slice(0, VALIDATORS).map((n) => n.rpc_url);
  const fullUrl = net.file.nodes[VALIDATORS]?.rpc_url as string;
  log(
    `testnet of ${VALIDATORS} validators + 1 full node (not started), block time ${settings.netBlockTimeMs} ms`,
  );

  const loadFile = join(ctx.tmp, "net-load.json");
  const latencyFile = join(ctx.tmp, "net-latency.json");
  log(`pre-signing ${settings.netLoadTxs} + ${settings.netLatencyTxs} transfers`);
  const signing = Promise.all([
    runJson("presign (network load)", [
      "bench/netPresign.ts",
      net.path,
      String(settings.netLoadTxs),
      "t",
      loadFile,
    ]),
    runJson("presign (network latency)", [
      "bench/netPresign.ts",
      net.path,
      String(settings.netLatencyTxs),
      "l",
      latencyFile,
    ]),
  ]);
  const validators = await Promise.all(urls.map((_, i) => startNode(ctx, net, i)));
  const pids = validators.map((c) => c.child.pid);
  await signing;
  // Every validator connected to the other three and the chain moving.
  const ready = performance.now();
  for (;;) {
    const peers = await Promise.all(urls.map((u) => call<number>(u, "net_peerCount")));
    const head = await call<number>(urls[0] as string, "chain_getRecentBlockNumber");
    if (peers.every((p) => p >= VALIDATORS - 1) && head >= 2) break;
    if (performance.now() - ready > 60_000) throw new Error(`the validators did not connect: peers ${peers}`);
    await sleep(100);
  }
  log(`validators up at ${urls.join(" ")}`);

  // 1. Throughput.
  const throughputSpec: NetLoadSpec = {
    mode: "throughput",
    urls,
    pollUrl: urls[0] as string,
    pollMs: 25,
    txsFile: loadFile,
    firstTx: 0,
    warmupS: settings.netWarmupS,
    durationS: settings.netDurationS,
    windows: settings.runs,
    batch: 100,
    inFlightPerNode: settings.netInFlightPerNode,
    maxBacklog: settings.netMaxBacklog,
  };
  // A repeat (after a disturbed run) sends transfers no run sent before, once the pools drained:
  // resending would measure "already_known" rejections.
  let loadUsed = 0;
  const load = await ctx.policy.run<ThroughputResult & Usage>(
    "network throughput",
    (r) => r.committedPerS,
    async (previous) => {
      if (previous !== undefined) await drain(urls[0] as string, 3, 180_000);
      const result = await netLoad<ThroughputResult>({ ...throughputSpec, firstTx: loadUsed }, pids);
      loadUsed += result.sent;
      return result;
    },
  );
  const blocksInPhase = load.blocks.filter(
    (b) => b.seenAtMs > load.phaseStartMs && b.seenAtMs <= load.phaseEndMs,
  );
  log(
    `throughput: ${Math.round(load.committedPerS)} committed tx/s (windows ${load.windowsPerS.map(Math.round).join(", ")}), ` +
      `admitted ${Math.round(load.admittedPerS)}/s, ${load.blocksInPhase} blocks, backlog max ${load.backlogMax}`,
  );
  if (load.exhausted)
    ctx.problems.push("network throughput: ran out of pre-signed transfers (rate is a lower bound)");
  if (Object.keys(load.rejected).length > 0) {
    ctx.problems.push(`network throughput: rejected batches ${JSON.stringify(load.rejected)}`);
  }
  const drained1 = await drain(urls[0] as string, 3, 120_000);
  log(`pools drained ${Math.round(drained1.ms)} ms after the load`);

  // 2. Latency at about half the committed rate.
  const rate = Math.max(10, Math.round(load.committedPerS / 2));
  const latencySpec: NetLoadSpec = {
    mode: "latency",
    urls,
    pollUrl: urls[0] as string,
    pollMs: 25,
    txsFile: latencyFile,
    firstTx: 0,
    durationS: settings.netLatencyS,
    ratePerS: rate,
    tickMs: 20,
    drainS: 20,
  };
  let latencyUsed = 0;
  const lat = await ctx.policy.run<LatencyResult & Usage>(
    "network latency",
    (r) => r.latencyP50Ms,
    async (previous) => {
      if (previous !== undefined) await drain(urls[0] as string, 3, 120_000);
      const result = await netLoad<LatencyResult>({ ...latencySpec, firstTx: latencyUsed }, pids);
      latencyUsed += result.submitted;
      return result;
    },
  );
  log(
    `latency at ${rate} tx/s: p50 ${Math.round(lat.latencyP50Ms)} ms, p99 ${Math.round(lat.latencyP99Ms)} ms; ` +
      `${lat.committed} of ${lat.submitted} committed`,
  );
  if (lat.exhausted) ctx.problems.push("network latency: ran out of pre-signed transfers");
  if (lat.committed < lat.admitted) {
    ctx.problems.push(
      `network latency: ${lat.admitted - lat.committed} admitted transfers were not committed in time`,
    );
  }
  await drain(urls[0] as string, 3, 60_000);

  // 3. Sync: the chain so far, replayed by the full node from nothing.
  let target = await call<number>(urls[0] as string, "chain_getRecentBlockNumber");
  if (target < settings.netMinSyncBlocks) {
    log(`waiting for ${settings.netMinSyncBlocks} blocks (head ${target})`);
    while (target < settings.netMinSyncBlocks) {
      await sleep(200);
      target = await call<number>(urls[0] as string, "chain_getRecentBlockNumber");
    }
  }
  const counts = await txCounts(urls[0] as string, 1, target);
  const chainTxs = sum(counts);
  const withTxs = counts.filter((c) => c > 0).length;
  log(`syncing a full node to block ${target} (${chainTxs} transactions, ${withTxs} blocks with any)`);
  const sync = await ctx.policy.run<SyncResult>(
    "network sync",
    (r) => r.txsPerS,
    async (previous) => {
      if (previous !== undefined) {
        // A repeat starts from nothing again: the same home without its data.
        await net.nodes[VALIDATORS]?.stop();
        rmSync(join(net.file.nodes[VALIDATORS]?.home as string, "data"), { recursive: true, force: true });
      }
      const probes = presignTransfers(net.file, SYNC_PROBES, `p${previous === undefined ? 0 : 1}-`);
      return measureSync(ctx, net, pids, fullUrl, urls[0] as string, counts, probes);
    },
  );
  log(
    `sync: ${target} blocks in ${sync.seconds.toFixed(1)} s from spawn: ${Math.round(sync.blocksPerS)} blocks/s, ` +
      `${Math.round(sync.txsPerS)} tx/s (${Math.round(sync.txsPerSFromRpc)} tx/s from its RPC answering)`,
  );
  ctx.problems.push(...nodeLogProblems(net).map((p) => `node log: ${p}`));

  const probeMs = sync.probeMs.toSorted((a, b) => a - b);
  const baseline = series(recovered.map((r) => (r.rawPerS * settings.netCores) / VALIDATORS));
  // The whole measured phase, not the median of its windows: under load a block can take longer
  // than a window (seen: 8-16 s for 5,000 transfers), which leaves windows with nothing committed
  // and a median of 0 that says less than the phase's rate. The windows stay in the details.
  const committed = series([load.committedPerS]);
  const common = {
    blockTimeMs: settings.netBlockTimeMs,
    recoverPerS: recovered.map((r) => Math.round(r.rawPerS)),
  };
  const nodePcts = load.processPct.map(round);
  return [
    {
      id: "network-committed-transfers",
      title: `committed transfers, ${VALIDATORS} validators on this machine, block time ${settings.netBlockTimeMs} ms, vs recover × ${settings.netCores} cores / ${VALIDATORS}`,
      unit: "tx/s",
      nodeLabel: "chain-node start × 4",
      baselineLabel: "recover/s share",
      node: committed,
      baseline,
      ratio: committed.median / baseline.median,
      details: {
        ...common,
        committedPerSWholePhase: load.committedPerS,
        windowsPerS: load.windowsPerS,
        windowS: settings.netDurationS / settings.runs,
        committedInPhase: load.committedInPhase,
        blocksInPhase: load.blocksInPhase,
        txsPerBlockInPhase: blocksInPhase.map((b) => b.txs),
        spanS: load.spanS,
        admittedPerS: load.admittedPerS,
        admittedTotal: load.admittedTotal,
        rejected: load.rejected,
        backlogMax: load.backlogMax,
        backlogAtEnd: load.backlogAtEnd,
        backlogWaitMsPerSender: Math.round(load.backlogWaitMs),
        batchRequestP50Ms: load.requestP50Ms,
        batchRequestP99Ms: load.requestP99Ms,
        drainMs: Math.round(drained1.ms),
        validatorCpuPct: nodePcts,
        nodeCpuPct: [round(sum(load.processPct))],
        loadCpuPctAgainstNode: [round(load.loadCpuPct)],
        machineBusyPctAgainstNode: [round(load.machineBusyPct)],
        otherCpuPctAgainstNode: [round(load.otherCpuPct)],
      },
    },
    {
      id: "network-latency-p50",
      title: `submission-to-commit latency, median, at ${rate} tx/s (${lat.committed} of ${lat.submitted} committed)`,
      unit: "ms",
      nodeLabel: "chain-node start × 4",
      baselineLabel: "",
      node: series([lat.latencyP50Ms]),
      baseline: undefined,
      ratio: undefined,
      details: {
        ...common,
        ratePerS: rate,
        sentPerS: lat.sentPerS,
        submitted: lat.submitted,
        admitted: lat.admitted,
        committed: lat.committed,
        rejected: lat.rejected,
        latencyP50Ms: lat.latencyP50Ms,
        latencyP90Ms: lat.latencyP90Ms,
        latencyP99Ms: lat.latencyP99Ms,
        latencyMaxMs: lat.latencyMaxMs,
        latencyMeanMs: lat.latencyMeanMs,
        ackP50Ms: lat.ackP50Ms,
        ackP99Ms: lat.ackP99Ms,
        blocks: lat.blocks,
        validatorCpuPct: lat.processPct.map(round),
        nodeCpuPct: [round(sum(lat.processPct))],
        loadCpuPctAgainstNode: [round(lat.loadCpuPct)],
        machineBusyPctAgainstNode: [round(lat.machineBusyPct)],
        otherCpuPctAgainstNode: [round(lat.otherCpuPct)],
      },
    },
    {
      id: "network-latency-p99",
      title: `submission-to-commit latency, p99, at ${rate} tx/s`,
      unit: "ms",
      nodeLabel: "chain-node start × 4",
      baselineLabel: "",
      node: series([lat.latencyP99Ms]),
      baseline: undefined,
      ratio: undefined,
      details: {},
    },
    {
      id: "network-sync-txs",
      title: `sync of ${target} blocks (${chainTxs.toLocaleString("en-US")} tx) by a 5th node, transactions vs secp256k1 recover (1 core)`,
      unit: "tx/s",
      nodeLabel: "chain-node start (full node)",
      baselineLabel: "recover/s",
      node: series([sync.txsPerS]),
      baseline: raw,
      ratio: sync.txsPerS / raw.median,
      details: {
        ...common,
        blocks: target,
        transactions: chainTxs,
        blocksWithTransactions: withTxs,
        secondsFromSpawn: sync.seconds,
        secondsFromRpc: sync.secondsFromRpc,
        headWhenRpcAnswered: sync.headAtRpc,
        txsPerSFromRpc: sync.txsPerSFromRpc,
        blocksPerSFromRpc: sync.blocksPerSFromRpc,
        liveHeadReachedS: sync.liveHeadS,
        syncingFalseS: sync.syncingFalseS,
        syncingAnswers: sync.syncingAnswers,
        nodeCpuPct: [round(sync.processPct[0])],
        validatorCpuPct: sync.processPct.slice(1).map(round),
        machineBusyPctAgainstNode: [round(sync.machineBusyPct)],
        otherCpuPctAgainstNode: [round(sync.otherCpuPct)],
      },
    },
    {
      id: "network-sync-submission",
      title: `\`chain_sendSignedTransaction\` acknowledged by the syncing node, median (one sent every ${SYNC_PROBE_EVERY_MS} ms while it syncs)`,
      unit: "ms",
      nodeLabel: "chain-node start (full node)",
      baselineLabel: "",
      node: series([quantile(probeMs, 0.5)]),
      baseline: undefined,
      ratio: undefined,
      details: {
        submissions: probeMs.length,
        failed: sync.probeFailed,
        p90Ms: quantile(probeMs, 0.9),
        p99Ms: quantile(probeMs, 0.99),
        maxMs: probeMs.at(-1),
        meanMs: sum(probeMs) / probeMs.length,
      },
    },
    {
      id: "network-sync-submission-p90",
      title: "`chain_sendSignedTransaction` acknowledged by the syncing node, 90th percentile",
      unit: "ms",
      nodeLabel: "chain-node start (full node)",
      baselineLabel: "",
      node: series([quantile(probeMs, 0.9)]),
      baseline: undefined,
      ratio: undefined,
      details: {},
    },
    {
      id: "network-sync-blocks",
      title: `sync of ${target} blocks by a 5th node, blocks`,
      unit: "blocks/s",
      nodeLabel: "chain-node start (full node)",
      baselineLabel: "",
      node: series([sync.blocksPerS]),
      baseline: undefined,
      ratio: undefined,
      details: {},
    },
  ];
}

/** Transfers pre-signed for the submissions to the syncing node (one per SYNC_PROBE_EVERY_MS). */
const SYNC_PROBES = 2_000;
const SYNC_PROBE_EVERY_MS = 50;

interface SyncResult extends MachineUsage {
  seconds: number;
  secondsFromRpc: number;
  headAtRpc: number;
  blocksPerS: number;
  txsPerS: number;
  blocksPerSFromRpc: number;
  txsPerSFromRpc: number;
  /** From spawn until its head reached the validators' head of that moment (they keep going). */
  liveHeadS: number | undefined;
  /** From spawn until net_syncing answered false after it caught up. */
  syncingFalseS: number | undefined;
  /** net_syncing answers in order, runs of equal answers collapsed. */
  syncingAnswers: boolean[];
  processPct: (number | undefined)[];
  /**
   * chain_sendSignedTransaction to the syncing node, one every SYNC_PROBE_EVERY_MS from its first
   * RPC answer until it caught up: how long each took to be acknowledged, in ms.
   */
  probeMs: number[];
  /** Probes that did not come back with a hash (refused, or no answer). */
  probeFailed: number;
}

/**
 * Sends `probes` to `url`, one every SYNC_PROBE_EVERY_MS whatever the earlier ones are waiting
 * for, while `active()`; stops sending once `done()`. What wallets see when their node is catching
 * up: evenly spaced in time, so a stall shows in as many probes as it lasts.
 */
async function probeSubmissions(
  url: string,
  probes: SignedTransfer[],
  active: () => boolean,
  done: () => boolean,
): Promise<{ ms: number[]; failed: number }> {
  const sent: Promise<{ ms: number; ok: boolean }>[] = [];
  let next = 0;
  while (!done() && next < probes.length) {
    if (active()) {
      const started = performance.now();
      sent.push(
        tryCall<string>(url, "chain_sendSignedTransaction", probes[next++]).then((hash) => ({
          ms: performance.now() - started,
          ok: typeof hash === "string",
        })),
      );
    }
    await sleep(SYNC_PROBE_EVERY_MS);
  }
  const answers = await Promise.all(sent);
  return { ms: answers.filter((a) => a.ok).map((a) => a.ms), failed: answers.filter((a) => !a.ok).length };
}

/** Starts the full node and polls its head (every 25 ms) until it reaches `target`. */
async function measureSync(
  ctx: BenchContext,
  net: Testnet,
  validatorPids: (number | undefined)[],
  url: string,
  validatorUrl: string,
  counts: number[],
  probes: SignedTransfer[],
): Promise<SyncResult> {
  const target = counts.length;
  const chainTxs = sum(counts);
  const node = net.file.nodes[VALIDATORS];
  if (node === undefined) throw new Error("the testnet has no full node");
  const spawned = performance.now();
  const child = spawnNode("chain-node node4 (sync)", startArgs(ctx, node.home));
  net.nodes[VALIDATORS] = child;
  const sample = new CpuSample([child.child.pid, ...validatorPids]);
  let rpcAt: number | undefined;
  let headAtRpc = 0;
  let caughtUpAt: number | undefined;
  let liveAt: number | undefined;
  let syncingFalseAt: number | undefined;
  const answers: boolean[] = [];
  let usage: Usage | undefined;
  const deadline = spawned + 180_000;
  let finished = false;
  const probing = probeSubmissions(
    url,
    probes,
    () => rpcAt !== undefined && caughtUpAt === undefined,
    () => caughtUpAt !== undefined || finished,
  );
  try {
    while (syncingFalseAt === undefined || liveAt === undefined) {
      if (child.child.exitCode !== null) throw new Error(`the full node exited:\n${child.stderr()}`);
      if (performance.now() > deadline) throw new Error(`the full node did not sync within 180 s`);
      // The node may not serve yet (or be busy enough to drop a connection): skip that sample.
      const head = await tryCall<number>(url, "chain_getRecentBlockNumber");
      const now = performance.now();
      const syncing = head === undefined ? undefined : await tryCall<boolean>(url, "net_syncing");
      if (head !== undefined && syncing !== undefined) {
        if (rpcAt === undefined) {
          rpcAt = now;
          headAtRpc = head;
        }
        if (answers.at(-1) !== syncing) answers.push(syncing);
        if (caughtUpAt === undefined && head >= target) {
          caughtUpAt = now;
          usage = sample.end();
        }
        if (caughtUpAt !== undefined) {
          const live = await tryCall<number>(validatorUrl, "chain_getRecentBlockNumber");
          if (liveAt === undefined && live !== undefined && head >= live - 1) liveAt = performance.now();
          if (!syncing && syncingFalseAt === undefined) syncingFalseAt = performance.now();
        }
      }
      await sleep(25);
    }
  } finally {
    finished = true;
  }
  const probed = await probing;
  const seconds = ((caughtUpAt as number) - spawned) / 1000;
  const fromRpc = ((caughtUpAt as number) - (rpcAt as number)) / 1000;
  const u = usage as Usage;
  return {
    seconds,
    secondsFromRpc: fromRpc,
    headAtRpc,
    blocksPerS: target / seconds,
    txsPerS: chainTxs / seconds,
    blocksPerSFromRpc: (target - headAtRpc) / fromRpc,
    txsPerSFromRpc: sum(counts.slice(headAtRpc)) / fromRpc,
    liveHeadS: liveAt === undefined ? undefined : (liveAt - spawned) / 1000,
    syncingFalseS: syncingFalseAt === undefined ? undefined : (syncingFalseAt - spawned) / 1000,
    syncingAnswers: answers,
    processPct: u.processPct,
    machineBusyPct: u.machineBusyPct,
    machineStealPct: u.machineStealPct,
    otherCpuPct: u.otherCpuPct,
    probeMs: probed.ms,
    probeFailed: probed.failed,
  };
}
