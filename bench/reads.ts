/**
 * Read scenarios: a dev node holding a 100-transaction block against a bare `node:http` JSON-RPC
 * server (bench/baselineServer.ts) that answers bodies of exactly the node's byte length. Node and
 * baseline runs alternate; every response must equal the expected body byte for byte.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { type BenchContext, cpuDetails } from "./context.ts";
import { FILL_TXS, fillBlock } from "./fill.ts";
import { loadRun, type Measured, responseProblem } from "./measure.ts";
import { freePort, post, spawnTs, startDevNode, waitForRpc } from "./procs.ts";
import { type ScenarioResult, series } from "./report.ts";

export interface ReadScenario {
  id: string;
  title: string;
  method: string;
  request: string;
  nodeBody: string;
  nodeHeaderBytes: number;
  baselineBody: string;
  baselineHeaderBytes: number;
}

/** A JSON-RPC answer of exactly `length` bytes with a meaningless result. */
export function bodyOfLength(length: number): string {
  const head = '{"jsonrpc":"2.0","id":1,"result":';
  const room = length - head.length - 1;
  if (room < 1) throw new Error(`cannot make a JSON-RPC answer of ${length} bytes`);
  // A number while it is short (fits a safe integer), else a string of the remaining length.
  const result = room <= 15 ? "7".repeat(room) : `"${"x".repeat(room - 2)}"`;
  return `${head}${result}}`;
}

function requests(blockNumber: number) {
  return [
    {
      id: "recent-block-number",
      title: "`chain_getRecentBlockNumber`",
      method: "chain_getRecentBlockNumber",
      request: '{"jsonrpc":"2.0","id":1,"method":"chain_getRecentBlockNumber"}',
    },
    {
      id: "block-by-number-100tx",
      title: `\`chain_getBlockByNumber\` (${FILL_TXS} tx hashes)`,
      method: "chain_getBlockByNumber",
      request: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "chain_getBlockByNumber",
        params: { number: blockNumber, getFullTransactions: false },
      }),
    },
  ];
}

/** The node's answer to each request, checked once to be a proper result before any load. */
async function nodeAnswers(url: string, blockNumber: number) {
  const answers = [];
  for (const r of requests(blockNumber)) {
    const reply = await post(url, r.request);
    const json = JSON.parse(reply.text) as { result?: unknown; error?: unknown };
    const isResult = json.error === undefined && json.result !== undefined && json.result !== null;
    if (reply.status !== 200 || !isResult) {
      throw new Error(`${r.method} is not a proper result: ${reply.status} ${reply.text.slice(0, 300)}`);
    }
    const txs = (json.result as { transactions?: unknown[] }).transactions;
    if (r.method === "chain_getBlockByNumber" && txs?.length !== FILL_TXS) {
      throw new Error(`block ${blockNumber} answered ${txs?.length} transactions`);
    }
    answers.push({ ...r, nodeBody: reply.text, nodeHeaderBytes: reply.headerBytes });
  }
  return answers;
}

export async function readScenarios(ctx: BenchContext): Promise<ScenarioResult[]> {
  const { settings, log } = ctx;
  const node = await startDevNode("chain-node (reads)", join(ctx.tmp, "reads"), settings.readNodeBlockTimeMs);
  log(`dev node for reads at ${node.url}; filling a ${FILL_TXS}-transaction block`);
  const blockNumber = await fillBlock(node.url);
  log(`block ${blockNumber} holds ${FILL_TXS} transactions`);
  const answers = await nodeAnswers(node.url, blockNumber);

  const baselineBodies = answers.map((a) => bodyOfLength(Buffer.byteLength(a.nodeBody)));
  const baseline = await startBaselineServer(
    ctx,
    "baseline",
    Object.fromEntries(answers.map((a, i) => [a.method, baselineBodies[i] as string])),
  );
  const baseUrl = baseline.url;
  const scenarios: ReadScenario[] = [];
  for (const [i, a] of answers.entries()) {
    const reply = await post(baseUrl, a.request);
    if (reply.text !== baselineBodies[i] || Buffer.byteLength(reply.text) !== Buffer.byteLength(a.nodeBody)) {
      throw new Error(`baseline answer for ${a.method} is not the same length as the node's`);
    }
    scenarios.push({ ...a, baselineBody: reply.text, baselineHeaderBytes: reply.headerBytes });
  }

  const results: ScenarioResult[] = [];
  for (const s of scenarios) {
    results.push(await compareReads(ctx, s, { url: node.url, pid: node.pid }, baseline));
  }
  return results;
}

