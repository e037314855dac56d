import { Agent } from "node:http";
import { connect, type Socket } from "node:net";
import { type HttpReply, httpPost } from "./process.ts";

/**
 * Hostile RPC clients, run in a child process of their own (`forkAttacker`) so the attack and the
 * well-behaved client measuring latency do not share an event loop (test/load/limitsUnderAttack.test.ts).
 * The parent sends one `AttackOrder`; the child posts `{ready: true}` once the attack is in its
 * steady state. The attack lasts at least the order's `durationMs` and until the parent sends
 * `{stop: true}`; then the child posts `{done: true, stats}`, having closed every socket it opened.
 */

export type AttackOrder =
  | {
      kind: "oversized";
      port: number;
      durationMs: number;
      connections: number;
      maxBodyBytes: number;
      /** Body bytes per second over all connections together (the attacker's line rate); 0: as fast as it can. */
      bytesPerSecond: number;
    }
  | {
      kind: "batches";
      port: number;
      durationMs: number;
      connections: number;
      maxBatchItems: number;
      maxBlockRange: number;
    }
  | {
      kind: "connections";
      port: number;
      durationMs: number;
      idle: number;
      slowHeaders: number;
      slowBodies: number;
      byteEveryMs: number;
    }
  | { kind: "slowReaders"; port: number; durationMs: number; connections: number; pipelined: number };

/** Outcome counts by name (e.g. "cl_over:413", "chunked_huge:cut"). */
export type Counts = Record<string, number>;

export interface AttackStats {
  counts: Counts;
  /**
   * Largest values seen, by name: "life_ms:<kind>" the longest a held connection stayed open before
   * the server closed it; "reply_bytes:<kind>" the largest reply.
   */
  maxima: Record<string, number>;
  /** Requests or connections attempted in all. */
  attempts: number;
  elapsedMs: number;
}

export type AttackerMessage = { ready: true } | { done: true; stats: AttackStats } | { failed: string };

const bump = (counts: Counts, key: string, by = 1): void => {
  counts[key] = (counts[key] ?? 0) + by;
};

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Set when the parent sends `{stop: true}` (it has measured what it needed under attack). */
let stopRequested = false;

/** An attack goes on until its minimum duration has passed and the parent has asked it to stop. */
const attacking = (minimumEnd: number): boolean => Date.now() < minimumEnd || !stopRequested;

async function attackOver(minimumEnd: number): Promise<void> {
  while (attacking(minimumEnd)) await sleep(50);
}

/** The status code of the first response head in `text`, if one has arrived. */
const statusOf = (text: string): number | undefined => {
  const match = /^HTTP\/1\.1 (\d{3}) /.exec(text);
  return match === null ? undefined : Number(match[1]);
};

const CHUNK = Buffer.alloc(64 * 1024, 0x20); // spaces: a body that would be valid JSON padding

/** The attacker's shared line: bytes sent so far against a rate (0: no limit). */
class LineRate {
  sent = 0;
  private readonly started = Date.now();
  private readonly bytesPerSecond: number;

  constructor(bytesPerSecond: number) {
    this.bytesPerSecond = bytesPerSecond;
  }

  /** How long to wait before sending more, ms. */
  waitMs(): number {
    if (this.bytesPerSecond === 0) return 0;
    const dueAt = this.started + (1000 * this.sent) / this.bytesPerSecond;
    return Math.max(0, Math.ceil(dueAt - Date.now()));
  }
}

interface RawOutcome {
  status: number | undefined;
  cut: boolean;
  /** Body bytes handed to the kernel when the attempt ended. */
  sent: number;
}

/**
 * One POST on a fresh socket: `head` then up to `bodyBytes` of body (as chunks when `chunked`),
 * written as fast as the server takes them. Resolves with the status of the reply (if any came)
 * and whether the connection was cut (reset or closed) before the whole body was written.
 */
