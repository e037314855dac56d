/**
 * Join time to a chain with 1,000,000 accounts (issue 17, item 3): state sync against replay from
 * genesis, each a real `chain-node start` process on an empty home.
 *
 *  1. `chain-node testnet --validators 1 --full-nodes 2`, whose genesis funds `joinAccounts` extra
 *     random accounts (bench/joinGenesis.ts, written into every home). One validator, not four:
 *     this machine has 2 cores, and four validators each holding the 1,000,000-account state and
 *     executing every block (docs/performance.md, "Network": four validators commit far fewer
 *     transfers than one core recovers) would leave the joining node a fraction of a core and make
 *     the build several times longer; what is compared here is the joining node's work, which
 *     does not depend on how many validators made the chain. The validator takes one snapshot,
 *     at `joinBlocks` (`[snapshot] interval`, BENCH_JOIN_SNAPSHOT_INTERVAL to change).
 *  2. The chain is built: the validator is loaded with pre-signed transfers (bench/netPresign.ts)
 *     at a steady `joinTxsPerBlock` per block time (bench/netLoad.ts, latency mode) until it has
 *     `joinBlocks` blocks; then the bench waits for the snapshot file. The build is bounded by
 *     `joinBuildMaxS` (it fails past it, saying so).
 *  3. Join by state sync: full node 2's config gets `[sync] state_sync = true` with a trusted
 *     block 10 below the snapshot (its hash from the validator's RPC). Timed from its spawn until
 *     its head reaches the validator's head of that moment (polling chain_getRecentBlockNumber);
 *     its log's `state sync:` lines give the phases and the restore's own seconds.
 *  4. Join by replay: full node 1 (empty home, block sync from genesis), timed the same way.
 *     State sync goes first: the chain keeps making (empty) blocks while the nodes join, and a
 *     state-synced node block-syncs everything after its snapshot, so going second would add the
 *     first join's blocks to its work; replay goes through all blocks anyway, and the few hundred
 *     empty ones made meanwhile are reported (`replayHead` against `blocks`).
 *  Its first run at the default sizes found that a snapshot's manifest held the whole genesis
 *  (over the manifest limits past about 55,000 genesis accounts, so nothing was offered); the
 *  genesis now travels as chunks (docs/decisions/010). If a join fails, the bench stops there.
 *  Each joined node is stopped after its measurement (the two never run at once); its peak RSS is
 *  VmHWM from /proc (Linux; it counts LMDB's mapped pages it touched).
 */
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import type { TestnetFile } from "../src/node/index.ts";
import type { BenchContext } from "./context.ts";
import type { LatencyResult, NetLoadSpec } from "./netLoad.ts";
import { call, freeBase, tryCall, txCounts } from "./network.ts";
import { type Child, runJson, spawnNode, waitForRpc } from "./procs.ts";
import { type ScenarioResult, series } from "./report.ts";

const VALIDATOR = 0;
const REPLAY = 1;
const STATE_SYNC = 2;
/** The trusted block is this far below the snapshot (any height at or below it works). */
const TRUST_BELOW_SNAPSHOT = 10;
const ACCOUNT_BALANCE = 1_000;
/** The validator's `[consensus] timeout_vote_ms` (see where it is written). */
const VALIDATOR_VOTE_TIMEOUT_MS = 100;
/** The longest load run of the build: the rate follows the chain's block rate between runs. */
const BUILD_RUN_S = 30;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const fmt = (n: number) => Math.round(n).toLocaleString("en-US");

interface JoinNet {
  file: TestnetFile;
  path: string;
  nodes: (Child | undefined)[];
}

function homeOf(net: JoinNet, i: number): string {
  const node = net.file.nodes[i];
  if (node === undefined) throw new Error(`the join testnet has no node ${i}`);
  return node.home;
}
const urlOf = (net: JoinNet, i: number) => net.file.nodes[i]?.rpc_url as string;

async function createJoinNet(ctx: BenchContext): Promise<JoinNet> {
  const out = join(ctx.tmp, "join-testnet");
  const base = await freeBase(3);
  const create = spawnNode("chain-node testnet (join)", [
    "bin/chain-node.js",
    "testnet",
    ...["--validators", "1", "--full-nodes", "2", "--out", out, "--base-port", String(base)],
    ...["--block-time", String(ctx.settings.joinBlockTimeMs)],
  ]);
  create.child.stdin?.end();
  const code = await create.exited;
  if (code !== 0) throw new Error(`chain-node testnet exited with ${code}:\n${create.stderr()}`);
  const path = join(out, "testnet.json");
  const file = JSON.parse(readFileSync(path, "utf8")) as TestnetFile;
  return { file, path, nodes: file.nodes.map(() => undefined) };
}