/** A server under load: where it answers and its process (for CPU sampling). */
export interface LoadTarget {
  url: string;
  pid: number | undefined;
}

/**
 * One read scenario: node and baseline runs alternate (settings.runs each), every response must be
 * byte-identical to the expected body; returns the medians, their ratio and the CPU details.
 */
export async function compareReads(
  ctx: BenchContext,
  s: ReadScenario & { bodiesFile?: string },
  node: LoadTarget,
  baseline: LoadTarget,
  extraDetails: Record<string, unknown> = {},
): Promise<ScenarioResult> {
  const { settings, log } = ctx;
  const fixed = {
    mode: "fixed" as const,
    body: s.request,
    ...(s.bodiesFile === undefined ? {} : { bodiesFile: s.bodiesFile }),
    connections: settings.connections,
    durationS: settings.durationS,
    warmupS: settings.warmupS,
  };
  const measure = async (what: string, target: LoadTarget, expectBody: string) => {
    const result = await ctx.policy.run<Measured>(
      what,
      (r) => r.rps,
      () => loadRun({ ...fixed, url: target.url, expectBody }, target.pid),
    );
    const problem = responseProblem(result, what);
    if (problem !== undefined) ctx.problems.push(problem);
    return result;
  };
  const nodeRuns: Measured[] = [];
  const baseRuns: Measured[] = [];
  for (let run = 1; run <= settings.runs; run++) {
    const n = await measure(`${s.id} run ${run} (node)`, node, s.nodeBody);
    const b = await measure(`${s.id} run ${run} (baseline)`, baseline, s.baselineBody);
    nodeRuns.push(n);
    baseRuns.push(b);
    log(`${s.id} run ${run}: node ${Math.round(n.rps)} req/s, baseline ${Math.round(b.rps)} req/s`);
  }
  const nodeSeries = series(nodeRuns.map((r) => r.rps));
  const baseSeries = series(baseRuns.map((r) => r.rps));
  return {
    id: s.id,
    title: `${s.title}, ${Buffer.byteLength(s.nodeBody).toLocaleString("en-US")} B answer`,
    unit: "req/s",
    nodeLabel: "chain-node dev",
    baselineLabel: "req/s (bare node:http)",
    node: nodeSeries,
    baseline: baseSeries,
    ratio: nodeSeries.median / baseSeries.median,
    details: {
      ...extraDetails,
      responseBodyBytes: Buffer.byteLength(s.nodeBody),
      nodeResponseHeaderBytes: s.nodeHeaderBytes,
      baselineResponseHeaderBytes: s.baselineHeaderBytes,
      nodeLatencyP50Ms: nodeRuns.map((r) => r.latencyP50Ms),
      nodeLatencyP99Ms: nodeRuns.map((r) => r.latencyP99Ms),
      baselineLatencyP50Ms: baseRuns.map((r) => r.latencyP50Ms),
      baselineLatencyP99Ms: baseRuns.map((r) => r.latencyP99Ms),
      ...cpuDetails(nodeRuns, baseRuns),
    },
  };
}

/** Starts bench/baselineServer.ts answering `responses` (method → body); resolves once it serves. */
export async function startBaselineServer(
  ctx: BenchContext,
  name: string,
  responses: Record<string, string>,
): Promise<LoadTarget> {
  const responsesFile = join(ctx.tmp, `${name}-responses.json`);
  writeFileSync(responsesFile, JSON.stringify(responses));
  const port = await freePort();
  const server = spawnTs(name, ["bench/baselineServer.ts", String(port), responsesFile]);
  const url = `http://127.0.0.1:${port}`;
  await waitForRpc(server, url);
  return { url, pid: server.child.pid };
}