function rawPost(
  port: number,
  head: string,
  bodyBytes: number,
  chunked: boolean,
  line: LineRate,
): Promise<RawOutcome> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    let received = "";
    let sent = 0;
    let finished = false;
    let cut = false;
    const finish = (): void => {
      if (finished) return;
      finished = true;
      socket.destroy();
      resolve({ status: statusOf(received), cut, sent });
    };
    socket.setNoDelay(true);
    socket.on("data", (chunk: Buffer) => {
      if (received.length < 64) received += chunk.toString("latin1");
      // A complete reply to a fully sent body ends the attempt; otherwise keep sending (the server
      // drains the rest of an over-limit body, up to its bound).
      if (sent >= bodyBytes) finish();
    });
    socket.on("error", () => {
      cut = sent < bodyBytes;
      finish();
    });
    socket.on("close", () => {
      if (!finished) cut = sent < bodyBytes;
      finish();
    });
    const pump = (): void => {
      while (!finished && sent < bodyBytes) {
        const wait = line.waitMs();
        if (wait > 0) {
          setTimeout(pump, wait);
          return;
        }
        const size = Math.min(CHUNK.length, bodyBytes - sent);
        line.sent += size;
        const piece = size === CHUNK.length ? CHUNK : CHUNK.subarray(0, size);
        sent += size;
        const more = chunked
          ? socket.write(`${size.toString(16)}\r\n`) && socket.write(piece) && socket.write("\r\n")
          : socket.write(piece);
        if (sent >= bodyBytes && chunked) socket.write("0\r\n\r\n");
        if (!more) {
          socket.once("drain", pump);
          return;
        }
      }
      if (!finished && statusOf(received) !== undefined) finish();
      // else: the reply is still to come; the data handler finishes
      setTimeout(finish, 5_000).unref();
    };
    socket.once("connect", () => {
      socket.write(head);
      pump();
    });
  });
}

async function oversized(
  order: Extract<AttackOrder, { kind: "oversized" }>,
  post: Post,
): Promise<AttackStats> {
  const counts: Counts = {};
  const limit = order.maxBodyBytes;
  const started = Date.now();
  const until = started + order.durationMs;
  let attempts = 0;
  // Four shapes of over-limit body: within the drain bound (2x the limit) the server must answer
  // 413 and may keep the connection; beyond it, it answers 413 and may cut the connection.
  const variants = [
    { name: "cl_over", length: limit + 1024, declared: limit + 1024, chunked: false },
    { name: "cl_huge", length: 20 * limit, declared: 20 * limit, chunked: false },
    { name: "chunked_over", length: 2 * limit, declared: undefined, chunked: true },
    { name: "chunked_huge", length: 20 * limit, declared: undefined, chunked: true },
  ] as const;
  let next = 0;
  const line = new LineRate(order.bytesPerSecond);
  const worker = async (): Promise<void> => {
    while (attacking(until)) {
      const variant = variants[next++ % variants.length]!;
      attempts++;
      const head =
        "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
        (variant.chunked ? "Transfer-Encoding: chunked\r\n" : `Content-Length: ${variant.declared}\r\n`) +
        "\r\n";
      const outcome = await rawPost(order.port, head, variant.length, variant.chunked, line);
      // A cut before the client had even sent twice the limit would be earlier than documented.
      const cut = outcome.cut ? (outcome.sent < 2 * limit ? ":early_cut" : ":cut") : "";
      bump(counts, `${variant.name}:${outcome.status ?? "none"}${cut}`);
    }
  };
  const workers = Array.from({ length: order.connections }, worker);
  post({ ready: true });
  await Promise.all(workers);
  counts.body_bytes_sent = line.sent;
  return { counts, maxima: {}, attempts, elapsedMs: Date.now() - started };
}

interface RpcEntry {
  result?: unknown;
  error?: { code: number; data?: { reason?: string } };
}

/** Names a reply entry: "ok", or "<code>:<reason>". */
const entryName = (entry: RpcEntry): string =>
  entry.error === undefined ? "ok" : `${entry.error.code}:${entry.error.data?.reason ?? ""}`;

