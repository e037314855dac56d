import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { connect, createServer, type Server, type Socket } from "node:net";
import { after, describe, it } from "node:test";
import { performance } from "node:perf_hooks";
import { type DelayProxy, type DelayProxyOptions, startDelayProxy } from "../../helpers/delayProxy.ts";
import { delayProxyCommand, startDelayProxyProcess } from "../../helpers/delayProxyProcess.ts";
import { waitFor } from "../../helpers/testNode.ts";

/**
 * The delay proxy (test/helpers/delayProxy.ts) on 127.0.0.1: delays as configured in each
 * direction, jitter within its bound, bytes in order, the rate cap, bounded memory, closing, many
 * connections, and the process entry. Tolerances allow for a loaded 2-core machine: a delay is
 * never shorter than configured, and at most a few tens of ms longer.
 */

const HOST = "127.0.0.1";
/** How much later than configured a delayed message may arrive on a busy machine. */
const LATE_MS = 30;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

async function listen(onConnection: (socket: Socket) => void): Promise<{ server: Server; port: number }> {
  const server = createServer({ allowHalfOpen: true, noDelay: true }, (socket) => {
    socket.on("error", () => {}); // the proxy resets connections at teardown; tests look at their own sides
    onConnection(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  const address = server.address();
  return { server, port: typeof address === "object" && address !== null ? address.port : 0 };
}

function dial(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: HOST, port, allowHalfOpen: true, noDelay: true }, () => resolve(socket));
    socket.once("error", reject);
  });
}

/** A proxy to `targetPort` and its teardown, closed after the test. */
async function proxyTo(
  t: { after(fn: () => unknown): void },
  targetPort: number,
  shape: Partial<DelayProxyOptions>,
): Promise<DelayProxy> {
  const proxy = await startDelayProxy({
    listenHost: HOST,
    listenPort: 0,
    targetHost: HOST,
    targetPort,
    delayMs: 0,
    ...shape,
  });
  t.after(() => proxy.close());
  return proxy;
}

/** Resolves with the next `size` bytes read from `socket`. */
function readBytes(socket: Socket, size: number): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let have = 0;
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      have += chunk.length;
      if (have < size) return;
      socket.removeListener("data", onData);
      const all = Buffer.concat(chunks);
      if (all.length > size) socket.unshift(all.subarray(size));
      resolve(all.subarray(0, size));
    };
    socket.on("data", onData);
  });
}

/**
 * `count` pings one at a time through a proxy in front of a server in this process, which stamps
 * each on arrival and answers at once: the one-way delay of each direction and the round trip.
 */
async function measurePings(
  t: { after(fn: () => unknown): void },
  shape: Partial<DelayProxyOptions>,
  count: number,
): Promise<{ up: number[]; down: number[]; rtt: number[]; proxy: DelayProxy }> {
  const arrivals: { arrivedAt: number; answeredAt: number }[] = [];
  const { server, port } = await listen((socket) => {
    socket.on("data", () => {
      const arrivedAt = performance.now();
      socket.write(Buffer.alloc(8));
      arrivals.push({ arrivedAt, answeredAt: performance.now() });
    });
  });
  t.after(() => server.close());
  const proxy = await proxyTo(t, port, shape);
  const client = await dial(proxy.port);
  const up: number[] = [];
  const down: number[] = [];
  const rtt: number[] = [];
  // One ping first, not counted: the proxy's upstream connection and a cold JIT would be in it.
  const warm = readBytes(client, 8);
  client.write(Buffer.alloc(8));
  await warm;
  arrivals.length = 0;
  for (let i = 0; i < count; i++) {
    const sentAt = performance.now();
    const answer = readBytes(client, 8);
    client.write(Buffer.alloc(8));
    await answer;
    const backAt = performance.now();
    const stamp = arrivals[i];
    assert.ok(stamp !== undefined, `ping ${i} reached the server as one message`);
    up.push(stamp.arrivedAt - sentAt);
    down.push(backAt - stamp.answeredAt);
    rtt.push(backAt - sentAt);
  }
  client.end();
  return { up, down, rtt, proxy };
}

