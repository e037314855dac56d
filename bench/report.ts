/** Statistics over runs, the Markdown table and the JSON summary of a bench run. */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { ROOT } from "./procs.ts";

export interface Series {
  /** One figure per run, in run order. */
  runs: number[];
  min: number;
  median: number;
  max: number;
}

export interface ScenarioResult {
  id: string;
  /** What is measured, as shown in the table. */
  title: string;
  unit: string;
  nodeLabel: string;
  baselineLabel: string;
  node: Series;
  /** Absent where nothing comparable is measured (latencies, blocks/s). */
  baseline: Series | undefined;
  /** median(node) / median(baseline). */
  ratio: number | undefined;
  /** Anything else worth keeping (response sizes, latencies, rejection counts). */
  details: Record<string, unknown>;
}

/** A figure for `details`: rounded, or null when it was not measured. */
export const round = (n: number | undefined): number | null => (n === undefined ? null : Math.round(n));

/** The q-quantile (nearest rank) of sorted numbers. */
export function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank] as number;
}

export function series(runs: number[]): Series {
  const sorted = [...runs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median =
    sorted.length % 2 === 1
      ? (sorted[mid] as number)
      : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  return { runs, min: sorted[0] ?? Number.NaN, median, max: sorted[sorted.length - 1] ?? Number.NaN };
}

const whole = (n: number) => Math.round(n).toLocaleString("en-US");
/** Whole numbers, but a fraction below 10 keeps two decimals (a 0.45 ms p99 printed as "0 ms"). */
const figure = (n: number) => (Math.abs(n) < 10 && !Number.isInteger(n) ? n.toFixed(2) : whole(n));
const spread = (s: Series | undefined) =>
  s === undefined
    ? "—"
    : s.runs.length === 1
      ? "(one run)"
      : `${figure(s.min)} / ${figure(s.median)} / ${figure(s.max)}`;

export function markdownTable(results: ScenarioResult[]): string {
  const lines = [
    "| scenario | node (median) | baseline (median) | ratio | node runs min / median / max | baseline runs min / median / max |",
    "|---|---:|---:|---:|---:|---:|",
  ];
  for (const r of results) {
    const baseline = r.baseline === undefined ? "—" : `${figure(r.baseline.median)} ${r.baselineLabel}`;
    lines.push(
      `| ${r.title} | ${figure(r.node.median)} ${r.unit} | ${baseline} | ` +
        `${r.ratio === undefined ? "—" : r.ratio.toFixed(2)} | ${spread(r.node)} | ${spread(r.baseline)} |`,
    );
  }
  return lines.join("\n");
}

const medianOf = (values: unknown): string => {
  const numbers = Array.isArray(values) ? values.filter((v): v is number => typeof v === "number") : [];
  return numbers.length === 0 ? "n/a" : `${Math.round(series(numbers).median)} %`;
};

/** Median CPU of the servers and of the load process in the measured phases, % of one core. */
export function cpuTable(results: ScenarioResult[]): string {
  const lines = [
    "| scenario | node process | baseline process | load process (vs node / vs baseline) | whole machine (vs node / vs baseline) |",
    "|---|---:|---:|---:|---:|",
  ];
  for (const r of results) {
    const d = r.details;
    if (d.nodeCpuPct === undefined) continue;
    lines.push(
      `| ${r.title} | ${medianOf(d.nodeCpuPct)} | ${medianOf(d.baselineCpuPct)} | ` +
        `${medianOf(d.loadCpuPctAgainstNode)} / ${medianOf(d.loadCpuPctAgainstBaseline)} | ` +
        `${medianOf(d.machineBusyPctAgainstNode)} / ${medianOf(d.machineBusyPctAgainstBaseline)} |`,
    );
  }
  return lines.join("\n");
}

export function writeJson(path: string, summary: unknown): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(summary, null, 2)}\n`);
  // bench/** is in biome's scope: leave the file as `biome format` writes it, so `biome check .` stays
  // clean after a run (JSON.stringify spreads short arrays over many lines; biome keeps them on one).
  const biome = join(ROOT, "node_modules/.bin/biome");
  if (existsSync(biome)) spawnSync(biome, ["format", "--write", path], { cwd: ROOT, stdio: "ignore" });
}
