/**
 * The load generator of the network scenarios, always its own process (never inside a node): it
 * sends pre-signed transfers (bench/netPresign.ts) round-robin to the validators' RPC with
 * `chain_sendSignedTransactionBatch`, and watches one node's head every `pollMs` to see when each
 * block is committed. Prints "phase measured" and "phase end" around the measured phase (the bench
 * samples the nodes' CPU there) and one JSON line of results at the end.
 *
 * Usage: node --import tsx bench/netLoad.ts '<NetLoadSpec JSON>'
 *  - throughput: batches of `batch` transfers, `inFlightPerNode` requests open per node at any time,
 *                as long as fewer than `maxBacklog` admitted transfers are not yet in a block (so
 *                the pools cannot grow without bound). Reports the transfers in blocks committed
 *                during the measured phase, over the whole phase and over `windows` equal parts.
 *  - latency:    a steady `ratePerS`: every `tickMs` the transfers due so far go out as one batch
 *                to the next node. Each hash's submission time is when its request was sent; its
 *                commit time is when the `pollUrl` node's `newBlocks` notification of the block that
 *                holds it arrived (an Ethereum node: when the poller first saw that block).
 *  - all:        every transaction of the file (from `firstTx`, `count` of them) sent as in
 *                throughput, then waits until the blocks seen hold as many as were admitted.
 *                Committed per second = admitted / (first request sent → the last block seen).
 *
 * `rpc: "eth"` speaks an Ethereum node's JSON-RPC instead (a peer such as hardhat, bench/hardhat.ts):
 * the file holds `eth_sendRawTransaction` request bodies (bench/ganachePresign.ts), a batch is a
 * JSON-RPC batch array of them, and the head and its blocks are read with `eth_blockNumber` and
 * `eth_getBlockTransactionCountByNumber` / `eth_getBlockByNumber`. Everything else, the timing
 * included, is the same code for both.
 */
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import WebSocket, { type RawData } from "ws";
import { quantile } from "./report.ts";

interface Common {
  /** Whose JSON-RPC the nodes speak: chain-node's (the default) or an Ethereum node's. */
  rpc?: "chain" | "eth";
  /**
   * Every block holds exactly this many transactions (hardhat's automine: one): the throughput
   * and all modes then poll only the head, not each new block's count, which on such a node
   * would be a count query per transaction. The caller checks the chain afterwards.
   */
  txsPerBlock?: number;
  urls: string[];
  /** The node whose head is polled (commit times are when its head showed the block). */
  pollUrl: string;
  pollMs: number;
  txsFile: string;
  /** Where in the file to start: a repeated run must not resend what an earlier one sent. */
  firstTx: number;
  durationS: number;
}

export type NetLoadSpec =
  | (Common & {
      mode: "throughput";
      warmupS: number;
      batch: number;
      inFlightPerNode: number;
      maxBacklog: number;
      windows: number;
    })
  | (Common & { mode: "latency"; ratePerS: number; tickMs: number; drainS: number })
  | (Common & { mode: "all"; count: number; batch: number; inFlightPerNode: number; maxBacklog: number });

export interface BlockSeen {
  number: number;
  txs: number;
  /** ms since the worker started. */
  seenAtMs: number;
}

export interface ThroughputResult {
  mode: "throughput";
  /** Committed transfers per second over the whole measured phase (between two commits). */
  committedPerS: number;
  /** The same over each of `windows` consecutive equal parts of the phase. */
  windowsPerS: number[];
  committedInPhase: number;
  blocksInPhase: number;
  /** Time between the last commit before the phase and the last one in it, s. */
  spanS: number;
  /** Transfers admitted by the node they were sent to, in the measured phase / in all. */
  admittedInPhase: number;
  admittedTotal: number;
  admittedPerS: number;
  rejected: Record<string, number>;
  /** Admitted and not yet in a block at the end of the phase, and its maximum over the phase. */
  backlogAtEnd: number;
  backlogMax: number;
  /** ms the senders spent waiting for the backlog to shrink, in the measured phase (per sender). */
  backlogWaitMs: number;
  exhausted: boolean;
  sent: number;
  blocks: BlockSeen[];
  phaseStartMs: number;
  phaseEndMs: number;
  requestP50Ms: number;
  requestP99Ms: number;
  loadCpuPct: number;
}