async function batches(order: Extract<AttackOrder, { kind: "batches" }>, post: Post): Promise<AttackStats> {
  const counts: Counts = {};
  const maxima: Record<string, number> = {};
  const started = Date.now();
  const until = started + order.durationMs;
  let attempts = 0;
  const call = (id: number, method: string, params?: unknown): Record<string, unknown> =>
    params === undefined ? { jsonrpc: "2.0", id, method } : { jsonrpc: "2.0", id, method, params };
  const tooLong = JSON.stringify(
    Array.from({ length: order.maxBatchItems + 1 }, (_, i) => call(i, "chain_getRecentBlockNumber")),
  );
  const heavy = JSON.stringify(
    Array.from({ length: order.maxBatchItems }, (_, i) =>
      call(i, "chain_getBlocks", { from: 0, to: order.maxBlockRange - 1 }),
    ),
  );
  const kinds = [
    { name: "over_limit", body: tooLong },
    { name: "heavy_at_limit", body: heavy },
  ];
  const worker = async (index: number): Promise<void> => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (let round = index; attacking(until); round++) {
        const kind = kinds[round % kinds.length]!;
        attempts++;
        let reply: HttpReply;
        try {
          reply = await httpPost(agent, order.port, kind.body);
        } catch (error) {
          bump(counts, `${kind.name}:transport:${(error as NodeJS.ErrnoException).code ?? "error"}`);
          continue;
        }
        if (reply.status !== 200) {
          bump(counts, `${kind.name}:http_${reply.status}`);
          continue;
        }
        const parsed = JSON.parse(reply.body) as RpcEntry | RpcEntry[];
        if (Array.isArray(parsed)) {
          bump(counts, `${kind.name}:array_of_${parsed.length}`);
          for (const entry of parsed) bump(counts, `${kind.name}:entry:${entryName(entry)}`);
        } else {
          bump(counts, `${kind.name}:single:${entryName(parsed)}`);
        }
        const key = `reply_bytes:${kind.name}`;
        maxima[key] = Math.max(maxima[key] ?? 0, Buffer.byteLength(reply.body));
      }
    } finally {
      agent.destroy();
    }
  };
  const workers = Array.from({ length: order.connections }, (_, i) => worker(i));
  post({ ready: true });
  await Promise.all(workers);
  return { counts, maxima, attempts, elapsedMs: Date.now() - started };
}

type HeldKind = "idle" | "slow_headers" | "slow_body";

async function connections(
  order: Extract<AttackOrder, { kind: "connections" }>,
  post: Post,
): Promise<AttackStats> {
  const counts: Counts = {};
  const maxima: Record<string, number> = {};
  const started = Date.now();
  const until = started + order.durationMs;
  const open = new Set<Socket>();
  let attempts = 0;
  let stopping = false;
  let established = 0;
  const target = order.idle + order.slowHeaders + order.slowBodies;
  let markAllUp = (): void => {};
  const allUp = new Promise<void>((resolve) => {
    markAllUp = resolve;
  });

  /** Holds one connection of `kind` open; when the server closes it, opens another (until the end). */
  const hold = (kind: HeldKind): void => {
    if (stopping) return;
    attempts++;
    const socket = connect(order.port, "127.0.0.1");
    open.add(socket);
    let opened = 0;
    let received = "";
    let ticker: NodeJS.Timeout | undefined;
    socket.setNoDelay(true);
    socket.on("data", (chunk: Buffer) => {
      if (received.length < 64) received += chunk.toString("latin1");
    });
    socket.on("error", () => {
      // counted on close
    });
    socket.once("connect", () => {
      opened = Date.now();
      bump(counts, `${kind}:opened`);
      if (++established === target) markAllUp();
      if (kind === "slow_headers") {
        // slowloris: a request head that never ends, one byte at a time
        socket.write("POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: ");
        ticker = setInterval(() => socket.write("a"), order.byteEveryMs);
      } else if (kind === "slow_body") {
        // a complete head promising 1,000 bytes, then the body one byte at a time
        socket.write(
          "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n ",
        );
        ticker = setInterval(() => socket.write(" "), order.byteEveryMs);
      }
    });
    socket.once("close", () => {
      if (ticker !== undefined) clearInterval(ticker);
      open.delete(socket);
      if (stopping) return;
      if (opened === 0) {
        bump(counts, `${kind}:refused`);
      } else {
        const life = Date.now() - opened;
        maxima[`life_ms:${kind}`] = Math.max(maxima[`life_ms:${kind}`] ?? 0, life);
        bump(counts, `${kind}:closed_by_server`);
        const status = statusOf(received);
        if (status !== undefined) bump(counts, `${kind}:status_${status}`);
      }
      hold(kind);
    });
  };
  const plan: HeldKind[] = [
    ...Array<HeldKind>(order.idle).fill("idle"),
    ...Array<HeldKind>(order.slowHeaders).fill("slow_headers"),
    ...Array<HeldKind>(order.slowBodies).fill("slow_body"),
  ];
  // Opened in waves of 100, so the listen backlog is not what refuses them.
  for (let i = 0; i < plan.length; i += 100) {
    for (const kind of plan.slice(i, i + 100)) hold(kind);
    await sleep(20);
  }
  await Promise.race([allUp, sleep(5_000)]);
  bump(counts, "established_at_ready", established);
  post({ ready: true });
  await attackOver(until);
  counts.open_at_end = open.size;
  stopping = true;
  for (const socket of open) socket.destroy();
  return { counts, maxima, attempts, elapsedMs: Date.now() - started };
}

