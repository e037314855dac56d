/** What every part of the bench shares: its settings, temporary directory, log and findings. */
import type { DisturbancePolicy, MachineUsage, MeasuredRecover } from "./measure.ts";

export interface Settings {
  connections: number;
  pipelining: number;
  durationS: number;
  warmupS: number;
  runs: number;
  /** Pre-signed transactions per admission run (more than a run can use: a run must not run out). */
  admissionTxsPerRun: number;
  recoverSecondsPerLoop: number;
  readNodeBlockTimeMs: number;
  /** Long enough that no block is made during the admission runs (the pool is not drained). */
  admissionNodeBlockTimeMs: number;
  /** Repeats allowed in the whole bench for runs that other processes disturbed. */
  disturbedRepeats: number;
  only:
    | "all"
    | "reads"
    | "state"
    | "admission"
    | "ganache"
    | "network"
    | "execution"
    | "trie"
    | "disk"
    | "consensus"
    | "join"
    | "history"
    | "wan"
    | "devload"
    | "hardhat";
  /** Funded accounts in the state-reads node's genesis (issue 5: 1,000,000). */
  stateAccounts: number;
  /** Pre-signed ganache transfers for all ganache send runs together (bench/ganache.ts). */
  ganacheTxs: number;
  /** Network scenarios (bench/network.ts): genesis block time of the testnet, ms. */
  netBlockTimeMs: number;
  /** Cores the network baseline counts (issue 5: recover rate × 2 cores / 4 nodes). */
  netCores: number;
  /** Throughput load: warm-up, then the measured phase, split into `runs` equal windows. */
  netWarmupS: number;
  netDurationS: number;
  /** Batch requests of 100 transfers open per validator at any time. */
  netInFlightPerNode: number;
  /** Admitted transfers not yet in a block above which the load waits. */
  netMaxBacklog: number;
  /** Steady-rate latency run, s. */
  netLatencyS: number;
  /** Pre-signed transfers for the throughput and the latency run. */
  netLoadTxs: number;
  netLatencyTxs: number;
  /** `[pool] max_txs` and `max_txs_per_account` of every node. */
  netPoolTxs: number;
  /** `[consensus]` keys of every node's config.toml (none: the node's defaults). */
  netConsensus: Record<string, number>;
  /** The chain the fifth node syncs has at least this many blocks. */
  netMinSyncBlocks: number;
  /** When set, every validator runs with `--cpu-prof --cpu-prof-dir <this>`. */
  netCpuProfDir: string | undefined;
  /** When set, the nodes log from `info` and their logs are written there at the end. */
  netLogDir: string | undefined;
  /** The nodes' log level when their logs are kept (info unless set). */
  netLogLevel: string | undefined;
  /** Block execution (bench/execution.ts): measured blocks per run, after the warm-up ones. */
  execBlocks: number;
  execWarmupBlocks: number;
  execTxsPerBlock: number;
  /** Funded accounts of the large run (issue 5: 1,000,000). */
  execLargeAccounts: number;
  /** When set, each run writes a CPU profile of its measured blocks there. */
  execCpuProfDir: string | undefined;
  /** Heights of each simulated 100-validator run (bench/consensusSim.ts). */
  simHeights: number;
  /** Join (bench/join.ts): accounts funded by the genesis beside the testnet's ten (issue 17: 1,000,000). */
  joinAccounts: number;
  /** Blocks the chain has (with transactions) before the nodes join. */
  joinBlocks: number;
  /** Genesis block time of the join testnet, ms. */
  joinBlockTimeMs: number;
  /** Transfers sent per block time while the chain is built (the average block's load). */
  joinTxsPerBlock: number;
  /** `[snapshot] interval` of the validator; 0: `joinBlocks` (one snapshot, at the end of the build). */
  joinSnapshotInterval: number;
  /** The build (load until `joinBlocks`, then the snapshot) fails past this many seconds. */
  joinBuildMaxS: number;
  /** Each join fails past this many seconds. */
  joinTimeoutS: number;
  /** When set, the join testnet's node logs are written there at the end. */
  joinLogDir: string | undefined;
  /** History (bench/history.ts): transactions indexed (issue 18: 1,000,000). */
  historyTxs: number;
  /** Requests of each kind per run (and handler calls in-process). */
  historySamples: number;
  /** Block time of the devload node, ms; 0: the dev genesis's (1,000 ms). */
  devLoadBlockTimeMs: number;
  /** `chain_sendSignedTransactionBatch` calls the devload submitter keeps open (4). */
  devLoadInFlight: number;
  /** Transfers per hardhat run beside the dev node's committed runs (bench/hardhat.ts; 10,000). */
  hardhatTxs: number;
}

export interface BenchContext {
  settings: Settings;
  /** Temporary directory for node homes and pre-signed files; removed at the end. */
  tmp: string;
  log(message: string): void;
  /** Anything that makes a figure untrustworthy (bad responses, rejections). */
  problems: string[];
  policy: DisturbancePolicy;
  /** Recovery-rate runs measured so far (admission's), reused as the network baseline. */
  recover?: MeasuredRecover[];
}

const pct = (n: number | undefined) => (n === undefined ? null : Math.round(n));

type Usage = MachineUsage & { serverCpuPct: number | undefined; loadCpuPct: number };

/** CPU per run, % of one core: the server (all threads), the load process, the machine, the rest. */
export function cpuDetails(nodeRuns: Usage[], baseRuns: Usage[]): Record<string, unknown> {
  const out: Record<string, unknown> = {
    nodeCpuPct: nodeRuns.map((r) => pct(r.serverCpuPct)),
    loadCpuPctAgainstNode: nodeRuns.map((r) => pct(r.loadCpuPct)),
    machineBusyPctAgainstNode: nodeRuns.map((r) => pct(r.machineBusyPct)),
    otherCpuPctAgainstNode: nodeRuns.map((r) => pct(r.otherCpuPct)),
  };
  if (baseRuns.length > 0) {
    out.baselineCpuPct = baseRuns.map((r) => pct(r.serverCpuPct));
    out.loadCpuPctAgainstBaseline = baseRuns.map((r) => pct(r.loadCpuPct));
    out.machineBusyPctAgainstBaseline = baseRuns.map((r) => pct(r.machineBusyPct));
    out.otherCpuPctAgainstBaseline = baseRuns.map((r) => pct(r.otherCpuPct));
  }
  return out;
}