export interface AllResult {
  mode: "all";
  sent: number;
  admitted: number;
  committed: number;
  rejected: Record<string, number>;
  /** admitted / spanS. */
  committedPerS: number;
  /** From the first request sent to the poll that saw the last transaction's block, s. */
  spanS: number;
  /** Time the submissions took (first request sent → last reply), s. */
  submitS: number;
  /** Blocks seen from the first request on, with their transaction counts. */
  blocks: BlockSeen[];
  backlogMax: number;
  requestP50Ms: number;
  requestP99Ms: number;
  /** `durationS` passed before everything admitted was seen committed. */
  timedOut: boolean;
  loadCpuPct: number;
}

export interface LatencyResult {
  mode: "latency";
  ratePerS: number;
  submitted: number;
  admitted: number;
  committed: number;
  rejected: Record<string, number>;
  latencyP50Ms: number;
  latencyP90Ms: number;
  latencyP99Ms: number;
  latencyMaxMs: number;
  latencyMeanMs: number;
  /** Time from sending a batch to its hashes coming back (admission on the receiving node). */
  ackP50Ms: number;
  ackP99Ms: number;
  blocks: number;
  /** Achieved submission rate over the sending phase. */
  sentPerS: number;
  exhausted: boolean;
  loadCpuPct: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Reply {
  id?: number;
  result?: unknown;
  error?: { code: number; message: string; data?: { reason?: string } };
}

async function post(url: string, body: string): Promise<Reply | Reply[]> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`HTTP ${response.status}: ${text.slice(0, 200)}`);
  return JSON.parse(text) as Reply | Reply[];
}

async function call<T>(url: string, method: string, params?: unknown): Promise<T> {
  const request: Record<string, unknown> = { jsonrpc: "2.0", id: 1, method };
  if (params !== undefined) request.params = params;
  const reply = (await post(url, JSON.stringify(request))) as Reply;
  if (reply.error !== undefined) throw new Error(`${method}: ${JSON.stringify(reply.error)}`);
  return reply.result as T;
}

/** One JSON-RPC batch of the same method; results in order of the params. */
async function callMany<T>(url: string, method: string, params: unknown[]): Promise<T[]> {
  const body = JSON.stringify(params.map((p, i) => ({ jsonrpc: "2.0", id: i, method, params: p })));
  const replies = (await post(url, body)) as Reply[];
  const byId = new Map(replies.map((r) => [r.id, r]));
  return params.map((_, i) => {
    const reply = byId.get(i);
    if (reply === undefined || reply.error !== undefined) {
      throw new Error(`${method}: ${JSON.stringify(reply?.error ?? "no reply")}`);
    }
    return reply.result as T;
  });
}

/** What a batch of transactions came to: the hashes of those admitted, and the others by reason. */
interface Sent {
  hashes: string[];
  rejected: Record<string, number>;
}

/** What differs between chain-node's JSON-RPC and an Ethereum node's; all numbers are block numbers. */
interface Dialect {
  head(url: string): Promise<number>;
  txCounts(url: string, numbers: number[]): Promise<number[]>;
  txHashes(url: string, numbers: number[]): Promise<string[][]>;
  /** One request sending `txs` (entries of the pre-signed file). */
  sendBody(txs: unknown[], id: number): string;
  /** The reply to `sendBody`'s request, for `count` transactions. */
  sent(reply: Reply | Reply[], count: number): Sent;
}