async function slowReaders(
  order: Extract<AttackOrder, { kind: "slowReaders" }>,
  post: Post,
): Promise<AttackStats> {
  const counts: Counts = {};
  const started = Date.now();
  const sockets: Socket[] = [];
  const body = '{"jsonrpc":"2.0","id":1,"method":"chain_getBlocks","params":{"from":0,"to":99}}';
  const requestText = `POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  await Promise.all(
    Array.from(
      { length: order.connections },
      () =>
        new Promise<void>((resolve) => {
          const socket = connect(order.port, "127.0.0.1");
          sockets.push(socket);
          socket.on("error", () => {});
          socket.once("connect", () => {
            // Several requests pipelined, then never a byte read: the replies pile up at the node.
            socket.write(requestText.repeat(order.pipelined));
            socket.pause();
            bump(counts, "requests_sent", order.pipelined);
            resolve();
          });
        }),
    ),
  );
  post({ ready: true });
  await attackOver(started + order.durationMs);
  // Read again. A connection the server closed ends or resets once the bytes already in the
  // kernel are read (a paused socket does not notice); one still open delivers all its replies,
  // while a closed one can deliver at most the two it had been given.
  await Promise.all(
    sockets.map(
      (socket) =>
        new Promise<void>((resolve) => {
          let bytes = 0;
          let head = "";
          let settled = false;
          const settle = (outcome: string): void => {
            if (settled) return;
            settled = true;
            bump(counts, outcome);
            socket.destroy();
            resolve();
          };
          socket.on("data", (chunk: Buffer) => {
            bytes += chunk.length;
            if (head.length < 512) head += chunk.toString("latin1", 0, 512);
            const replyBytes = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? Number.NaN);
            if (bytes >= 3 * replyBytes) settle("still_served");
          });
          socket.once("end", () => settle("closed_by_server"));
          socket.once("error", () => settle("closed_by_server"));
          setTimeout(() => settle("undecided"), 10_000);
          socket.resume();
        }),
    ),
  );
  return {
    counts,
    maxima: {},
    attempts: order.connections * order.pipelined,
    elapsedMs: Date.now() - started,
  };
}

type Post = (message: AttackerMessage) => void;

async function run(order: AttackOrder, post: Post): Promise<AttackStats> {
  switch (order.kind) {
    case "oversized":
      return oversized(order, post);
    case "batches":
      return batches(order, post);
    case "connections":
      return connections(order, post);
    case "slowReaders":
      return slowReaders(order, post);
  }
}

// Entry point when forked: one order, one report, then exit.
if (process.send !== undefined) {
  const post: Post = (message) => process.send?.(message);
  process.on("message", (message: AttackOrder | { stop: true }) => {
    if ("stop" in message) stopRequested = true;
  });
  process.once("message", (order: AttackOrder) => {
    run(order, post)
      .then((stats) => post({ done: true, stats }))
      .catch((error: unknown) =>
        post({ failed: error instanceof Error ? (error.stack ?? error.message) : String(error) }),
      )
      .finally(() => process.disconnect());
  });
}