/** Heights of the complete snapshots in a home (`data/snapshots/<height>.snapshot`). */
function snapshotHeights(home: string): number[] {
  const dir = join(home, "data", "snapshots");
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .map((name) => /^(\d+)\.snapshot$/.exec(name)?.[1])
    .filter((h): h is string => h !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
}

/** Peak resident set of a live process, MiB (VmHWM; undefined when not readable). */
function rssPeakMiB(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const kib = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return kib === undefined ? undefined : Number(kib) / 1024;
  } catch {
    return undefined;
  }
}

interface JoinRun {
  /** From spawn until its head reached the validator's head of that moment. */
  seconds: number;
  /** From spawn until its RPC first answered, and its head then. */
  firstRpcS: number;
  headAtFirstRpc: number;
  /** Its head when caught up. */
  head: number;
  rssPeakMiB: number | undefined;
  /** Its log (pino JSON lines). */
  log: string;
  spawnedAtMs: number;
}

/** Starts node `i` and polls its head (every 100 ms) until it reaches the validator's. */
async function timeJoin(ctx: BenchContext, net: JoinNet, i: number, label: string): Promise<JoinRun> {
  const url = urlOf(net, i);
  const validatorUrl = urlOf(net, VALIDATOR);
  const spawnedAtMs = Date.now();
  const spawned = performance.now();
  const child = spawnNode(`chain-node node${i} (${label})`, [
    "bin/chain-node.js",
    ...["start", "--home", homeOf(net, i), "--log-level", "info"],
  ]);
  net.nodes[i] = child;
  const deadline = spawned + ctx.settings.joinTimeoutS * 1000;
  let firstRpc: number | undefined;
  let headAtFirstRpc = 0;
  for (;;) {
    if (child.child.exitCode !== null || child.child.signalCode !== null) {
      throw new Error(`node${i} (${label}) exited:\n${child.stderr().slice(-3000)}`);
    }
    if (performance.now() > deadline) {
      throw new Error(`node${i} (${label}) did not catch up within ${ctx.settings.joinTimeoutS} s`);
    }
    // Not serving yet (state sync, genesis) or too busy to answer: try again.
    const live = await tryCall<number>(validatorUrl, "chain_getRecentBlockNumber");
    const head = await tryCall<number>(url, "chain_getRecentBlockNumber");
    const now = performance.now();
    if (head !== undefined) {
      if (firstRpc === undefined) {
        firstRpc = now;
        headAtFirstRpc = head;
        ctx.log(
          `join: node${i} (${label}) serves RPC after ${((now - spawned) / 1000).toFixed(1)} s, head ${head}`,
        );
      }
      if (live !== undefined && head >= live) {
        const run: JoinRun = {
          seconds: (now - spawned) / 1000,
          firstRpcS: (firstRpc - spawned) / 1000,
          headAtFirstRpc,
          head,
          rssPeakMiB: rssPeakMiB(child.child.pid),
          log: child.stderr(),
          spawnedAtMs,
        };
        await child.stop(10_000);
        run.log = child.stderr();
        return run;
      }
    }
    await sleep(100);
  }
}

interface LogLine {
  time?: number | string;
  level?: number;
  msg?: string;
  [key: string]: unknown;
}

function logLines(log: string): LogLine[] {
  const lines: LogLine[] = [];
  for (const line of log.split("\n")) {
    if (!line.startsWith("{")) continue;
    try {
      lines.push(JSON.parse(line) as LogLine);
    } catch {
      // a torn or non-JSON line: not ours to read
    }
  }
  return lines;
}

/** Seconds from spawn to the first line whose message starts with `prefix` (undefined: none). */
function firstAt(lines: LogLine[], prefix: string, spawnedAtMs: number): number | undefined {
  const time = lines.find((l) => l.msg?.startsWith(prefix) === true)?.time;
  // pino writes epoch ms, or an ISO string when the node's logger is set up so.
  const ms = typeof time === "string" ? Date.parse(time) : time;
  return ms === undefined || Number.isNaN(ms) ? undefined : (ms - spawnedAtMs) / 1000;
}

/** Warning and worse lines of a log, counted by message. */
function warnings(lines: LogLine[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of lines) {
    if ((line.level ?? 0) < 40) continue;
    const msg = line.msg ?? "?";
    out[msg] = (out[msg] ?? 0) + 1;
  }
  return out;
}

interface Build {
  seconds: number;
  head: number;
  submitted: number;
  admitted: number;
  committed: number;
  loadRuns: number;
}

