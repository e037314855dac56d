/**
 * `npm run bench`: the node against baselines measured in the same run, on this machine.
 *
 *  1. reads (bench/reads.ts): a dev node (its own process) holding a 100-transaction block, and a
 *     bare `node:http` JSON-RPC server answering bodies of the same byte length; autocannon in a
 *     third process (bench/loadWorker.ts), 32 connections, 1 s warm-up + 5 s, pipelining 1, node and
 *     baseline alternately, 3 runs each.
 *  1b. state reads (bench/stateReads.ts): `chain_getBalance` of random accounts on a dev node whose
 *     genesis funds 1,000,000 accounts, against the bare server; and that node's RSS. Then on that
 *     node (bench/valueReads.ts): `chain_getValue` of the same balance leaves against
 *     `chain_getBalance`, and `chain_getProof` times at the node and over HTTP.
 *  2. admission (bench/admission.ts): a second dev node takes pre-signed unordered `/users/<sender>`
 *     writes from fresh keys over 32 connections; the baseline is secp256k1 recovery on one core,
 *     alternating with the admission runs.
 *  3. ganache (bench/ganache.ts): one peer side by side, ganache 7.9.2 installed on demand into the
 *     git-ignored bench/.peers (bench/peers.ts; never a dependency, CI does not install it) and started
 *     in its own process on 127.0.0.1 with 1,000 funded keys and its default instamine. Against a dev
 *     node of ours in the same scenario, runs alternating: `chain_getRecentBlockNumber` vs
 *     `eth_blockNumber` req/s, and `chain_sendSignedTransaction` admitted vs `eth_sendRawTransaction`
 *     accepted tx/s (legacy transfers pre-signed with @ethereumjs/tx, rotating over the senders so
 *     nonces arrive in order; ganache's mined count is checked afterwards). If ganache cannot be
 *     installed or started, the scenario is skipped with a line saying why and the bench goes on.
 *  4. network (bench/network.ts).
 *  5. execution (bench/execution.ts): Chain.execute + Chain.commit of blocks of transfers on LMDB,
 *     in-process, with 10,000 and 1,000,000 funded accounts.
 *  5b. trie (bench/trie.ts): the state trie alone on an in-memory node table, blocks of 5,000
 *     transfers' leaf changes at 10,000 and 1,000,000 accounts: µs per transfer against keccak256
 *     of the same new nodes hashed alone.
 *  6. consensus (bench/consensusSim.ts): 100 validators on a manual clock, 33 silent vs all live,
 *     20–300 ms message delays: simulated time and rounds per height.
 *  7. join (bench/join.ts): a node joins a chain whose genesis funds 1,000,000 accounts, by state
 *     sync against by replay from genesis.
 *  8. history (bench/history.ts): chain_getTransactionsByAddress pages at 1,000,000 indexed
 *     transactions, first and deep, against the same transactions fetched by hash; the index's
 *     rebuild from the blocks (the schema-6 upgrade).
 *  9. wan (bench/wan.ts): four validators on four network namespaces, every p2p link through a
 *     delay proxy at 0, 50 ± 10 and 150 ± 20 ms one way: submit → committed at 40 transfers/s and
 *     committed transfers/s at full load (needs root; skipped with the reason otherwise).
 *  10. devload (bench/devLoad.ts): a dev node committing 30,000 pre-signed transactions sent in
 *     batches of 100 (committed/s against secp256k1 recover on one core), and `chain_getBalance`
 *     p99 and req/s on it while it commits at full rate, against the same reads idle (issue 20).
 *  11. hardhat (bench/hardhat.ts): that committed rate of a fresh dev node (30,000 pre-signed
 *     transactions in batches of 100, 4 in flight) beside hardhat 2's `hardhat node` with its
 *     default automine (a block per transaction), loaded the same way with pre-signed transfers
 *     (JSON-RPC batches of 100 `eth_sendRawTransaction`), runs alternating (issue 20). hardhat is
 *     installed on demand into bench/.peers like ganache; skipped with the reason when it cannot be.
 *
 * Prints a Markdown table on stdout (progress on stderr) and writes bench/results/latest.json.
 * Every child process is stopped and every temporary home removed, also on failure and Ctrl-C.
 * Environment knobs: BENCH_DURATION_S (5), BENCH_WARMUP_S (1), BENCH_RUNS (3), BENCH_ADMISSION_TXS
 * (pre-signed transactions per admission run, 40000; also per run of our node against ganache),
 * BENCH_GANACHE_TXS (pre-signed ganache transfers for all its runs, 8000),
 * BENCH_ONLY (reads | state | admission | ganache | network | execution | trie | disk | consensus | join |
 * history | wan | devload | hardhat), BENCH_WAN_LATENCY_S (30), BENCH_WAN_THROUGHPUT_S (20),
 * BENCH_HISTORY_TXS (1000000), BENCH_HISTORY_SAMPLES (2000),
 * BENCH_STATE_ACCOUNTS (1000000), BENCH_EXEC_BLOCKS (8), BENCH_EXEC_ACCOUNTS (1000000),
 * BENCH_EXEC_CPU_PROF_DIR, BENCH_SIM_HEIGHTS (10),
 * BENCH_NODE_CPU_PROF_DIR (dev nodes write CPU profiles there), BENCH_JOIN_ACCOUNTS (1000000),
 * BENCH_JOIN_BLOCKS (2000), BENCH_JOIN_BLOCK_TIME_MS (150), BENCH_JOIN_TXS_PER_BLOCK (100),
 * BENCH_JOIN_SNAPSHOT_INTERVAL (0: the blocks), BENCH_JOIN_BUILD_MAX_S (900),
 * BENCH_JOIN_TIMEOUT_S (1200), BENCH_JOIN_LOG_DIR, BENCH_DEVLOAD_BLOCK_TIME_MS (0: the dev genesis's),
 * BENCH_DEVLOAD_IN_FLIGHT (4), BENCH_HARDHAT_TXS (transfers per hardhat run, 10000).
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { SECP256K1_BACKEND } from "../src/crypto/index.ts";
import { admissionScenarios } from "./admission.ts";
import type { BenchContext, Settings } from "./context.ts";
import { PeerSkipped } from "./ethPeer.ts";
import { ganacheScenarios } from "./ganache.ts";
import { hardhatScenarios } from "./hardhat.ts";
import { DisturbancePolicy, OTHER_CPU_LIMIT_PCT } from "./measure.ts";
import { killAllSync, ROOT, stopAll } from "./procs.ts";
import { consensusSimScenarios } from "./consensusSim.ts";
import { devLoadScenarios } from "./devLoad.ts";
import { diskScenarios } from "./disk.ts";
import { executionScenarios } from "./execution.ts";
import { historyScenarios } from "./history.ts";
import { joinScenarios } from "./join.ts";
import { networkScenarios } from "./network.ts";
import { readScenarios } from "./reads.ts";
import { trieScenarios } from "./trie.ts";
import { stateReadScenarios } from "./stateReads.ts";
import { wanScenarios } from "./wan.ts";
import { cpuTable, markdownTable, type ScenarioResult, writeJson } from "./report.ts";

const envInt = (name: string, fallback: number) => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer`);
  return value;
};
const onlyFlag = process.argv.indexOf("--only");
const only = (onlyFlag >= 0 ? process.argv[onlyFlag + 1] : undefined) ?? process.env.BENCH_ONLY ?? "all";
if (
  only !== "all" &&
  only !== "reads" &&
  only !== "state" &&
  only !== "admission" &&
  only !== "ganache" &&
  only !== "network" &&
  only !== "execution" &&
  only !== "trie" &&
  only !== "disk" &&
  only !== "consensus" &&
  only !== "join" &&
  only !== "history" &&
  only !== "wan" &&
  only !== "devload" &&
  only !== "hardhat"
) {
  throw new Error(
    "--only (or BENCH_ONLY) is reads, state, admission, ganache, network, execution, trie, disk, consensus, join, history, wan, devload or hardhat (unset: all)",
  );
}
const settings: Settings = {
  connections: 32,
  pipelining: 1,
  durationS: envInt("BENCH_DURATION_S", 5),
  warmupS: envInt("BENCH_WARMUP_S", 1),
  runs: envInt("BENCH_RUNS", 3),
  admissionTxsPerRun: envInt("BENCH_ADMISSION_TXS", 40_000),
  ganacheTxs: envInt("BENCH_GANACHE_TXS", 8_000),
  recoverSecondsPerLoop: 3,
  readNodeBlockTimeMs: 50,
  admissionNodeBlockTimeMs: 3_600_000,
  disturbedRepeats: 6,
  only,
  stateAccounts: envInt("BENCH_STATE_ACCOUNTS", 1_000_000),
  netBlockTimeMs: envInt("BENCH_NET_BLOCK_TIME_MS", 200),
  netCores: 2,
  netWarmupS: envInt("BENCH_NET_WARMUP_S", 5),
  // 30 s: the phase's blocks hold ~3,000 transfers each, ~2.5 s apart; at 15 s (six of them) one
  // block more or less moved the figure by 15 % (docs/performance.md, fourth stop of 2026-11-26).
  netDurationS: envInt("BENCH_NET_DURATION_S", 30),
  netInFlightPerNode: envInt("BENCH_NET_IN_FLIGHT", 2),
  netMaxBacklog: envInt("BENCH_NET_MAX_BACKLOG", 10_000),
  netLatencyS: envInt("BENCH_NET_LATENCY_S", 12),
  netLoadTxs: envInt("BENCH_NET_TXS", 60_000),
  netLatencyTxs: envInt("BENCH_NET_LATENCY_TXS", 20_000),
  netPoolTxs: 1_000_000,
  netConsensus: {},
  netMinSyncBlocks: envInt("BENCH_NET_MIN_BLOCKS", 300),
  netCpuProfDir: process.env.BENCH_NET_CPU_PROF_DIR,
  netLogDir: process.env.BENCH_NET_LOG_DIR,
  netLogLevel: process.env.BENCH_NET_LOG_LEVEL,
  execBlocks: envInt("BENCH_EXEC_BLOCKS", 8),
  execWarmupBlocks: 2,
  execTxsPerBlock: 5_000,
  execLargeAccounts: envInt("BENCH_EXEC_ACCOUNTS", 1_000_000),
  execCpuProfDir: process.env.BENCH_EXEC_CPU_PROF_DIR,
  simHeights: envInt("BENCH_SIM_HEIGHTS", 10),
  joinAccounts: envInt("BENCH_JOIN_ACCOUNTS", 1_000_000),
  joinBlocks: envInt("BENCH_JOIN_BLOCKS", 2_000),
  joinBlockTimeMs: envInt("BENCH_JOIN_BLOCK_TIME_MS", 150),
  joinTxsPerBlock: envInt("BENCH_JOIN_TXS_PER_BLOCK", 100),
  joinSnapshotInterval: envInt("BENCH_JOIN_SNAPSHOT_INTERVAL", 0),
  joinBuildMaxS: envInt("BENCH_JOIN_BUILD_MAX_S", 900),
  joinTimeoutS: envInt("BENCH_JOIN_TIMEOUT_S", 1_200),
  joinLogDir: process.env.BENCH_JOIN_LOG_DIR,
  historyTxs: envInt("BENCH_HISTORY_TXS", 1_000_000),
  historySamples: envInt("BENCH_HISTORY_SAMPLES", 2_000),
  devLoadBlockTimeMs: envInt("BENCH_DEVLOAD_BLOCK_TIME_MS", 0),
  devLoadInFlight: envInt("BENCH_DEVLOAD_IN_FLIGHT", 4),
  hardhatTxs: envInt("BENCH_HARDHAT_TXS", 10_000),
};
const RESULTS = join(ROOT, "bench/results/latest.json");
const log = (message: string) => console.error(`[bench] ${message}`);

const tmp = mkdtempSync(join(tmpdir(), "chain-node-bench-"));
let cleaning: Promise<void> | undefined;
/** Stops every child and removes the temporary homes; every caller waits for the same work. */
function cleanup(): Promise<void> {
  cleaning ??= stopAll().finally(() => rmSync(tmp, { recursive: true, force: true }));
  return cleaning;
}
process.on("exit", () => {
  killAllSync();
  rmSync(tmp, { recursive: true, force: true });
});
let interrupted = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    interrupted = true;
    log(`${signal}: stopping every child process`);
    void cleanup().finally(() => process.exit(130));
  });
}

