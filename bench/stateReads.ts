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

const BALANCE = 1_000;
const BODIES = 20_000;

/** Resident set of a process from /proc, MiB. */
function rssMiB(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match === null ? undefined : Number(match[1]) / 1024;
  } catch {
    return undefined;
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
  const rssAfterStart = rssMiB(node.pid);
  log(
    `dev node with ${made.accounts} accounts served after ${startS.toFixed(1)} s (RSS ${rssAfterStart?.toFixed(0)} MiB)`,
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
  const rssAfterReads = rssMiB(node.pid);
  log(`RSS after the reads: ${rssAfterReads?.toFixed(0)} MiB`);
  const rss = rssAfterReads ?? Number.NaN;
  return [
    reads,
    {
      id: "rss-1m",
      title: `RSS of the dev node with ${accounts.toLocaleString("en-US")} accounts, after the reads`,
      unit: "MiB",
      nodeLabel: "chain-node dev",
      baselineLabel: "MiB (issue 5 limit)",
      node: series([rss]),
      baseline: series([1024]),
      ratio: rss / 1024,
      details: { rssAfterStartMiB: rssAfterStart, rssAfterReadsMiB: rssAfterReads },
    },
  ];
}
