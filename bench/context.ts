/** What every part of the bench shares: its settings, temporary directory, log and findings. */
import type { DisturbancePolicy, MachineUsage } from "./measure.ts";

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
  only: "all" | "reads" | "admission";
}

export interface BenchContext {
  settings: Settings;
  /** Temporary directory for node homes and pre-signed files; removed at the end. */
  tmp: string;
  log(message: string): void;
  /** Anything that makes a figure untrustworthy (bad responses, rejections). */
  problems: string[];
  policy: DisturbancePolicy;
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