function gitRevision(): string {
  try {
    const git = (...args: string[]) =>
      execFileSync("git", args, { cwd: ROOT, stdio: "pipe" }).toString().trim();
    return `${git("rev-parse", "--short", "HEAD")}${git("status", "--porcelain") === "" ? "" : "+dirty"}`;
  } catch {
    return "unknown";
  }
}

const started = Date.now();
const revision = gitRevision(); // read before the nodes load the sources
const ctx: BenchContext = {
  settings,
  tmp,
  log,
  problems: [],
  policy: new DisturbancePolicy(settings.disturbedRepeats, log),
};
const results: ScenarioResult[] = [];
/** Scenarios that could not run (a peer that could not be installed or started), with the reason. */
const skipped: string[] = [];
/** Runs a scenario against a peer; one that cannot be installed or started is skipped with the reason. */
async function withPeer(name: string, scenarios: (ctx: BenchContext) => Promise<ScenarioResult[]>) {
  try {
    results.push(...(await scenarios(ctx)));
  } catch (error) {
    // After Ctrl-C a peer that "did not start" was stopped by us: not a skip to report.
    if (interrupted || !(error instanceof PeerSkipped)) throw error;
    skipped.push(`${name}: ${error.message}`);
    log(`SKIPPED ${name} scenario: ${error.message}`);
  }
}
try {
  log(`settings ${JSON.stringify(settings)}`);
  const runs = (part: Settings["only"]) => settings.only === "all" || settings.only === part;
  if (runs("reads")) results.push(...(await readScenarios(ctx)));
  await stopAll(); // the reads node and the baseline server
  if (runs("state")) results.push(...(await stateReadScenarios(ctx)));
  await stopAll(); // the 1M-account node and its baseline server
  if (runs("admission")) results.push(...(await admissionScenarios(ctx)));
  await stopAll(); // the admission node
  if (runs("ganache")) await withPeer("ganache", ganacheScenarios);
  await stopAll(); // ganache and our node beside it
  if (runs("network")) results.push(...(await networkScenarios(ctx)));
  await stopAll(); // the testnet
  if (runs("execution")) results.push(...(await executionScenarios(ctx)));
  if (runs("trie")) results.push(...(await trieScenarios(ctx)));
  if (runs("disk")) results.push(...(await diskScenarios(ctx)));
  if (runs("consensus")) results.push(...(await consensusSimScenarios(ctx)));
  if (runs("join")) results.push(...(await joinScenarios(ctx)));
  if (runs("history")) results.push(...(await historyScenarios(ctx)));
  if (runs("wan")) results.push(...(await wanScenarios(ctx)));
  await stopAll(); // the WAN testnet
  if (runs("devload")) results.push(...(await devLoadScenarios(ctx)));
  await stopAll(); // the devload node
  if (runs("hardhat")) await withPeer("hardhat", hardhatScenarios);
} catch (error) {
  // After Ctrl-C the children die under the running step: that failure is expected, not news.
  if (!interrupted) throw error;
  await cleanup();
  process.exit(130);
} finally {
  await cleanup();
}

