/**
 * One block-execution run in its own process (so its RSS and GC are its own), driven by
 * bench/execution.ts. Issue 5's scenario: signatures pre-checked (Tx objects built directly, as the
 * chain unit tests do), a real LmdbStore in a temporary directory, the state filled with N funded
 * accounts through genesis (Chain.open: the same leaves, root and single LMDB write as any block 0)
 * in one process, then, in a second one that opens that store as a restarted node would, blocks of
 * ordered transfers (random funded senders; half of the recipients new, half
 * existing accounts), each timed through Chain.execute + Chain.commit: execution, state root and
 * the durable block write.
 *
 * Usage: node --expose-gc --import tsx bench/executionWorker.ts '<ExecutionSpec as JSON>'
 * Prints progress on stderr and one JSON line (ExecutionRun) on stdout.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { dirname } from "node:path";
import { performance } from "node:perf_hooks";
import { balanceOf, Chain, type ChainStore, type Commit, type Genesis, type Tx } from "../src/chain/index.ts";
import { keccakBackend, keccakReady, toChecksumAddress } from "../src/crypto/index.ts";
import { TrieThread } from "../src/node/trieThread.ts";
import { LmdbStore, type RetentionOptions } from "../src/storage/index.ts";
import { MemoryStore } from "../test/helpers/memoryStore.ts";
import { seededUint32 } from "../test/helpers/seededRandom.ts";
import { machineCpu } from "./procs.ts";

export interface ExecutionSpec {
  /**
   * fill: write genesis to a new store and stop. run: open that store (as a restarted node does)
   * and measure. both: the two in one process (the memory store, which does not outlive it).
   */
  phase: "fill" | "run" | "both";
  accounts: number;
  blocks: number;
  txsPerBlock: number;
  /** Balance reads timed after the blocks (random funded accounts). */
  reads: number;
  store: "lmdb" | "memory";
  /** Directory for the LMDB environment (created by LmdbStore). */
  dir: string;
  /** When set, a CPU profile of the measured blocks is written to this file. */
  cpuProfile?: string;
  /**
   * Sync's commits: blocks are timed in groups of this many, and with `together` each group is
   * committed in one Chain.commitTogether (one LMDB write), as sync commits a fetched range.
   */
  group?: { blocks: number; together: boolean };
  /**
   * transfers (the default): ordered transfers, half of them to new accounts, so the state grows.
   * rewrites: each transaction sets one of `hotKeys` fixed keys (/users/<sender>/slot<k>, 4 per
   * sender), round-robin, so after the first hotKeys/txsPerBlock blocks every block rewrites
   * existing keys and the state stops growing: what is left to grow is history.
   */
  workload?: "transfers" | "rewrites";
  hotKeys?: number;
  /** The store's retention ([storage]); by default the node's. */
  retention?: RetentionOptions;
  /**
   * A dev node with `storage.write_thread`: blocks written by the store's thread, and each block
   * executed while the last is written (Chain.commitAside, decision 021). A block's time is then
   * from the end of the last block's hand-over to the end of its own.
   */
  aside?: boolean;
  /** The state's trie on a thread of its own (node/trieThread.ts, decision 024); LMDB only. */
  trieThread?: boolean;
}

export interface BlockTiming {
  txs: number;
  /** Chain.execute: the transactions and the state root. */
  executeMs: number;
  /** Chain.commit: the one LMDB write transaction. */
  commitMs: number;
  /** CPU this process used for the block (all threads), ms. */
  cpuMs: number;
  txPerS: number;
  /** The data file's extent after the block's commit (LmdbStore.usedPages), pages. */
  usedPages?: number | undefined;
}