const hex = (n: number) => `0x${n.toString(16)}`;
/** A rejection's reason: the node's `data.reason`, else its message without the figures in it. */
const reasonOf = (error: Reply["error"]) =>
  error?.data?.reason ?? error?.message.replace(/\d+/g, "N").slice(0, 100) ?? "no_reply";

const DIALECTS: Record<"chain" | "eth", Dialect> = {
  chain: {
    head: (url) => call<number>(url, "chain_getRecentBlockNumber"),
    txCounts: (url, numbers) =>
      callMany<number>(
        url,
        "chain_getBlockTransactionCountByNumber",
        numbers.map((number) => ({ number })),
      ),
    txHashes: async (url, numbers) =>
      (
        await callMany<{ transactions: string[] }>(
          url,
          "chain_getBlockByNumber",
          numbers.map((number) => ({ number, getFullTransactions: false })),
        )
      ).map((b) => b.transactions),
    sendBody: (txs, id) =>
      JSON.stringify({
        jsonrpc: "2.0",
        id,
        method: "chain_sendSignedTransactionBatch",
        params: { tx_list: txs },
      }),
    sent: (reply, count) => {
      const single = reply as Reply;
      if (Array.isArray(single.result)) return { hashes: single.result as string[], rejected: {} };
      const reason = single.error?.data?.reason ?? `rpc_${single.error?.code ?? "unknown"}`;
      return { hashes: [], rejected: { [reason]: count } };
    },
  },
  eth: {
    head: async (url) => Number(await call<string>(url, "eth_blockNumber", [])),
    txCounts: async (url, numbers) =>
      (
        await callMany<string>(
          url,
          "eth_getBlockTransactionCountByNumber",
          numbers.map((n) => [hex(n)]),
        )
      ).map(Number),
    txHashes: async (url, numbers) =>
      (
        await callMany<{ transactions: string[] }>(
          url,
          "eth_getBlockByNumber",
          numbers.map((n) => [hex(n), false]),
        )
      ).map((b) => b.transactions),
    // The file's entries are whole request bodies: a batch is their JSON array.
    sendBody: (txs) => `[${txs.join(",")}]`,
    sent: (reply, count) => {
      const replies = Array.isArray(reply) ? reply : [reply];
      const out: Sent = { hashes: [], rejected: {} };
      for (const r of replies) {
        if (typeof r.result === "string") out.hashes.push(r.result);
        else addRejected(out.rejected, { [reasonOf(r.error)]: 1 });
      }
      if (count > replies.length) addRejected(out.rejected, { no_reply: count - replies.length });
      return out;
    },
  },
};

const dialectOf = (spec: Common) => DIALECTS[spec.rpc ?? "chain"];

/** What the poller reads of each new block: its hashes, its count, or nothing (a known count). */
type BlockRead = "hashes" | "counts" | { txsPerBlock: number };

/**
 * Polls `url`'s head every `pollMs`; for each new block calls `onBlock` with its transaction
 * hashes or only their count (`read`), and the time the poll that found it was answered.
 */