const machine = {
  cpus: cpus().length,
  model: cpus()[0]?.model ?? "unknown",
  memoryGiB: Math.round(totalmem() / 2 ** 30),
  node: process.version,
  secp256k1: SECP256K1_BACKEND,
};
const table = markdownTable(results);
const cpu = cpuTable(results);
const { discarded, disturbed } = ctx.policy;
console.log(
  `\nchain-node bench, ${new Date().toISOString()}, ${machine.cpus} CPUs (${machine.model}), Node ${machine.node}`,
);
console.log(
  `${settings.connections} connections, pipelining ${settings.pipelining}, ${settings.warmupS} s warm-up + ` +
    `${settings.durationS} s per run, ${settings.runs} runs each, node and baseline alternating\n`,
);
console.log(table);
// Scenarios measured in one process (execution) have no server/load CPU split to show.
if (cpu.split("\n").length > 2) {
  console.log(
    `\nCPU in the measured phases (median, % of one core; ${machine.cpus} cores = ${machine.cpus * 100} %):\n`,
  );
  console.log(cpu);
}
if (discarded.length > 0) {
  console.log(
    `\n${discarded.length} run(s) repeated because other processes used more than ${OTHER_CPU_LIMIT_PCT} % of a core: ` +
      discarded.map((d) => `${d.what} (${d.figure}/s, other ${d.otherCpuPct} %)`).join("; "),
  );
}
if (disturbed.length > 0) {
  console.log(
    `\nWARNING: ${disturbed.length} run(s) kept although other processes disturbed them: ` +
      disturbed.map((d) => `${d.what} (other ${d.otherCpuPct} %)`).join("; "),
  );
}
if (skipped.length > 0) {
  console.log("\nSKIPPED (not measured in this run):");
  for (const s of skipped) console.log(`- ${s}`);
}
if (ctx.problems.length > 0) {
  console.log("\nPROBLEMS (figures above are not trustworthy):");
  for (const p of ctx.problems) console.log(`- ${p}`);
}
writeJson(RESULTS, {
  date: new Date().toISOString(),
  revision,
  elapsedS: Math.round((Date.now() - started) / 1000),
  machine,
  settings,
  results,
  discardedRuns: discarded,
  disturbedRuns: disturbed,
  problems: ctx.problems,
  skipped,
  table,
  cpu,
});
console.log(`\nwritten ${RESULTS} (${Math.round((Date.now() - started) / 1000)} s)`);
process.exitCode = ctx.problems.length > 0 ? 1 : 0;