export interface ExecutionRun {
  spec: ExecutionSpec;
  /** Writing genesis (the fill phase). */
  fillS: number;
  /** Chain.open on the filled store (the run phase; it rebuilds the genesis root to check block 0). */
  openS: number;
  /** After the fill (fill, both) or after opening the filled store (run), once collected. */
  rssAfterOpenMiB: number;
  heapAfterOpenMiB: number;
  blocks: BlockTiming[];
  rssAfterBlocksMiB: number;
  /** V8 heap in use after the blocks and a full collection. */
  heapAfterBlocksMiB: number;
  /**
   * Of the RSS after the blocks: anonymous memory (V8 heap, malloc: what the process itself holds)
   * and the rest, chiefly LMDB's memory-mapped pages (file cache the kernel can reclaim). Linux.
   */
  anonymousAfterBlocksMiB: number | undefined;
  maxRssMiB: number;
  /** Mean time of one balanceOf on committed state, µs. */
  readUs: number;
  /** Size of the LMDB directory after the fill and after the blocks (0 for the memory store). */
  dbBytesAfterFill: number;
  dbBytesAfterBlocks: number;
  failedTxs: number;
  keccak: string;
  /** CPU other processes used while the blocks ran, % of one core (this machine has 2 cores). */
  otherCpuPct: number | undefined;
}

const spec = JSON.parse(process.argv[2] ?? "{}") as ExecutionSpec;
await keccakReady;
const log = (message: string) => console.error(`[execution ${spec.accounts}] ${message}`);
const gc = (globalThis as { gc?: () => void }).gc;
const mib = (bytes: number) => Math.round(bytes / 2 ** 20);

const random = seededUint32(5);
const hex8 = () => random().toString(16).padStart(8, "0");
const randomAddress = () => toChecksumAddress(`0x${hex8()}${hex8()}${hex8()}${hex8()}${hex8()}`);
const pick = <T>(list: readonly T[]): T => list[random() % list.length] as T;

/** Anonymous (not file-backed) resident bytes of this process, from /proc (Linux only). */
function anonymousBytes(): number | undefined {
  try {
    const line = readFileSync("/proc/self/smaps_rollup", "utf8").match(/^Anonymous:\s+(\d+) kB/m);
    return line === null ? undefined : Number(line[1]) * 1024;
  } catch {
    return undefined;
  }
}

const dirBytes = (dir: string): number =>
  spec.store === "memory" ? 0 : Number(execFileSync("du", ["-sb", dir]).toString().split("\t")[0]);

const VALIDATOR = "0x00000000000000000000000000000000000000Aa";
const GENESIS_TIME = 1_700_000_000_000;

const funded: string[] = [];
for (let i = 0; i < spec.accounts; i++) funded.push(randomAddress());
const genesis: Genesis = {
  chain_id: 100,
  network_id: 1,
  genesis_time: GENESIS_TIME,
  accounts: funded.map((address) => ({ address, balance: 1_000_000_000_000 })),
  validators: [{ address: toChecksumAddress(VALIDATOR), stake: 1_000_000 }],
  consensus: {
    block_time_ms: 1000,
    min_validator_stake: 1_000_000,
    max_validators: 100,
    max_block_txs: spec.txsPerBlock,
    max_block_bytes: 64 * 1024 * 1024,
    max_tx_bytes: 100 * 1024,
  },
};

const aside = spec.aside === true;
const store: ChainStore & { close?: () => Promise<void> } =
  spec.store === "lmdb" ? new LmdbStore(spec.dir, spec.retention, { writeThread: aside }) : new MemoryStore();
const trieThread =
  spec.trieThread === true && store instanceof LmdbStore ? await TrieThread.start(spec.dir) : undefined;
const chain = new Chain(store, genesis, {
  writesAside: aside,
  ...(trieThread === undefined ? {} : { openTrie: (rootHex) => trieThread.open(store, rootHex) }),
});
const openStart = performance.now();
await chain.open(); // fill: writes block 0; run: checks it against genesis
const openedS = (performance.now() - openStart) / 1000;
const fillS = spec.phase === "run" ? 0 : openedS;
const openS = spec.phase === "run" ? openedS : 0;
genesis.accounts = []; // the chain keeps the genesis; drop the million entries before measuring memory
gc?.();
const rssAfterOpen = process.memoryUsage();
const dbBytesAfterFill = dirBytes(spec.dir);
log(
  `${spec.phase === "run" ? "opened" : "filled"} in ${openedS.toFixed(1)} s, RSS ${mib(rssAfterOpen.rss)} MiB`,
);
const result = (fields: Partial<ExecutionRun>): ExecutionRun => ({
  spec,
  fillS,
  openS,
  rssAfterOpenMiB: mib(rssAfterOpen.rss),
  heapAfterOpenMiB: mib(rssAfterOpen.heapUsed),
  blocks: [],
  rssAfterBlocksMiB: 0,
  heapAfterBlocksMiB: 0,
  anonymousAfterBlocksMiB: undefined,
  maxRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
  readUs: 0,
  dbBytesAfterFill,
  dbBytesAfterBlocks: dbBytesAfterFill,
  failedTxs: 0,
  keccak: keccakBackend(),
  otherCpuPct: undefined,
  ...fields,
});
if (spec.phase === "fill") {
  await store.close?.();
  console.log(JSON.stringify(result({})));
  process.exit(0);
}