function startPoller(
  dialect: Dialect,
  url: string,
  pollMs: number,
  read: BlockRead,
  onBlock: (number: number, hashes: string[] | undefined, txs: number, seenAtMs: number) => void,
): { stop: () => Promise<void>; errors: () => number } {
  let running = true;
  let errors = 0;
  const loop = (async () => {
    let last = await dialect.head(url);
    while (running) {
      const started = performance.now();
      try {
        const head = await dialect.head(url);
        const seenAt = performance.now();
        if (typeof read === "object") {
          for (let number = last + 1; number <= head; number++) {
            onBlock(number, undefined, read.txsPerBlock, seenAt);
          }
        } else {
          for (let from = last + 1; from <= head; from += 100) {
            const numbers = Array.from({ length: Math.min(100, head - from + 1) }, (_, i) => from + i);
            if (read === "hashes") {
              const blocks = await dialect.txHashes(url, numbers);
              for (const [i, hashes] of blocks.entries()) {
                onBlock(numbers[i] as number, hashes, hashes.length, seenAt);
              }
            } else {
              const counts = await dialect.txCounts(url, numbers);
              for (const [i, c] of counts.entries()) onBlock(numbers[i] as number, undefined, c, seenAt);
            }
          }
        }
        last = Math.max(last, head);
      } catch {
        errors++;
      }
      await sleep(Math.max(0, pollMs - (performance.now() - started)));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
    },
    errors: () => errors,
  };
}

/**
 * Follows `url`'s new blocks through a `newBlocks` subscription on its /ws (chain-node only) and
 * calls `onBlock` with each block's transaction hashes and the time its notification arrived: the
 * moment the node committed it, without a poll's wait (on average half its period) or a fetch. A
 * block the notifications skipped (none should) is fetched, as the poller would.
 */
async function startSubscriber(
  url: string,
  onBlock: (number: number, hashes: string[], seenAtMs: number) => void,
): Promise<{ stop: () => Promise<void>; errors: () => number }> {
  const socket = new WebSocket(`${url.replace(/^http/, "ws")}/ws`);
  await new Promise<void>((resolve, reject) => {
    socket.once("open", resolve);
    socket.once("error", reject);
  });
  let errors = 0;
  let last = await DIALECTS.chain.head(url);
  let filling = Promise.resolve();
  socket.on("error", () => errors++);
  socket.on("message", (data: RawData) => {
    const seenAt = performance.now();
    const message = JSON.parse(data.toString()) as {
      params?: { result?: { number: number; transactions: string[] } };
    };
    const block = message.params?.result;
    if (block === undefined || block.number <= last) return;
    const missed = Array.from({ length: block.number - last - 1 }, (_, i) => last + 1 + i);
    last = block.number;
    if (missed.length > 0) {
      filling = filling
        .then(() => DIALECTS.chain.txHashes(url, missed))
        .then((blocks) => {
          for (const [i, hashes] of blocks.entries()) onBlock(missed[i] as number, hashes, performance.now());
        })
        .catch(() => {
          errors++;
        });
    }
    onBlock(block.number, block.transactions, seenAt);
  });
  socket.send(
    JSON.stringify({ jsonrpc: "2.0", id: 1, method: "chain_subscribe", params: { topic: "newBlocks" } }),
  );
  return {
    stop: async () => {
      await filling;
      socket.close();
    },
    errors: () => errors,
  };
}

/** Sends one batch of `txs`: the hashes admitted, and the others by reason. */
async function sendBatch(dialect: Dialect, url: string, txs: unknown[], id: number): Promise<Sent> {
  try {
    return dialect.sent(await post(url, dialect.sendBody(txs, id)), txs.length);
  } catch (error) {
    return { hashes: [], rejected: { [`transport: ${transportError(error)}`]: txs.length } };
  }
}

/** A failed request's message and, for fetch's "fetch failed", its cause (reset, closed, refused). */
function transportError(error: unknown): string {
  const { message, cause } = error as Error & { cause?: { code?: string; message?: string } };
  const why = cause === undefined ? "" : ` (${[cause.code, cause.message].filter(Boolean).join(" ")})`;
  return `${message}${why}`.slice(0, 120);
}

/** Adds `more` rejections by reason to `into`. */
function addRejected(into: Record<string, number>, more: Record<string, number>): void {
  for (const [reason, count] of Object.entries(more)) into[reason] = (into[reason] ?? 0) + count;
}

/** The pre-signed file: `{signature, transaction}` objects (chain) or request bodies (eth). */
const readTxs = (spec: Common): unknown[] => JSON.parse(readFileSync(spec.txsFile, "utf8")) as unknown[];

function cpuPctSince(before: NodeJS.CpuUsage, wallMs: number): number {
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1e4 / (wallMs / 1000);
}

/**
 * Senders of batches of `batch`, `inFlightPerNode` per node, while fewer than `maxBacklog` admitted
 * transactions are not yet in a block; they return when `stop()` or when the transactions run out.
 * Counts in `stats` (`inPhase` decides which requests' figures are kept).
 */
function startSenders(
  spec: Common & { batch: number; inFlightPerNode: number; maxBacklog: number },
  txs: unknown[],
  committed: () => number,
) {
  const dialect = dialectOf(spec);
  const stats = {
    next: 0,
    sent: 0,
    exhausted: false,
    stopped: false,
    inPhase: false,
    admittedTotal: 0,
    admittedInPhase: 0,
    backlogMax: 0,
    backlogWaitMs: 0,
    lastReplyMs: 0,
    rejected: {} as Record<string, number>,
    requestMs: [] as number[],
  };
  let id = 1;
  const sender = async (url: string) => {
    while (!stats.stopped) {
      const backlog = stats.admittedTotal - committed();
      if (stats.inPhase) stats.backlogMax = Math.max(stats.backlogMax, backlog);
      if (backlog >= spec.maxBacklog) {
        const waitStart = performance.now();
        await sleep(5);
        if (stats.inPhase) stats.backlogWaitMs += performance.now() - waitStart;
        continue;
      }
      if (stats.next >= txs.length) {
        stats.exhausted = true;
        return;
      }
      const slice = txs.slice(stats.next, stats.next + spec.batch);
      stats.next += slice.length;
      stats.sent += slice.length;
      const started = performance.now();
      const counted = stats.inPhase;
      const reply = await sendBatch(dialect, url, slice, id++);
      stats.lastReplyMs = performance.now();
      if (counted) stats.requestMs.push(stats.lastReplyMs - started);
      stats.admittedTotal += reply.hashes.length;
      if (counted && stats.inPhase) stats.admittedInPhase += reply.hashes.length;
      addRejected(stats.rejected, reply.rejected);
    }
  };
  const senders = spec.urls.flatMap((url) => Array.from({ length: spec.inFlightPerNode }, () => sender(url)));
  return { stats, count: senders.length, done: Promise.all(senders) };
}

/** Polls `spec.pollUrl` for blocks from now on: each one seen, and the transactions in all of them. */
function watchBlocks(spec: Common) {
  const seen = { blocks: [] as BlockSeen[], committed: 0 };
  const poller = startPoller(
    dialectOf(spec),
    spec.pollUrl,
    spec.pollMs,
    spec.txsPerBlock === undefined ? "counts" : { txsPerBlock: spec.txsPerBlock },
    (number, _hashes, count, seenAtMs) => {
      seen.blocks.push({ number, txs: count, seenAtMs });
      seen.committed += count;
    },
  );
  return { seen, poller };
}

async function throughput(spec: Extract<NetLoadSpec, { mode: "throughput" }>): Promise<ThroughputResult> {
  const txs = readTxs(spec).slice(spec.firstTx);
  const { seen, poller } = watchBlocks(spec);
  const { blocks } = seen;
  const senders = startSenders(spec, txs, () => seen.committed);
  const stats = senders.stats;

  await sleep(spec.warmupS * 1000);
  console.log("phase measured");
  const cpuBefore = process.cpuUsage();
  const phaseStartMs = performance.now();
  stats.inPhase = true;
  await sleep(spec.durationS * 1000);
  stats.inPhase = false;
  const phaseEndMs = performance.now();
  const loadCpuPct = cpuPctSince(cpuBefore, phaseEndMs - phaseStartMs);
  console.log("phase end");
  const backlogAtEnd = stats.admittedTotal - seen.committed;
  stats.stopped = true;
  await senders.done;
  await poller.stop();

  // Commits seen in the phase, measured between two commits: from the last one seen before the
  // phase to the last one seen in it (whole blocks only, no guess about a block in progress).
  const rate = (fromMs: number, toMs: number) => {
    // From the last commit before the span (or the span's start, when the poller saw none: under
    // load a block can take longer than the warm-up) to the last commit inside it.
    const startMs = blocks.filter((b) => b.seenAtMs <= fromMs).at(-1)?.seenAtMs ?? fromMs;
    const inside = blocks.filter((b) => b.seenAtMs > fromMs && b.seenAtMs <= toMs);
    const last = inside.at(-1);
    if (last === undefined || last.seenAtMs === startMs) {
      return { perS: 0, txs: 0, blocks: inside.length, spanS: 0 };
    }
    const committed = inside.reduce((sum, b) => sum + b.txs, 0);
    const spanS = (last.seenAtMs - startMs) / 1000;
    return { perS: committed / spanS, txs: committed, blocks: inside.length, spanS };
  };
  const whole = rate(phaseStartMs, phaseEndMs);
  const part = (phaseEndMs - phaseStartMs) / spec.windows;
  const windowsPerS = Array.from(
    { length: spec.windows },
    (_, i) => rate(phaseStartMs + i * part, phaseStartMs + (i + 1) * part).perS,
  );
  const sortedRequests = [...stats.requestMs].sort((a, b) => a - b);
  return {
    mode: "throughput",
    committedPerS: whole.perS,
    windowsPerS,
    committedInPhase: whole.txs,
    blocksInPhase: whole.blocks,
    spanS: whole.spanS,
    admittedInPhase: stats.admittedInPhase,
    admittedTotal: stats.admittedTotal,
    admittedPerS: stats.admittedInPhase / ((phaseEndMs - phaseStartMs) / 1000),
    rejected: stats.rejected,
    backlogAtEnd,
    backlogMax: stats.backlogMax,
    backlogWaitMs: stats.backlogWaitMs / senders.count,
    exhausted: stats.exhausted,
    sent: stats.sent,
    blocks,
    phaseStartMs,
    phaseEndMs,
    requestP50Ms: quantile(sortedRequests, 0.5),
    requestP99Ms: quantile(sortedRequests, 0.99),
    loadCpuPct,
  };
}

async function all(spec: Extract<NetLoadSpec, { mode: "all" }>): Promise<AllResult> {
  const txs = readTxs(spec).slice(spec.firstTx, spec.firstTx + spec.count);
  const { seen, poller } = watchBlocks(spec);
  const { blocks } = seen;
  // The poller's first head read is the start: blocks before it are not counted.
  await sleep(spec.pollMs * 2);
  console.log("phase measured");
  const cpuBefore = process.cpuUsage();
  const startMs = performance.now();
  const senders = startSenders(spec, txs, () => seen.committed);
  senders.stats.inPhase = true;
  await senders.done;
  const deadline = startMs + spec.durationS * 1000;
  while (seen.committed < senders.stats.admittedTotal && performance.now() < deadline) await sleep(5);
  const endMs = performance.now();
  const loadCpuPct = cpuPctSince(cpuBefore, endMs - startMs);
  console.log("phase end");
  await poller.stop();
  const { stats } = senders;
  const inRun = blocks.filter((b) => b.seenAtMs > startMs);
  const last = inRun.filter((b) => b.txs > 0).at(-1);
  const spanS = ((last?.seenAtMs ?? endMs) - startMs) / 1000;
  const sortedRequests = [...stats.requestMs].sort((a, b) => a - b);
  return {
    mode: "all",
    sent: stats.sent,
    admitted: stats.admittedTotal,
    committed: seen.committed,
    rejected: stats.rejected,
    committedPerS: stats.admittedTotal / spanS,
    spanS,
    submitS: (stats.lastReplyMs - startMs) / 1000,
    blocks: inRun.filter((b) => b.seenAtMs <= (last?.seenAtMs ?? endMs)),
    backlogMax: stats.backlogMax,
    requestP50Ms: quantile(sortedRequests, 0.5),
    requestP99Ms: quantile(sortedRequests, 0.99),
    timedOut: seen.committed < stats.admittedTotal,
    loadCpuPct,
  };
}

async function latency(spec: Extract<NetLoadSpec, { mode: "latency" }>): Promise<LatencyResult> {
  const txs = readTxs(spec).slice(spec.firstTx);
  const dialect = dialectOf(spec);
  const seen = new Map<string, number>();
  let blockCount = 0;
  const onBlock = (hashes: string[] | undefined, seenAtMs: number) => {
    blockCount++;
    for (const hash of hashes ?? []) if (!seen.has(hash)) seen.set(hash, seenAtMs);
  };
  // A chain-node tells its subscribers of each commit; an Ethereum node here is polled.
  const poller =
    (spec.rpc ?? "chain") === "chain"
      ? await startSubscriber(spec.pollUrl, (_number, hashes, seenAtMs) => onBlock(hashes, seenAtMs))
      : startPoller(dialect, spec.pollUrl, spec.pollMs, "hashes", (_number, hashes, _count, seenAtMs) =>
          onBlock(hashes, seenAtMs),
        );
  const submittedAt = new Map<string, number>();
  const acks: number[] = [];
  const rejected: Record<string, number> = {};
  const requests: Promise<void>[] = [];
  let submitted = 0;
  let exhausted = false;
  let node = 0;
  let id = 1;

  console.log("phase measured");
  const cpuBefore = process.cpuUsage();
  const start = performance.now();
  const end = start + spec.durationS * 1000;
  for (let now = start; now < end; now = performance.now()) {
    let due = Math.floor(((now - start) / 1000) * spec.ratePerS) - submitted;
    while (due > 0) {
      if (submitted >= txs.length) {
        exhausted = true;
        break;
      }
      const slice = txs.slice(submitted, submitted + Math.min(due, 100));
      submitted += slice.length;
      due -= slice.length;
      const url = spec.urls[node++ % spec.urls.length] as string;
      const sentAt = performance.now();
      requests.push(
        sendBatch(dialect, url, slice, id++).then((reply) => {
          acks.push(performance.now() - sentAt);
          for (const hash of reply.hashes) submittedAt.set(hash, sentAt);
          addRejected(rejected, reply.rejected);
        }),
      );
    }
    if (exhausted) break;
    await sleep(Math.max(0, spec.tickMs - (performance.now() - now)));
  }
  const sendEnd = performance.now();
  const loadCpuPct = cpuPctSince(cpuBefore, sendEnd - start);
  console.log("phase end");
  await Promise.all(requests);
  const drainUntil = performance.now() + spec.drainS * 1000;
  while (performance.now() < drainUntil && [...submittedAt.keys()].some((h) => !seen.has(h))) await sleep(50);
  await poller.stop();

  const latencies: number[] = [];
  for (const [hash, at] of submittedAt) {
    const committedAt = seen.get(hash);
    if (committedAt !== undefined) latencies.push(committedAt - at);
  }
  latencies.sort((a, b) => a - b);
  acks.sort((a, b) => a - b);
  return {
    mode: "latency",
    ratePerS: spec.ratePerS,
    submitted,
    admitted: submittedAt.size,
    committed: latencies.length,
    rejected,
    latencyP50Ms: quantile(latencies, 0.5),
    latencyP90Ms: quantile(latencies, 0.9),
    latencyP99Ms: quantile(latencies, 0.99),
    latencyMaxMs: latencies.at(-1) ?? Number.NaN,
    latencyMeanMs: latencies.reduce((s, l) => s + l, 0) / Math.max(1, latencies.length),
    ackP50Ms: quantile(acks, 0.5),
    ackP99Ms: quantile(acks, 0.99),
    blocks: blockCount,
    sentPerS: submitted / ((sendEnd - start) / 1000),
    exhausted,
    loadCpuPct,
  };
}

const spec = JSON.parse(process.argv[2] ?? "{}") as NetLoadSpec;
const result =
  spec.mode === "throughput"
    ? await throughput(spec)
    : spec.mode === "all"
      ? await all(spec)
      : await latency(spec);
console.log(JSON.stringify(result));