/**
 * Loads the validator at a steady rate until its head reaches `joinBlocks`, in runs of at most
 * BUILD_RUN_S: each run's rate is `joinTxsPerBlock` times the blocks per second the chain made in
 * the run before (blocks with transactions take longer than the genesis block time).
 */
async function buildChain(ctx: BenchContext, net: JoinNet, txsFile: string, txs: number): Promise<Build> {
  const { settings } = ctx;
  const url = urlOf(net, VALIDATOR);
  const started = performance.now();
  const deadline = started + settings.joinBuildMaxS * 1000;
  let blocksPerS = 1000 / settings.joinBlockTimeMs;
  let head = await call<number>(url, "chain_getRecentBlockNumber");
  const build: Build = { seconds: 0, head, submitted: 0, admitted: 0, committed: 0, loadRuns: 0 };
  while (head < settings.joinBlocks) {
    const leftS = (deadline - performance.now()) / 1000;
    if (leftS < 1) {
      throw new Error(
        `join: the build reached block ${head} of ${settings.joinBlocks} in BENCH_JOIN_BUILD_MAX_S = ${settings.joinBuildMaxS} s; lower BENCH_JOIN_BLOCKS or raise the limit`,
      );
    }
    if (build.submitted >= txs) {
      ctx.problems.push(
        `join: ran out of pre-signed transfers at block ${head}; the blocks after it are empty`,
      );
      while (head < settings.joinBlocks && performance.now() < deadline) {
        await sleep(200);
        head = await call<number>(url, "chain_getRecentBlockNumber");
      }
      continue;
    }
    const durationS = Math.min(leftS, BUILD_RUN_S, Math.max(2, (settings.joinBlocks - head) / blocksPerS));
    const spec: NetLoadSpec = {
      mode: "latency",
      urls: [url],
      pollUrl: url,
      pollMs: 50,
      txsFile,
      firstTx: build.submitted,
      durationS,
      ratePerS: settings.joinTxsPerBlock * blocksPerS,
      tickMs: 20,
      drainS: 5,
    };
    const runStarted = performance.now();
    const runHead = head;
    const run = await runJson<LatencyResult>("load (join)", ["bench/netLoad.ts", JSON.stringify(spec)]);
    build.loadRuns++;
    build.submitted += run.submitted;
    build.admitted += run.admitted;
    build.committed += run.committed;
    if (Object.keys(run.rejected).length > 0) {
      ctx.problems.push(`join: transfers rejected while building: ${JSON.stringify(run.rejected)}`);
    }
    head = await call<number>(url, "chain_getRecentBlockNumber");
    blocksPerS = Math.max(0.5, (head - runHead) / ((performance.now() - runStarted) / 1000));
    ctx.log(
      `join: build at block ${head} after ${Math.round((performance.now() - started) / 1000)} s, ` +
        `${fmt(build.committed)} transfers committed, ${blocksPerS.toFixed(1)} blocks/s in the last run`,
    );
  }
  build.head = head;
  build.seconds = (performance.now() - started) / 1000;
  return build;
}

export async function joinScenarios(ctx: BenchContext): Promise<ScenarioResult[]> {
  const net = await createJoinNet(ctx);
  try {
    return await onJoinNet(ctx, net);
  } finally {
    await Promise.all(net.nodes.map((c) => c?.stop(10_000)));
    const dir = ctx.settings.joinLogDir;
    if (dir !== undefined) {
      mkdirSync(dir, { recursive: true });
      for (const [i, child] of net.nodes.entries()) {
        if (child !== undefined) writeFileSync(join(dir, `join-node${i}.log`), child.stderr());
      }
      ctx.log(`join: node logs in ${dir}`);
    }
  }
}