describe("delay proxy (127.0.0.1)", { timeout: 120_000 }, () => {
  it("holds each direction for the one-way delay, and a round trip for twice that", async (t) => {
    const { up, down, rtt } = await measurePings(t, { delayMs: 50 }, 20);
    t.diagnostic(
      `50 ms one way: up median ${median(up).toFixed(1)} ms, down ${median(down).toFixed(1)} ms, rtt ${median(rtt).toFixed(1)} ms`,
    );
    for (const [name, values, want] of [
      ["up", up, 50],
      ["down", down, 50],
      ["rtt", rtt, 100],
    ] as const) {
      assert.ok(Math.min(...values) >= want - 1, `${name} never shorter than ${want} ms: ${values}`);
      assert.ok(median(values) <= want + LATE_MS / 3, `${name} median near ${want} ms: ${values}`);
      assert.ok(Math.max(...values) <= want + LATE_MS * 2, `${name} never far later: ${values}`);
    }
  });

  for (const jitter of ["uniform", "normal"] as const) {
    it(`keeps ${jitter} jitter within its bound and actually varies the delay`, async (t) => {
      const { up, down } = await measurePings(t, { delayMs: 30, jitterMs: 10, jitter, seed: 7 }, 40);
      for (const [name, values] of [
        ["up", up],
        ["down", down],
      ] as const) {
        assert.ok(Math.min(...values) >= 20 - 1, `${name} ≥ 30 − 10 ms: ${values}`);
        assert.ok(median(values) <= 40 + LATE_MS / 3, `${name} median ≤ 30 + 10 ms: ${values}`);
        assert.ok(Math.max(...values) - Math.min(...values) >= 5, `${name} delays spread: ${values}`);
      }
      t.diagnostic(`${jitter} 30±10 ms: up ${Math.min(...up).toFixed(1)}–${Math.max(...up).toFixed(1)} ms`);
    });
  }

  it("never reorders: a numbered stream of many small writes arrives whole and in order, both ways", async (t) => {
    const RECORDS = 40_000;
    const { server, port } = await listen((socket) => socket.pipe(socket)); // echo; ends when the client ends
    t.after(() => server.close());
    // Jitter larger than the delay: without the max rule, most neighbouring chunks would cross.
    const proxy = await proxyTo(t, port, { delayMs: 5, jitterMs: 20, seed: 1 });
    const client = await dial(proxy.port);
    const echoed: Buffer[] = [];
    client.on("data", (chunk: Buffer) => echoed.push(chunk));
    const ended = new Promise((resolve) => client.once("end", resolve));
    for (let i = 0; i < RECORDS; i++) {
      const record = Buffer.alloc(4);
      record.writeUInt32BE(i);
      client.write(record);
      if (i % 40 === 39) await new Promise((resolve) => setImmediate(resolve));
    }
    client.end();
    await ended;
    const all = Buffer.concat(echoed);
    assert.equal(all.length, RECORDS * 4, "every byte came back");
    for (let i = 0; i < RECORDS; i++) assert.equal(all.readUInt32BE(i * 4), i, `record ${i} in place`);
    const { delayedChunks } = proxy.stats();
    assert.ok(delayedChunks > 200, `the proxy held many separate chunks (${delayedChunks})`);
    t.diagnostic(`${RECORDS} records, ${delayedChunks} chunks held with crossing deadlines, all in order`);
  });

  it("caps each direction at the configured rate", async (t) => {
    const RATE = 400_000;
    const SIZE = 1_000_000;
    let serverGotAllAt = 0;
    const { server, port } = await listen((socket) => {
      let got = 0;
      socket.on("data", (chunk: Buffer) => {
        got += chunk.length;
        if (got < SIZE) return;
        serverGotAllAt = performance.now();
        socket.end(randomBytes(SIZE));
      });
    });
    t.after(() => server.close());
    const proxy = await proxyTo(t, port, { delayMs: 0, bandwidthBytesPerSecond: RATE });
    const client = await dial(proxy.port);
    const startedAt = performance.now();
    let received = 0;
    const downDone = new Promise<number>((resolve) => {
      client.on("data", (chunk: Buffer) => {
        received += chunk.length;
        if (received === SIZE) resolve(performance.now());
      });
    });
    client.write(randomBytes(SIZE));
    const downDoneAt = await downDone;
    client.destroy();
    // The bucket starts full: one burst (50 ms at the cap) leaves at once.
    const expected = ((SIZE - RATE * 0.05) / RATE) * 1000;
    for (const [name, ms] of [
      ["up", serverGotAllAt - startedAt],
      ["down", downDoneAt - serverGotAllAt],
    ] as const) {
      t.diagnostic(
        `${name}: ${SIZE} B at a ${RATE} B/s cap in ${ms.toFixed(0)} ms (${((SIZE / ms) * 1000).toFixed(0)} B/s)`,
      );
      assert.ok(
        ms >= expected * 0.95 && ms <= expected * 1.25,
        `${name} took ${ms} ms, the cap implies ~${expected} ms`,
      );
    }
  });

  it("bounds what it buffers when the receiver stops reading, and delivers everything once it reads", async (t) => {
    const MAX_QUEUE = 128 * 1024;
    const CHUNK = 64 * 1024;
    const TOTAL = 64 * 1024 * 1024;
    let receiver: Socket | undefined;
    const receivedHash = createHash("sha256");
    let received = 0;
    const { server, port } = await listen((socket) => {
      receiver = socket;
      socket.pause();
      socket.on("data", (chunk: Buffer) => {
        received += chunk.length;
        receivedHash.update(chunk);
      });
      socket.pause(); // adding a data listener resumed it
    });
    t.after(() => server.close());
    const proxy = await proxyTo(t, port, { delayMs: 5, maxQueueBytes: MAX_QUEUE });
    const client = await dial(proxy.port);
    const sentHash = createHash("sha256");
    let written = 0;
    let blocked = false;
    const writing = (async () => {
      while (written < TOTAL) {
        const chunk = Buffer.alloc(CHUNK, written / CHUNK);
        sentHash.update(chunk);
        written += CHUNK;
        if (!client.write(chunk)) {
          blocked = true;
          await new Promise((resolve) => client.once("drain", resolve));
          blocked = false;
        }
      }
      client.end();
    })();
    await waitFor("the sender blocked", async () => (blocked ? true : undefined), 10_000);
    await sleep(500);
    const stalledAt = written;
    await sleep(500);
    assert.equal(written, stalledAt, "nothing more accepted while the receiver does not read");
    assert.ok(written < TOTAL, "the sender was held back before the end");
    const { maxQueuedBytes } = proxy.stats();
    t.diagnostic(
      `stalled after ${(stalledAt / 2 ** 20).toFixed(1)} MiB written; proxy queue peaked at ${maxQueuedBytes} B`,
    );
    assert.ok(maxQueuedBytes <= MAX_QUEUE + CHUNK, `queue ${maxQueuedBytes} B ≤ ${MAX_QUEUE} + one read`);
    receiver?.resume();
    await writing;
    await waitFor("every byte delivered", async () => (received === TOTAL ? true : undefined), 60_000);
    assert.equal(receivedHash.digest("hex"), sentHash.digest("hex"), "bytes intact");
  });

  it("propagates a half-close each way after the data before it, then frees the connection", async (t) => {
    const { server, port } = await listen((socket) => {
      const got: Buffer[] = [];
      socket.on("data", (chunk: Buffer) => got.push(chunk));
      // The client's end arrives after its bytes; the server still answers on its open half.
      socket.on("end", () => socket.end(`reply to ${Buffer.concat(got).toString()}`));
    });
    t.after(() => server.close());
    const proxy = await proxyTo(t, port, { delayMs: 20 });
    const client = await dial(proxy.port);
    const reply: Buffer[] = [];
    client.on("data", (chunk: Buffer) => reply.push(chunk));
    const ended = new Promise((resolve) => client.once("end", resolve));
    client.end("hello");
    await ended;
    assert.equal(Buffer.concat(reply).toString(), "reply to hello");
    await waitFor("the proxy freed the connection", async () =>
      proxy.stats().openConnections === 0 ? true : undefined,
    );
    assert.equal(proxy.stats().pendingTimers, 0);
  });

  it("resets the client when the server resets, or when the target refuses", async (t) => {
    const { server, port } = await listen((socket) => {
      socket.once("data", () => socket.resetAndDestroy());
    });
    t.after(() => server.close());
    const proxy = await proxyTo(t, port, { delayMs: 10 });
    const closedWithError = (socket: Socket) =>
      new Promise<boolean>((resolve) => {
        socket.on("error", () => {});
        socket.once("close", resolve);
      });
    const client = await dial(proxy.port);
    const closed = closedWithError(client);
    client.write("x");
    assert.equal(await closed, true, "the server's reset reached the client as an error");

    const refusing = await listen(() => {});
    const refusedPort = refusing.port;
    await new Promise((resolve) => refusing.server.close(resolve));
    const toNowhere = await proxyTo(t, refusedPort, { delayMs: 10 });
    const lonely = await dial(toNowhere.port);
    assert.equal(await closedWithError(lonely), true, "a refused target reached the client as an error");
    for (const p of [proxy, toNowhere]) {
      await waitFor("connections freed", async () => (p.stats().openConnections === 0 ? true : undefined));
      assert.equal(p.stats().pendingTimers, 0);
    }
  });

  it("carries 200 concurrent connections, each its own bytes, and leaks nothing", async (t) => {
    const CONNECTIONS = 200;
    const SIZE = 20_000;
    const { server, port } = await listen((socket) => socket.pipe(socket));
    t.after(() => server.close());
    const proxy = await proxyTo(t, port, { delayMs: 20, jitterMs: 5 });
    const results = await Promise.all(
      Array.from({ length: CONNECTIONS }, async (_, i) => {
        const sent = Buffer.alloc(SIZE, `connection ${i};`);
        const client = await dial(proxy.port);
        const got: Buffer[] = [];
        client.on("data", (chunk: Buffer) => got.push(chunk));
        const ended = new Promise((resolve) => client.once("end", resolve));
        client.end(sent);
        await ended;
        return Buffer.concat(got).equals(sent);
      }),
    );
    assert.deepEqual(
      results.flatMap((ok, i) => (ok ? [] : [i])),
      [],
      "connections whose echo differed",
    );
    await waitFor("all connections freed", async () =>
      proxy.stats().openConnections === 0 ? true : undefined,
    );
    assert.deepEqual(proxy.stats(), {
      acceptedConnections: CONNECTIONS,
      openConnections: 0,
      pendingTimers: 0,
      maxQueuedBytes: proxy.stats().maxQueuedBytes,
      delayedChunks: proxy.stats().delayedChunks,
    });
  });

  it("runs as its own process from flags or JSON, prints listening, and stops on SIGTERM", async (t) => {
    const { server, port } = await listen((socket) => socket.pipe(socket));
    t.after(() => server.close());
    const { command, args, cwd } = delayProxyCommand({
      listenHost: HOST,
      listenPort: 0,
      targetHost: HOST,
      targetPort: port,
      delayMs: 1000, // the flag below wins
    });
    const child = spawn(command, [...args, "--delay-ms", "40"], { cwd, stdio: ["ignore", "pipe", "pipe"] });
    const proxy = await startDelayProxyProcess(child);
    after(() => proxy.stop());
    const client = await dial(proxy.port);
    const sentAt = performance.now();
    const echo = readBytes(client, 4);
    client.write("ping");
    assert.equal((await echo).toString(), "ping");
    const rtt = performance.now() - sentAt;
    client.destroy();
    t.diagnostic(`process proxy, 40 ms one way: rtt ${rtt.toFixed(1)} ms`);
    assert.ok(rtt >= 80 - 1 && rtt <= 80 + LATE_MS * 2, `rtt ${rtt} ms ≈ 80 ms`);
    await proxy.stop();
    assert.equal(child.exitCode, 0, "clean exit on SIGTERM");
  });

  it("reshapes a running process proxy over stdin: an open connection gets the new delay, bytes in order", async (t) => {
    const { server, port } = await listen((socket) => socket.pipe(socket));
    t.after(() => server.close());
    const { command, args, cwd } = delayProxyCommand({
      listenHost: HOST,
      listenPort: 0,
      targetHost: HOST,
      targetPort: port,
      delayMs: 10,
    });
    const proxy = await startDelayProxyProcess(
      spawn(command, args, { cwd, stdio: ["pipe", "pipe", "pipe"] }),
    );
    after(() => proxy.stop());
    const client = await dial(proxy.port);
    const roundTrip = async (text: string) => {
      const sentAt = performance.now();
      const echo = readBytes(client, text.length);
      client.write(text);
      assert.equal((await echo).toString(), text);
      return performance.now() - sentAt;
    };
    const before = await roundTrip("a");
    await proxy.reshape({ delayMs: 60 });
    const slower = await roundTrip("b");
    await proxy.reshape({ delayMs: 0 });
    // Written right after the change back to 0 ms, behind nothing: fast again.
    const faster = await roundTrip("c");
    await assert.rejects(proxy.reshape({ delayMs: -1 }), /delayMs must be a number ≥ 0/);
    client.destroy();
    t.diagnostic(`rtt ${before.toFixed(1)} → ${slower.toFixed(1)} → ${faster.toFixed(1)} ms`);
    assert.ok(before >= 20 - 1 && before <= 20 + LATE_MS * 2, `rtt ${before} ms ≈ 20 ms`);
    assert.ok(slower >= 120 - 1 && slower <= 120 + LATE_MS * 2, `rtt ${slower} ms ≈ 120 ms after the change`);
    assert.ok(faster <= LATE_MS * 2, `rtt ${faster} ms ≈ 0 after the change back`);
  });
});