// Every block's transactions are made before any timing.
const nonces = new Map<string, number>();
let txCounter = 0;
/** The next ordered transaction of `from` (its nonce counted here) setting `ref` to `value`. */
function orderedTx(from: string, height: number, ref: string, value: Tx["operation"]["value"]): Tx {
  const nonce = nonces.get(from) ?? 0;
  nonces.set(from, nonce + 1);
  txCounter += 1;
  return {
    hash: `0x${txCounter.toString(16).padStart(64, "0")}`,
    address: from,
    signature: "0x",
    timestamp: GENESIS_TIME + height * 1000,
    nonce,
    operation: { type: "SET_VALUE", ref, value },
  };
}
function makeBlock(height: number): Tx[] {
  const txs: Tx[] = [];
  for (let i = 0; i < spec.txsPerBlock; i++) {
    const from = pick(funded);
    const to = i % 2 === 0 ? randomAddress() : pick(funded);
    txs.push(orderedTx(from, height, `/transfer/${from}/${to}/b${height}t${i}/value`, 1 + (random() % 1000)));
  }
  return txs;
}
/** Slot writes under the senders' own /users data: key k is slot k % 4 of funded account k / 4. */
function makeRewriteBlock(height: number): Tx[] {
  const hotKeys = spec.hotKeys ?? 50_000;
  const txs: Tx[] = [];
  for (let i = 0; i < spec.txsPerBlock; i++) {
    const key = ((height - 1) * spec.txsPerBlock + i) % hotKeys;
    const from = funded[Math.floor(key / 4)] as string;
    txs.push(orderedTx(from, height, `/users/${from}/slot${key % 4}`, { height, n: random() }));
  }
  return txs;
}
const blockTxs = Array.from({ length: spec.blocks }, (_, i) =>
  spec.workload === "rewrites" ? makeRewriteBlock(i + 1) : makeBlock(i + 1),
);
const usedPages = (): number | undefined =>
  store instanceof LmdbStore ? store.usedPages().pages : undefined;

// Profiles only the measured blocks (not the fill), through the inspector of this process.
const profiler = spec.cpuProfile === undefined ? undefined : new Session();
if (profiler !== undefined) {
  profiler.connect();
  await profiler.post("Profiler.enable");
  await profiler.post("Profiler.start");
}
const blocks: BlockTiming[] = [];
let failedTxs = 0;
const machineBefore = machineCpu();
const cpuBefore = process.cpuUsage();
const blocksStart = performance.now();
/** The last block's write when `aside`: awaited after the blocks, and counted in the last block. */
let lastWrite: Promise<unknown> = Promise.resolve();
/**
 * Executes and commits block `i` of blockTxs: Chain.execute's time and Chain.commit's (with
 * `aside`, Chain.commitAside's: waiting for the last block's write, then handing this one over).
 */
async function runBlock(i: number): Promise<{ executeMs: number; commitMs: number }> {
  const txs = blockTxs[i] as Tx[];
  const height = i + 1;
  const start = performance.now();
  const executed = await chain.execute(
    txs,
    genesis.validators[0]?.address ?? "",
    GENESIS_TIME + height * 1000,
  );
  const executedAt = performance.now();
  // The certificate is not checked by Chain.commit (consensus did that): an empty one stands in.
  const commit: Commit = { height, round: 0, block_hash: executed.hash, signatures: [] };
  if (aside) {
    const { durable } = await chain.commitAside(executed, commit, [toChecksumAddress(VALIDATOR)]);
    lastWrite = durable;
  } else await chain.commit(executed, commit, [toChecksumAddress(VALIDATOR)]);
  failedTxs += executed.results.filter((r) => r.code !== 0).length;
  return { executeMs: executedAt - start, commitMs: performance.now() - executedAt };
}