async function onJoinNet(ctx: BenchContext, net: JoinNet): Promise<ScenarioResult[]> {
  const { settings, log } = ctx;
  const started = performance.now();
  const interval = settings.joinSnapshotInterval > 0 ? settings.joinSnapshotInterval : settings.joinBlocks;
  const validatorHome = homeOf(net, VALIDATOR);
  const validatorUrl = urlOf(net, VALIDATOR);
  const estimateS = (settings.joinBlocks * settings.joinBlockTimeMs) / 1000;
  log(
    `join: 1 validator + 2 full nodes, ${fmt(settings.joinAccounts)} extra accounts, ${fmt(settings.joinBlocks)} blocks ` +
      `of ~${settings.joinTxsPerBlock} transfers at ${settings.joinBlockTimeMs} ms (at least ${Math.round(estimateS)} s ` +
      `to build, limit ${settings.joinBuildMaxS} s), snapshot interval ${interval}`,
  );

  // Every transfer the build can send, with a margin for blocks slower than the block time.
  const txs = Math.ceil(settings.joinBlocks * settings.joinTxsPerBlock * 1.2);
  const txsFile = join(ctx.tmp, "join-load.json");
  const signing = runJson<{ ms: number }>("presign (join)", [
    "bench/netPresign.ts",
    net.path,
    String(txs),
    "j",
    txsFile,
  ]);
  const genesis = await runJson<{ accounts: number; genesisBytes: number; ms: number }>("genesis (join)", [
    "bench/joinGenesis.ts",
    net.path,
    String(settings.joinAccounts),
    String(ACCOUNT_BALANCE),
  ]);
  log(
    `join: genesis of ${fmt(genesis.accounts)} accounts, ${fmt(genesis.genesisBytes)} bytes, in every home (${genesis.ms} ms)`,
  );
  // timeout_vote_ms: a lone validator was seen (2026-11-26) to commit one block per
  // timeout_vote_ms (1,000 ms by default) whatever the genesis block time; at 100 it keeps the
  // block time, so the chain is built in minutes, not half an hour.
  appendFileSync(
    join(validatorHome, "config.toml"),
    `\n[snapshot]\ninterval = ${interval}\nkeep = 2\n\n[pool]\nmax_txs = 1000000\nmax_txs_per_account = 1000000\n` +
      `\n[consensus]\ntimeout_vote_ms = ${VALIDATOR_VOTE_TIMEOUT_MS}\n`,
  );
  const validator = spawnNode("chain-node node0 (validator)", [
    "bin/chain-node.js",
    ...["start", "--home", validatorHome, "--log-level", "info"],
  ]);
  net.nodes[VALIDATOR] = validator;
  await waitForRpc(validator, validatorUrl, 300_000);
  const validatorUpS = (performance.now() - started) / 1000;
  const signed = await signing;
  log(
    `join: validator serving after ${validatorUpS.toFixed(1)} s; ${fmt(txs)} transfers pre-signed in ${signed.ms} ms`,
  );

  // Build the chain, then wait for the snapshot at the highest multiple of the interval.
  const build = await buildChain(ctx, net, txsFile, txs);
  const snapshotAt = Math.floor(build.head / interval) * interval;
  const snapshotWaitStarted = performance.now();
  while (!snapshotHeights(validatorHome).includes(snapshotAt)) {
    if ((performance.now() - started) / 1000 > settings.joinBuildMaxS + 300) {
      throw new Error(
        `join: no snapshot at ${snapshotAt} in ${validatorHome} (have ${snapshotHeights(validatorHome)})`,
      );
    }
    await sleep(200);
  }
  const snapshotWaitS = (performance.now() - snapshotWaitStarted) / 1000;
  const counts = await txCounts(validatorUrl, 1, build.head);
  const chainTxs = counts.reduce((s, c) => s + c, 0);
  const buildS = (performance.now() - started) / 1000;
  log(
    `join: chain built in ${Math.round(buildS)} s: ${build.head} blocks, ${fmt(chainTxs)} transactions ` +
      `(${(chainTxs / build.head).toFixed(0)} per block), snapshot at ${snapshotAt} (waited ${snapshotWaitS.toFixed(1)} s)`,
  );

  // Join B first (see the header): state sync from a block trusted just below the snapshot.
  const trustHeight = Math.max(1, snapshotAt - TRUST_BELOW_SNAPSHOT);
  const trusted = await call<{ hash: string }>(validatorUrl, "chain_getBlockByNumber", {
    number: trustHeight,
  });
  appendFileSync(
    join(homeOf(net, STATE_SYNC), "config.toml"),
    `\n[sync]\nstate_sync = true\ntrust_height = ${trustHeight}\ntrust_hash = "${trusted.hash}"\n`,
  );
  const headBeforeSync = await call<number>(validatorUrl, "chain_getRecentBlockNumber");
  const synced = await timeJoin(ctx, net, STATE_SYNC, "state sync");
  const syncLines = logLines(synced.log);
  const restored = syncLines.find((l) => l.msg?.startsWith("state sync: restored") === true);
  if (restored === undefined)
    ctx.problems.push("join: the state-synced node logged no `state sync: restored`");
  const restoredHeight = Number(restored?.height ?? Number.NaN);
  const restoreSeconds = Number(restored?.seconds ?? Number.NaN);
  const phases = {
    discoveringS: firstAt(syncLines, "state sync: discovering", synced.spawnedAtMs),
    verifyingS: firstAt(syncLines, "state sync: verifying", synced.spawnedAtMs),
    fetchingS: firstAt(syncLines, "state sync: fetching", synced.spawnedAtMs),
    rebuildingS: firstAt(syncLines, "state sync: rebuilding", synced.spawnedAtMs),
    restoredS: firstAt(syncLines, "state sync: restored", synced.spawnedAtMs),
  };
  log(
    `join: state sync caught up at block ${synced.head} in ${synced.seconds.toFixed(1)} s from spawn ` +
      `(restored block ${restoredHeight}, ${restored?.chunks} chunks, ${restored?.leaves} leaves, in ${restoreSeconds} s ` +
      `by its log; phases from spawn ${JSON.stringify(phases)}); peak RSS ${Math.round(synced.rssPeakMiB ?? Number.NaN)} MiB`,
  );

  // Join A: replay from genesis.
  const headBeforeReplay = await call<number>(validatorUrl, "chain_getRecentBlockNumber");
  const replay = await timeJoin(ctx, net, REPLAY, "replay");
  const replayBlocksPerS = replay.head / replay.seconds;
  log(
    `join: replay caught up at block ${replay.head} in ${replay.seconds.toFixed(1)} s from spawn ` +
      `(${replayBlocksPerS.toFixed(1)} blocks/s, ${fmt(chainTxs / replay.seconds)} tx/s); peak RSS ${Math.round(replay.rssPeakMiB ?? Number.NaN)} MiB`,
  );
  const snapshotsAtEnd = snapshotHeights(validatorHome);
  if (snapshotsAtEnd.some((h) => h > snapshotAt)) {
    ctx.problems.push(
      `join: the validator took a snapshot during the joins (${snapshotsAtEnd}): it competed for the CPU`,
    );
  }
  const nodeWarnings = {
    validator: warnings(logLines(validator.stderr())),
    stateSync: warnings(syncLines),
    replay: warnings(logLines(replay.log)),
  };
  log(`join: warnings in the node logs ${JSON.stringify(nodeWarnings)}`);

  const round1 = (n: number | undefined) => (n === undefined ? null : Math.round(n * 10) / 10);
  const label = `${fmt(settings.joinAccounts)} accounts, ${fmt(build.head)} blocks, ${fmt(chainTxs)} transfers`;
  const details = {
    accounts: genesis.accounts,
    genesisBytes: genesis.genesisBytes,
    blocks: build.head,
    transactions: chainTxs,
    blocksWithTransactions: counts.filter((c) => c > 0).length,
    blockTimeMs: settings.joinBlockTimeMs,
    buildS: round1(buildS),
    buildLoadS: round1(build.seconds),
    validatorUpS: round1(validatorUpS),
    snapshotInterval: interval,
    snapshotHeight: restoredHeight,
    snapshotLeaves: restored?.leaves,
    chunks: restored?.chunks,
    trustHeight,
    restoreSeconds,
    stateSyncPhasesFromSpawnS: Object.fromEntries(Object.entries(phases).map(([k, v]) => [k, round1(v)])),
    stateSyncFirstRpcS: round1(synced.firstRpcS),
    stateSyncHeadAtFirstRpc: synced.headAtFirstRpc,
    stateSyncValidatorHeadAtSpawn: headBeforeSync,
    stateSyncHead: synced.head,
    stateSyncRssPeakMiB: round1(synced.rssPeakMiB),
    replayFirstRpcS: round1(replay.firstRpcS),
    replayValidatorHeadAtSpawn: headBeforeReplay,
    replayHead: replay.head,
    replayBlocksPerS: round1(replayBlocksPerS),
    replayTxsPerS: Math.round(chainTxs / replay.seconds),
    replayRssPeakMiB: round1(replay.rssPeakMiB),
    nodeWarnings,
  };
  const rss = (r: JoinRun) => r.rssPeakMiB ?? Number.NaN;
  return [
    {
      id: "join-state-sync-vs-replay",
      title: `join time from spawn to the validator's head, state sync vs replay from genesis, ${label} (lower is better)`,
      unit: "s",
      nodeLabel: "state sync",
      baselineLabel: "s (replay)",
      node: series([synced.seconds]),
      baseline: series([replay.seconds]),
      ratio: synced.seconds / replay.seconds,
      details,
    },
    {
      id: "join-rss-state-sync-vs-replay",
      title: `peak RSS of the joining node, state sync vs replay, ${label}`,
      unit: "MiB",
      nodeLabel: "state sync",
      baselineLabel: "MiB (replay)",
      node: series([rss(synced)]),
      baseline: series([rss(replay)]),
      ratio: rss(synced) / rss(replay),
      details: {},
    },
  ];
}
