/**
 * History by address at scale (issue 18: "history pages answer in under 5 ms at 1,000,000 indexed
 * transactions"). bench/historyFill.ts fills a store with `historyTxs` synthetic transfers (one
 * hot account sends 10 % of them: about 100,000 entries) and times the rebuild of the index and
 * the handler in-process; then bench/historyServer.ts serves that store with the node's RPC
 * server in its own process, and this process asks it, one request at a time over HTTP
 * (keep-alive), for the hot account's first page (25) and for pages deep in its history (a
 * cursor from a walk of its pages of 100, picked at random), `runs` × `historySamples` each.
 * The baseline, alternating with them: the same 25 transactions fetched by hash
 * (chain_getTransactionByHash) in one JSON-RPC batch, i.e. the page's content without the index.
 * Figures are round-trip latencies, µs: p50 per run, p99 in the details, with the round trip of
 * chain_getRecentBlockNumber (no work behind it) as the floor under both.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import type { BenchContext } from "./context.ts";
import type { HistoryFillResult, HistoryFillSpec } from "./historyFill.ts";
import { HOT } from "./historyStore.ts";
import { freePort, post, runJson, spawnTs, waitForRpc } from "./procs.ts";
import { quantile, type ScenarioResult, series } from "./report.ts";

const TXS_PER_BLOCK = 5_000;
/** The acceptance bound of a page, at the node. */
const TARGET_MS = 5;

interface Page {
  transactions: { hash: string }[];
  next_cursor: string | null;
}

const fmt = (n: number) => Math.round(n).toLocaleString("en-US");

export async function historyScenarios(ctx: BenchContext): Promise<ScenarioResult[]> {
  const { settings, log } = ctx;
  const dir = join(ctx.tmp, "history");
  mkdirSync(dir, { recursive: true });
  const spec: HistoryFillSpec = {
    dir,
    txs: settings.historyTxs,
    txsPerBlock: TXS_PER_BLOCK,
    samples: settings.historySamples,
  };
  log(`history: filling a store with ${fmt(spec.txs)} transactions`);
  const filled = await runJson<HistoryFillResult>("history fill", [
    "--import",
    "tsx",
    "bench/historyFill.ts",
    JSON.stringify(spec),
  ]);
  log(`history: ${JSON.stringify(filled)}`);

  const port = await freePort();
  const server = spawnTs("history server", ["bench/historyServer.ts", dir, String(port)]);
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForRpc(server, url, 120_000);
    let id = 0;
    const call = async <T>(method: string, params: unknown): Promise<{ result: T; us: number }> => {
      const body = JSON.stringify({ jsonrpc: "2.0", id: ++id, method, params });
      const t0 = performance.now();
      const reply = await post(url, body);
      const us = (performance.now() - t0) * 1000;
      const parsed = JSON.parse(reply.text) as { result?: T; error?: unknown };
      if (parsed.error !== undefined) throw new Error(`${method}: ${JSON.stringify(parsed.error)}`);
      return { result: parsed.result as T, us };
    };
    const batch = async (calls: { method: string; params: unknown }[]): Promise<number> => {
      const body = JSON.stringify(calls.map((c) => ({ jsonrpc: "2.0", id: ++id, ...c })));
      const t0 = performance.now();
      const reply = await post(url, body);
      const us = (performance.now() - t0) * 1000;
      if (reply.text.includes('"error"')) throw new Error(`batch: ${reply.text.slice(0, 200)}`);
      return us;
    };

    // Cursors into the hot sender's history: a walk of its pages of 100.
    const cursors: string[] = [];
    let cursor: string | null = null;
    do {
      const params: Record<string, unknown> = { address: HOT.sender, limit: 100 };
      if (cursor !== null) params.cursor = cursor;
      const page: Page = (await call<Page>("chain_getTransactionsByAddress", params)).result;
      cursor = page.next_cursor;
      if (cursor !== null) cursors.push(cursor);
    } while (cursor !== null);
    const first = (await call<Page>("chain_getTransactionsByAddress", { address: HOT.sender })).result;
    const lookups = first.transactions.map(({ hash }) => ({
      method: "chain_getTransactionByHash",
      params: { hash },
    }));
    log(
      `history: ${cursors.length} cursors; measuring ${settings.runs} × ${settings.historySamples} requests of each kind`,
    );

    const runs: { first: number[]; deep: number[]; lookups: number[]; floor: number[] }[] = [];
    for (let run = 0; run < settings.runs; run++) {
      const times = {
        first: [] as number[],
        deep: [] as number[],
        lookups: [] as number[],
        floor: [] as number[],
      };
      for (let i = 0; i < settings.historySamples; i++) {
        const deep = cursors[(i * 7919 + run * 104_729) % cursors.length] as string;
        times.first.push((await call("chain_getTransactionsByAddress", { address: HOT.sender })).us);
        times.deep.push(
          (await call("chain_getTransactionsByAddress", { address: HOT.sender, cursor: deep })).us,
        );
        times.lookups.push(await batch(lookups));
        // What a round trip costs with no work behind it: the floor under every figure.
        times.floor.push((await call("chain_getRecentBlockNumber", {})).us);
      }
      runs.push(times);
    }
    const q = (values: number[], p: number) =>
      quantile(
        [...values].sort((a, b) => a - b),
        p,
      );
    const p50s = (kind: keyof (typeof runs)[number]) => runs.map((r) => q(r[kind], 0.5));
    const p99s = (kind: keyof (typeof runs)[number]) => runs.map((r) => Math.round(q(r[kind], 0.99)));
    for (const kind of ["first", "deep"] as const) {
      const worst = Math.max(...p50s(kind));
      if (worst > TARGET_MS * 1000) {
        ctx.problems.push(`history: the ${kind} page's p50 was ${fmt(worst)} µs, over ${TARGET_MS} ms`);
      }
    }
    const label = `${fmt(filled.txs)} indexed transactions (${fmt(filled.entries)} entries), an account with ${fmt(filled.hotEntries.sender ?? 0)}`;
    const details = (kind: "first" | "deep") => ({
      p50Us: p50s(kind).map(Math.round),
      p99Us: p99s(kind),
      lookupsP99Us: p99s("lookups"),
      roundTripFloorP50Us: p50s("floor").map(Math.round),
      cursors: cursors.length,
      fill: filled,
    });
    const scenario = (kind: "first" | "deep", id: string, what: string): ScenarioResult => {
      const node = series(p50s(kind));
      const baseline = series(p50s("lookups"));
      return {
        id,
        title: `chain_getTransactionsByAddress, ${what}, ${label}, HTTP round trip p50 (target < ${TARGET_MS} ms)`,
        unit: "µs",
        nodeLabel: "page of 25",
        baselineLabel: "µs (the same 25 by hash, one batch)",
        node,
        baseline,
        ratio: node.median / baseline.median,
        details: details(kind),
      };
    };
    return [
      scenario("first", "history-first-page", "first page"),
      scenario("deep", "history-deep-page", "a page deep in the history (cursor)"),
    ];
  } finally {
    await server.stop();
  }
}
