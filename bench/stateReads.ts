/**
 * State reads at scale: `chain_getBalance` of random accounts on a dev node whose state holds
 * `stateAccounts` funded accounts (1,000,000 by default, issue 5), against the bare `node:http`
 * baseline answering a body of the same length; and the node's RSS with that state.
 *
 * The accounts come from genesis (bench/bigGenesis.ts writes it in its own process), so the node
 * builds the whole state and its root when it first opens the home, as any node with that genesis
 * would. Each request asks for a different random account of the million (20,000 request bodies
 * in turn), so the reads are spread over the whole state, not one cached leaf.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import type { BenchContext } from "./context.ts";
import { post, runJson, startDevNode } from "./procs.ts";
import { bodyOfLength, compareReads, startBaselineServer } from "./reads.ts";
import { type ScenarioResult, series } from "./report.ts";
import { valueReadScenarios } from "./valueReads.ts";

const BALANCE = 1_000;
const BODIES = 20_000;

/** Resident set of a process from /proc, MiB: all of it, and its anonymous and file-backed parts. */
function rss(pid: number | undefined): {
  total?: number | undefined;
  anon?: number | undefined;
  file?: number | undefined;
} {
  if (pid === undefined) return {};
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kib = (field: string) => {
      const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(status);
      return match === null ? undefined : Number(match[1]) / 1024;
    };
    return { total: kib("VmRSS"), anon: kib("RssAnon"), file: kib("RssFile") };
  } catch {
    return {};
  }
}

export async function stateReadScenarios(ctx: BenchContext): Promise<ScenarioResult[]> {
  const { settings, log } = ctx;
  const accounts = settings.stateAccounts;
  const home = join(ctx.tmp, "state-reads");
  mkdirSync(home, { recursive: true });
  const bodiesFile = join(ctx.tmp, "balance-bodies.json");
  log(`writing a genesis with ${accounts} funded accounts`);
  const made = await runJson<{ accounts: number; genesisBytes: number; ms: number }>("big genesis", [
    "bench/bigGenesis.ts",
    home,
    String(accounts),
    String(BALANCE),
    bodiesFile,
    String(BODIES),
  ]);
  const startedAt = performance.now();
  const node = await startDevNode("chain-node (state reads)", home, 3_600_000, 600_000);
  const startS = (performance.now() - startedAt) / 1000;
  const rssAfterStart = rss(node.pid);
  log(
    `dev node with ${made.accounts} accounts served after ${startS.toFixed(1)} s ` +
      `(RSS ${rssAfterStart.total?.toFixed(0)} MiB, anonymous ${rssAfterStart.anon?.toFixed(0)} MiB)`,
  );

  const request = (JSON.parse(readFileSync(bodiesFile, "utf8")) as string[])[0] as string;
  const reply = await post(node.url, request);
  const expected = `{"jsonrpc":"2.0","id":1,"result":${BALANCE}}`;
  if (reply.status !== 200 || reply.text !== expected) {
    throw new Error(`chain_getBalance answered ${reply.status} ${reply.text.slice(0, 200)}, not ${expected}`);
  }
  const baselineBody = bodyOfLength(Buffer.byteLength(reply.text));
  const baseline = await startBaselineServer(ctx, "baseline-balance", { chain_getBalance: baselineBody });
  const baseReply = await post(baseline.url, request);
  if (baseReply.text !== baselineBody) throw new Error("the baseline does not answer its fixed body");
  const reads = await compareReads(
    ctx,
    {
      id: "balance-1m",
      title: `\`chain_getBalance\` of random accounts, ${accounts.toLocaleString("en-US")} accounts in state`,
      method: "chain_getBalance",
      request,
      bodiesFile,
      nodeBody: reply.text,
      nodeHeaderBytes: reply.headerBytes,
      baselineBody,
      baselineHeaderBytes: baseReply.headerBytes,
    },
    { url: node.url, pid: node.pid },
    baseline,
    { accounts: made.accounts, genesisBytes: made.genesisBytes, nodeStartS: startS },
  );
  const rssAfterReads = rss(node.pid);
  log(
    `RSS after the reads: ${rssAfterReads.total?.toFixed(0)} MiB ` +
      `(anonymous ${rssAfterReads.anon?.toFixed(0)}, file-backed ${rssAfterReads.file?.toFixed(0)}: LMDB's map)`,
  );
  const total = rssAfterReads.total ?? Number.NaN;
  const valueReads = await valueReadScenarios(
    ctx,
    { url: node.url, pid: node.pid, home },
    bodiesFile,
    reply.text,
  );
  return [
    reads,
    ...valueReads,
    {
      id: "rss-1m",
      title: `RSS of the dev node with ${accounts.toLocaleString("en-US")} accounts, after the reads`,
      unit: "MiB",
      nodeLabel: "chain-node dev",
      baselineLabel: "MiB (issue 5 limit)",
      node: series([total]),
      baseline: series([1024]),
      ratio: total / 1024,
      details: { rssAfterStartMiB: rssAfterStart, rssAfterReadsMiB: rssAfterReads },
    },
    {
      id: "rss-1m-anon",
      title: `of that RSS, anonymous memory (V8 heap + malloc; the rest is LMDB's mapped file)`,
      unit: "MiB",
      nodeLabel: "chain-node dev",
      baselineLabel: "MiB (issue 5 limit)",
      node: series([rssAfterReads.anon ?? Number.NaN]),
      baseline: series([1024]),
      ratio: (rssAfterReads.anon ?? Number.NaN) / 1024,
      details: {},
    },
  ];
}