const { group } = spec;
for (let first = 0; group !== undefined && first < blockTxs.length; first += group.blocks) {
  const indexes = Array.from(
    { length: Math.min(group.blocks, blockTxs.length - first) },
    (_, k) => first + k,
  );
  const start = performance.now();
  const cpuStart = process.cpuUsage();
  const timings: { executeMs: number; commitMs: number }[] = [];
  const runOne = async (i: number) => {
    timings.push(await runBlock(i));
    return true;
  };
  if (group.together) await chain.commitTogether(indexes, runOne);
  else for (const i of indexes) await runOne(i);
  const end = performance.now();
  const cpu = process.cpuUsage(cpuStart);
  const txs = indexes.reduce((sum, i) => sum + (blockTxs[i]?.length ?? 0), 0);
  const executeMs = timings.reduce((sum, t) => sum + t.executeMs, 0);
  blocks.push({
    txs,
    executeMs,
    commitMs: end - start - executeMs,
    cpuMs: (cpu.user + cpu.system) / 1000,
    txPerS: txs / ((end - start) / 1000),
  });
  log(`blocks ${first + 1}–${first + indexes.length}: ${Math.round(txs / ((end - start) / 1000))} tx/s`);
}
for (let i = 0; group === undefined && i < blockTxs.length; i++) {
  const start = performance.now();
  const cpuStart = process.cpuUsage();
  const { executeMs, commitMs: handedOverMs } = await runBlock(i);
  // The last block is not done until its write lands.
  let commitMs = handedOverMs;
  if (i === blockTxs.length - 1) {
    const landStart = performance.now();
    await lastWrite;
    commitMs += performance.now() - landStart;
  }
  const cpu = process.cpuUsage(cpuStart);
  const txs = blockTxs[i]?.length ?? 0;
  const timing = {
    txs,
    executeMs,
    commitMs,
    cpuMs: (cpu.user + cpu.system) / 1000,
    txPerS: txs / ((performance.now() - start) / 1000),
    usedPages: usedPages(),
  };
  blocks.push(timing);
  log(
    `block ${i + 1}: ${Math.round(timing.txPerS)} tx/s (execute ${executeMs.toFixed(0)} ms, commit ${commitMs.toFixed(0)} ms)`,
  );
}

const blocksWallS = (performance.now() - blocksStart) / 1000;
const ownCpu = process.cpuUsage(cpuBefore);
const machineAfter = machineCpu();
const otherCpuPct =
  machineBefore === undefined || machineAfter === undefined
    ? undefined
    : ((machineAfter.busy - machineBefore.busy) / blocksWallS) * 100 -
      ((ownCpu.user + ownCpu.system) / 1e6 / blocksWallS) * 100;

if (profiler !== undefined && spec.cpuProfile !== undefined) {
  const { profile } = await profiler.post("Profiler.stop");
  mkdirSync(dirname(spec.cpuProfile), { recursive: true });
  writeFileSync(spec.cpuProfile, JSON.stringify(profile));
  profiler.disconnect();
}

let sum = 0;
const state = chain.state();
// One untimed pass over every funded account first: what is timed is reads of a warm store (every
// page mapped, code optimized), as on a node that has served a while, at both sizes, rather than
// the first touch of a page after the blocks (a minor fault: a random pass of `reads` accounts
// leaves many of the million-account store's pages untouched).
for (const address of funded) sum += balanceOf(state, address);
const readStart = performance.now();
for (let i = 0; i < spec.reads; i++) sum += balanceOf(state, pick(funded));
const readUs = ((performance.now() - readStart) * 1000) / spec.reads;
if (sum <= 0) throw new Error("balance reads found no funded account");

const rssAfterBlocks = process.memoryUsage().rss;
const anonymousAfterBlocks = anonymousBytes();
gc?.();
const run = result({
  blocks,
  rssAfterBlocksMiB: mib(rssAfterBlocks),
  heapAfterBlocksMiB: mib(process.memoryUsage().heapUsed),
  anonymousAfterBlocksMiB: anonymousAfterBlocks === undefined ? undefined : mib(anonymousAfterBlocks),
  maxRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
  readUs,
  dbBytesAfterBlocks: dirBytes(spec.dir),
  failedTxs,
  otherCpuPct,
});
await trieThread?.close();
await store.close?.();
console.log(JSON.stringify(run));
