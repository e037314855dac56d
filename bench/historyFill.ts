/**
 * The history bench's worker (bench/history.ts), in its own process: fills an LmdbStore with
 * synthetic blocks (bench/historyStore.ts), times the upgrade's rebuild of the whole index from
 * those blocks (the store made to look like schema 5), and times the RPC handler of
 * chain_getTransactionsByAddress in-process, without HTTP, against 25 lookups by hash of the
 * same transactions. Prints one JSON line (HistoryFillResult) at the end.
 *
 * Usage: node --import tsx bench/historyFill.ts '<HistoryFillSpec JSON>'
 */
import { performance } from "node:perf_hooks";
import { open } from "lmdb";
import { DATABASES, LmdbStore } from "../src/storage/index.ts";
import { seededRandom } from "../test/helpers/seededRandom.ts";
import { accountAddress, fillStore, HOT, readOnlyRoutes } from "./historyStore.ts";
import { quantile } from "./report.ts";

export interface HistoryFillSpec {
  dir: string;
  txs: number;
  txsPerBlock: number;
  /** Handler calls timed per kind. */
  samples: number;
}

interface Quantiles {
  p50: number;
  p99: number;
}

export interface HistoryFillResult {
  blocks: number;
  txs: number;
  entries: number;
  fillS: number;
  dataMiB: number;
  /** The history index's share of it. */
  indexMiB: number;
  /** The schema-6 upgrade's rebuild of every entry from the stored blocks. */
  rebuildS: number;
  /** Entries of each hot account. */
  hotEntries: Record<string, number>;
  /** In-process handler + JSON.stringify, µs. */
  inProcessUs: {
    firstPage: Quantiles;
    deepPage: Quantiles;
    coldAccount: Quantiles;
    page100: Quantiles;
    lookups25: Quantiles;
  };
}

const ARCHIVE = { retainStates: 0, retainBlocks: 0 };
const log = (message: string) => console.error(`[history fill] ${message}`);

/** The index's entries, and its B-tree's size in MiB (branch, leaf and overflow pages). */
function indexSize(dir: string): { entries: number; mib: number } {
  const raw = open({ path: dir, compression: false, readOnly: true });
  const stats = raw
    .openDB({ name: DATABASES.txByAddress, keyEncoding: "binary", encoding: "binary" })
    .getStats() as {
    entryCount: number;
    pageSize: number;
    treeBranchPageCount: number;
    treeLeafPageCount: number;
    overflowPages: number;
  };
  void raw.close();
  const pages = stats.treeBranchPageCount + stats.treeLeafPageCount + stats.overflowPages;
  return { entries: stats.entryCount, mib: Math.round((pages * stats.pageSize) / 2 ** 20) };
}

const spec = JSON.parse(process.argv[2] ?? "") as HistoryFillSpec;

let started = performance.now();
let store = new LmdbStore(spec.dir, ARCHIVE);
const blocks = await fillStore(store, spec.txs, spec.txsPerBlock, (number) => {
  if (number % 20 === 0) log(`block ${number}`);
});
const fillS = (performance.now() - started) / 1000;
const { pages, pageSize } = store.usedPages();
await store.close();
const { entries, mib: indexMiB } = indexSize(spec.dir);
log(`${spec.txs} transactions in ${blocks} blocks, ${entries} entries, ${fillS.toFixed(1)} s`);

// As a schema-5 node left it: no index. Opening it rebuilds the index from the blocks. Emptied
// a slice at a time: dropping two million entries in one transaction tripped an assertion in
// lmdb-js's page allocator (mdb_freelist_save, lmdb 3.5.6, 2026-11-26).
const raw = open({ path: spec.dir, compression: false });
const index = raw.openDB<Uint8Array, Uint8Array>({
  name: DATABASES.txByAddress,
  keyEncoding: "binary",
  encoding: "binary",
});
for (;;) {
  const keys = [...index.getKeys({ limit: 50_000 })];
  if (keys.length === 0) break;
  raw.transactionSync(() => {
    for (const key of keys) index.remove(key);
  });
}
await raw.openDB<number, string>({ name: DATABASES.meta }).put("schema_version", 5);
await raw.close();
started = performance.now();
store = new LmdbStore(spec.dir, ARCHIVE);
const rebuildS = (performance.now() - started) / 1000;
log(`rebuilt in ${rebuildS.toFixed(1)} s`);

const routes = readOnlyRoutes(store);
const handler = (name: string) => {
  const route = routes.get(name);
  if (route === undefined) throw new Error(`no route ${name}`);
  return route.definition.handler;
};
const history = handler("chain_getTransactionsByAddress");
const byHash = handler("chain_getTransactionByHash");
interface Page {
  transactions: { hash: string }[];
  next_cursor: string | null;
}

const hotEntries: Record<string, number> = {};
const cursors: string[] = [];
for (const [name, address] of Object.entries(HOT)) {
  let count = 0;
  let cursor: string | null = null;
  do {
    const page = history({ address, limit: 100, ...(cursor === null ? {} : { cursor }) }) as Page;
    count += page.transactions.length;
    cursor = page.next_cursor;
    if (name === "sender" && cursor !== null) cursors.push(cursor);
  } while (cursor !== null);
  hotEntries[name] = count;
}

const random = seededRandom(1818);
const timeUs = (run: () => unknown): number => {
  const t0 = performance.now();
  JSON.stringify(run());
  return (performance.now() - t0) * 1000;
};
const first = history({ address: HOT.sender }) as Page;
const hashes = first.transactions.map((tx) => tx.hash);
const times = { firstPage: [], deepPage: [], coldAccount: [], page100: [], lookups25: [] } as Record<
  keyof HistoryFillResult["inProcessUs"],
  number[]
>;
for (let i = 0; i < spec.samples; i++) {
  const cursor = cursors[Math.floor(random() * cursors.length)];
  const cold = accountAddress(3 + Math.floor(random() * 99_000));
  times.firstPage.push(timeUs(() => history({ address: HOT.sender })));
  times.deepPage.push(timeUs(() => history({ address: HOT.sender, cursor })));
  times.coldAccount.push(timeUs(() => history({ address: cold })));
  times.page100.push(timeUs(() => history({ address: HOT.sender, limit: 100, cursor })));
  times.lookups25.push(timeUs(() => hashes.map((hash) => byHash({ hash }))));
}
await store.close();
if (indexSize(spec.dir).entries !== entries)
  throw new Error("the rebuilt index differs from the one written");

const quantiles = (values: number[]): Quantiles => {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99) };
};
const result: HistoryFillResult = {
  blocks,
  txs: spec.txs,
  entries,
  fillS,
  dataMiB: Math.round((pages * pageSize) / 2 ** 20),
  indexMiB,
  rebuildS,
  hotEntries,
  inProcessUs: {
    firstPage: quantiles(times.firstPage),
    deepPage: quantiles(times.deepPage),
    coldAccount: quantiles(times.coldAccount),
    page100: quantiles(times.page100),
    lookups25: quantiles(times.lookups25),
  },
};
console.log(JSON.stringify(result));
