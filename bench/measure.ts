/**
 * One measured run (a load run against a server, or a recovery-rate run), with the CPU use of the
 * server, the load process and the whole machine, and the policy for runs that other processes
 * disturbed: this machine has 2 cores, so anything else running (a test suite, a build) shows up
 * directly in the figures.
 */
import { performance } from "node:perf_hooks";
import type { BenchContext } from "./context.ts";
import type { LoadResult, LoadSpec } from "./loadWorker.ts";
import { cpuSeconds, machineCpu, runJson } from "./procs.ts";
import type { RecoverResult } from "./recoverRate.ts";

/** CPU used by processes other than the measured ones above which a run is repeated, % of one core. */
export const OTHER_CPU_LIMIT_PCT = 25;

export interface MachineUsage {
  /** The whole machine in the measured phase, % of one core (200 % = both cores busy). */
  machineBusyPct: number | undefined;
  machineStealPct: number | undefined;
  /** Busy minus what the measured processes used: other processes (and unattributed kernel work). */
  otherCpuPct: number | undefined;
}

export type Measured = LoadResult & MachineUsage & { serverCpuPct: number | undefined };
export type MeasuredRecover = RecoverResult & MachineUsage;

/**
 * One load run in its own process (bench/loadWorker.ts). The server's CPU (all its threads) and the
 * machine's are sampled from /proc when the worker announces its measured phase and when it ends.
 */
export async function loadRun(spec: LoadSpec, serverPid: number | undefined): Promise<Measured> {
  let mark: { cpu: number | undefined; machine: ReturnType<typeof machineCpu>; at: number } | undefined;
  let usage: Pick<Measured, "serverCpuPct" | "machineBusyPct" | "machineStealPct"> = {
    serverCpuPct: undefined,
    machineBusyPct: undefined,
    machineStealPct: undefined,
  };
  const onLine = (line: string) => {
    if (line === "phase measured") {
      mark = { cpu: cpuSeconds(serverPid), machine: machineCpu(), at: performance.now() };
    }
    if (line === "phase end" && mark !== undefined) {
      const wall = (performance.now() - mark.at) / 1000;
      const cpu = cpuSeconds(serverPid);
      const machine = machineCpu();
      const server =
        cpu !== undefined && mark.cpu !== undefined ? ((cpu - mark.cpu) / wall) * 100 : undefined;
      const before = mark.machine;
      const both = machine !== undefined && before !== undefined;
      usage = {
        serverCpuPct: server,
        machineBusyPct: both ? ((machine.busy - before.busy) / wall) * 100 : undefined,
        machineStealPct: both ? ((machine.steal - before.steal) / wall) * 100 : undefined,
      };
    }
  };
  const result = await runJson<LoadResult>("load", ["bench/loadWorker.ts", JSON.stringify(spec)], onLine);
  const otherCpuPct =
    usage.machineBusyPct === undefined || usage.serverCpuPct === undefined
      ? undefined
      : usage.machineBusyPct - usage.serverCpuPct - result.loadCpuPct;
  return { ...result, ...usage, otherCpuPct };
}

/** What is wrong with a load run's responses, if anything. */
export function responseProblem(result: LoadResult, what: string): string | undefined {
  const bad = result.non2xx + result.errors + result.timeouts + result.mismatches;
  if (bad === 0 && result.requests > 0) return undefined;
  return (
    `${what}: ${result.requests} responses, non2xx ${result.non2xx}, errors ${result.errors}, ` +
    `timeouts ${result.timeouts}, mismatched bodies ${result.mismatches}`
  );
}

export async function recoverRun(secondsPerLoop: number): Promise<MeasuredRecover> {
  return runJson<MeasuredRecover>("recover", ["bench/recoverRate.ts", String(secondsPerLoop)]);
}

/**
 * The recovery-rate runs of this bench: admission's when it ran (they alternate with its runs),
 * else `runs` of them now, kept in `ctx.recover` for the scenarios after.
 */
export async function recoverBaseline(ctx: BenchContext): Promise<MeasuredRecover[]> {
  if (ctx.recover !== undefined && ctx.recover.length > 0) return ctx.recover;
  const recovered: MeasuredRecover[] = [];
  for (let run = 1; run <= ctx.settings.runs; run++) {
    recovered.push(
      await ctx.policy.run<MeasuredRecover>(
        `recover run ${run}`,
        (r) => r.rawPerS,
        () => recoverRun(ctx.settings.recoverSecondsPerLoop),
      ),
    );
  }
  ctx.recover = recovered;
  return recovered;
}

export interface DiscardedRun {
  what: string;
  otherCpuPct: number;
  figure: number;
}

/** Repeats of one run at most (the whole bench has its own budget too). */
export const REPEATS_PER_RUN = 2;

/**
 * Repeats runs that other processes disturbed (more than OTHER_CPU_LIMIT_PCT of a core beside the
 * measured ones), up to REPEATS_PER_RUN times per run and `budget` times in the whole bench; every
 * discarded run is kept for the report. When a budget is spent, or `canRepeat` says the run has
 * nothing left to repeat with (no unsent pre-signed transactions), the disturbed run stands, and
 * `disturbed` lists it.
 */
export class DisturbancePolicy {
  readonly discarded: DiscardedRun[] = [];
  readonly disturbed: DiscardedRun[] = [];
  private left: number;
  private readonly log: (message: string) => void;

  constructor(budget: number, log: (message: string) => void) {
    this.left = budget;
    this.log = log;
  }

  async run<T extends MachineUsage>(
    what: string,
    figure: (result: T) => number,
    attempt: (previous: T | undefined) => Promise<T>,
    canRepeat: () => boolean = () => true,
  ): Promise<T> {
    let previous: T | undefined;
    for (let repeats = 0; ; repeats++) {
      const result = await attempt(previous);
      const other = result.otherCpuPct ?? 0;
      if (other <= OTHER_CPU_LIMIT_PCT) return result;
      const entry = { what, otherCpuPct: Math.round(other), figure: Math.round(figure(result)) };
      if (this.left === 0 || repeats === REPEATS_PER_RUN || !canRepeat()) {
        this.disturbed.push(entry);
        return result;
      }
      this.left--;
      this.discarded.push(entry);
      this.log(`${what}: other processes used ${entry.otherCpuPct} % of a core; repeating the run`);
      previous = result;
    }
  }
}
