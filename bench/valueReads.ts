/**
 * Reads of the data tree on the state-reads node (a genesis of 1,000,000 accounts, issue 18):
 *
 *  - `chain_getValue` of a leaf (`/account/<random account>/balance`) against `chain_getBalance` of
 *    the same accounts, on the same node, runs alternating: both answer the same body, so the ratio
 *    is what reading by path costs over the typed method (target ≥ 0.8).
 *  - `chain_getProof` of random accounts' balance leaves: the time the node's StateReads.prove
 *    takes (in this process, on the node's store, read-only beside it), and the round trip over
 *    HTTP, one request at a time (target: under 1 ms at the node).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { StateReads } from "../src/chain/index.ts";
import { LmdbStore } from "../src/storage/index.ts";
import type { BenchContext } from "./context.ts";
import { loadRun, type Measured, responseProblem } from "./measure.ts";
import { post } from "./procs.ts";
import type { LoadTarget } from "./reads.ts";
import { quantile, type ScenarioResult, series } from "./report.ts";

const PROOF_SAMPLES = 5_000;

/** The account of each chain_getBalance body, as a chain_getValue body for its balance leaf. */
function valueBodies(balanceBodies: readonly string[]): string[] {
  return balanceBodies.map((body) => {
    const { id, params } = JSON.parse(body) as { id: number; params: { address: string } };
    return JSON.stringify({
      jsonrpc: "2.0",
      id,
      method: "chain_getValue",
      params: { ref: `/account/${params.address}/balance` },
    });
  });
}

export async function valueReadScenarios(
  ctx: BenchContext,
  node: LoadTarget & { home: string },
  balanceBodiesFile: string,
  expectBody: string,
): Promise<ScenarioResult[]> {
  const { settings, log } = ctx;
  const balanceBodies = JSON.parse(readFileSync(balanceBodiesFile, "utf8")) as string[];
  const bodies = valueBodies(balanceBodies);
  const valueBodiesFile = join(ctx.tmp, "value-bodies.json");
  writeFileSync(valueBodiesFile, JSON.stringify(bodies));
  const first = await post(node.url, bodies[0] as string);
  if (first.text !== expectBody) throw new Error(`chain_getValue answered ${first.text}, not ${expectBody}`);

  const measure = async (what: string, file: string): Promise<Measured> => {
    const result = await ctx.policy.run<Measured>(
      what,
      (r) => r.rps,
      () =>
        loadRun(
          {
            mode: "fixed",
            body: JSON.parse(readFileSync(file, "utf8"))[0] as string,
            bodiesFile: file,
            expectBody,
            url: node.url,
            connections: settings.connections,
            durationS: settings.durationS,
            warmupS: settings.warmupS,
          },
          node.pid,
        ),
    );
    const problem = responseProblem(result, what);
    if (problem !== undefined) ctx.problems.push(problem);
    return result;
  };
  const valueRuns: Measured[] = [];
  const balanceRuns: Measured[] = [];
  for (let run = 1; run <= settings.runs; run++) {
    valueRuns.push(await measure(`value-vs-balance run ${run} (chain_getValue)`, valueBodiesFile));
    balanceRuns.push(await measure(`value-vs-balance run ${run} (chain_getBalance)`, balanceBodiesFile));
    log(
      `value-vs-balance run ${run}: chain_getValue ${Math.round(valueRuns.at(-1)?.rps ?? 0)} req/s, ` +
        `chain_getBalance ${Math.round(balanceRuns.at(-1)?.rps ?? 0)} req/s`,
    );
  }
  const values = series(valueRuns.map((r) => r.rps));
  const balances = series(balanceRuns.map((r) => r.rps));

  const proof = await proofTimings(node, balanceBodies);
  log(
    `chain_getProof: at the node p50 ${proof.nodeP50Ms.toFixed(3)} ms, p99 ${proof.nodeP99Ms.toFixed(3)} ms; ` +
      `over HTTP p50 ${proof.httpP50Ms.toFixed(3)} ms (${proof.nodes} nodes per proof on average)`,
  );
  return [
    {
      id: "value-vs-balance-1m",
      title:
        "`chain_getValue` of a balance leaf vs `chain_getBalance`, random accounts of 1,000,000, same node",
      unit: "req/s",
      nodeLabel: "chain_getValue",
      baselineLabel: "req/s (chain_getBalance)",
      node: values,
      baseline: balances,
      ratio: values.median / balances.median,
      details: {
        valueLatencyP99Ms: valueRuns.map((r) => r.latencyP99Ms),
        balanceLatencyP99Ms: balanceRuns.map((r) => r.latencyP99Ms),
      },
    },
    {
      id: "proof-1m",
      title:
        "`chain_getProof` of a random balance leaf at 1,000,000 accounts: p99 at the node vs the 1 ms target",
      unit: "ms",
      nodeLabel: "StateReads.prove p99",
      baselineLabel: "ms (target)",
      node: series([proof.nodeP99Ms]),
      baseline: series([1]),
      ratio: proof.nodeP99Ms / 1,
      details: proof,
    },
  ];
}

/** Proof times: in this process on the node's store (the node's work), and HTTP round trips. */
async function proofTimings(node: LoadTarget & { home: string }, balanceBodies: readonly string[]) {
  const refs = balanceBodies
    .slice(0, PROOF_SAMPLES)
    .map(
      (body) => `/account/${(JSON.parse(body) as { params: { address: string } }).params.address}/balance`,
    );
  // Opened beside the running node: LMDB serves readers in other processes; nothing is written.
  const store = new LmdbStore(join(node.home, "data"));
  const reads = new StateReads(store, { maxValueLeaves: 10_000, maxProofLeaves: 256 });
  const times: number[] = [];
  let nodes = 0;
  try {
    for (const ref of refs.slice(0, 200)) reads.prove(ref); // warm-up: compile, page in the top of the trie
    for (const ref of refs) {
      const started = performance.now();
      const proven = reads.prove(ref);
      times.push(performance.now() - started);
      nodes += proven.proof.length;
    }
  } finally {
    await store.close();
  }
  const http: number[] = [];
  for (const ref of refs.slice(0, 1_000)) {
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "chain_getProof", params: { ref } });
    const started = performance.now();
    const reply = await post(node.url, body);
    http.push(performance.now() - started);
    if (reply.status !== 200 || !reply.text.includes('"proof"'))
      throw new Error(`chain_getProof: ${reply.text}`);
  }
  times.sort((a, b) => a - b);
  http.sort((a, b) => a - b);
  return {
    samples: times.length,
    nodes: Math.round((nodes / times.length) * 10) / 10,
    nodeP50Ms: quantile(times, 0.5),
    nodeP99Ms: quantile(times, 0.99),
    httpP50Ms: quantile(http, 0.5),
    httpP99Ms: quantile(http, 0.99),
  };
}
