import { connect, createServer, type Socket } from "node:net";
import { DelayedDirection, type JitterDistribution, type LinkShape } from "./delayedDirection.ts";
import { seededRandom } from "./seededRandom.ts";

/**
 * A TCP forwarding proxy for tests: listen host:port → target host:port, every byte held for a
 * one-way delay plus jitter in each direction (delayedDirection.ts: one queue and one timer per
 * direction, so bytes never reorder), with an optional rate cap per direction. This kernel has no
 * `netem`; for a rate cap alone, `tc qdisc add dev veth0 root tbf …` inside a namespaced host
 * (netns.ts) is the alternative, at the kernel's level (docs/testing-hosts.md).
 *
 * Closing propagates: a half-close is delayed like data and then half-closes the other side; an
 * error or reset on either side resets the other at once (no delay: a reset carries no data) and
 * drops what was queued. Runs in this process (`startDelayProxy`) or as its own process inside a
 * namespace (delayProxyMain.ts, started by delayProxyProcess.ts).
 */

/** Everything a proxy takes; JSON as it is (the main's `--config`). */
export interface DelayProxyOptions {
  listenHost: string;
  /** 0 for any free port (the proxy reports the one it got). */
  listenPort: number;
  targetHost: string;
  targetPort: number;
  delayMs: number;
  jitterMs?: number;
  jitter?: JitterDistribution;
  /** Per direction; 0 or absent for none. */
  bandwidthBytesPerSecond?: number;
  /** Default: 50 ms at the cap, at least 4 KiB. */
  burstBytes?: number;
  /** Per direction per connection; default 1 MiB. */
  maxQueueBytes?: number;
  /** Makes the jitter repeatable. */
  seed?: number;
}

export interface DelayProxyStats {
  acceptedConnections: number;
  openConnections: number;
  /** Timers pending over all open connections (0 when idle: no leak). */
  pendingTimers: number;
  /** The most bytes ever queued in one direction of one connection. */
  maxQueuedBytes: number;
  /** Chunks read and held, over all connections and both directions. */
  delayedChunks: number;
}

/** What `reshape` may change on a running proxy. */
export type LinkChange = Partial<
  Pick<DelayProxyOptions, "delayMs" | "jitterMs" | "jitter" | "bandwidthBytesPerSecond" | "burstBytes">
>;

export interface DelayProxy {
  port: number;
  stats(): DelayProxyStats;
  /**
   * Changes the link's shape for every chunk read from now on, on open connections too (a WAN
   * bench goes from 0 to 50 to 150 ms without reconnecting). Bytes never reorder: a chunk is
   * released no earlier than the one before it, whatever its own deadline.
   */
  reshape(change: LinkChange): void;
  /** Stops listening, resets every open connection, clears every timer. */
  close(): Promise<void>;
}

const DEFAULT_MAX_QUEUE_BYTES = 1 << 20;
const MIN_BURST_BYTES = 4096;

export function linkShapeOf(options: DelayProxyOptions): LinkShape {
  const bandwidth = options.bandwidthBytesPerSecond ?? 0;
  const shape: LinkShape = {
    delayMs: options.delayMs,
    jitterMs: options.jitterMs ?? 0,
    jitter: options.jitter ?? "uniform",
    bandwidthBytesPerSecond: bandwidth,
    burstBytes: options.burstBytes ?? Math.max(MIN_BURST_BYTES, Math.round(bandwidth * 0.05)),
    maxQueueBytes: options.maxQueueBytes ?? DEFAULT_MAX_QUEUE_BYTES,
  };
  for (const [key, value] of Object.entries(shape)) {
    if (typeof value === "number" && !(Number.isFinite(value) && value >= 0)) {
      throw new Error(`delay proxy: ${key} must be a number ≥ 0, got ${value}`);
    }
  }
  if (shape.jitter !== "uniform" && shape.jitter !== "normal") {
    throw new Error(`delay proxy: jitter must be "uniform" or "normal", got ${String(shape.jitter)}`);
  }
  if (shape.burstBytes < 1 || shape.maxQueueBytes < 1)
    throw new Error("delay proxy: burst and queue must be ≥ 1 byte");
  return shape;
}

/** Resets `socket` (RST, so the peer sees an error, not a clean end); destroys it if it cannot. */
function reset(socket: Socket): void {
  if (socket.destroyed) return;
  try {
    socket.resetAndDestroy();
  } catch {
    socket.destroy();
  }
}

export function startDelayProxy(options: DelayProxyOptions): Promise<DelayProxy> {
  let current: DelayProxyOptions = { ...options };
  // One object every direction reads on each chunk: reshape() changes it in place.
  const shape = linkShapeOf(current);
  const random = options.seed === undefined ? Math.random : seededRandom(options.seed);
  const open = new Set<{ directions: DelayedDirection[]; sockets: Socket[] }>();
  let accepted = 0;
  let maxQueuedBytes = 0;
  let delayedChunks = 0;
  const observer = {
    queuedBytes(bytes: number) {
      delayedChunks++;
      maxQueuedBytes = Math.max(maxQueuedBytes, bytes);
    },
  };

  const server = createServer({ allowHalfOpen: true, noDelay: true }, (client) => {
    accepted++;
    const upstream = connect({
      host: options.targetHost,
      port: options.targetPort,
      allowHalfOpen: true,
      noDelay: true,
    });
    const connection = {
      directions: [
        new DelayedDirection(client, upstream, shape, random, observer),
        new DelayedDirection(upstream, client, shape, random, observer),
      ],
      sockets: [client, upstream],
    };
    open.add(connection);
    let closed = 0;
    const finish = (failed: boolean): void => {
      if (!open.delete(connection)) return;
      for (const direction of connection.directions) direction.stop();
      for (const socket of connection.sockets) (failed ? reset : (s: Socket) => s.destroy())(socket);
    };
    for (const socket of connection.sockets) {
      socket.on("error", () => finish(true));
      // A clean close of both (each end sent and received) ends the connection.
      socket.on("close", (hadError) => {
        if (hadError) finish(true);
        else if (++closed === 2) finish(false);
      });
    }
  });

  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.listenPort, options.listenHost, () => {
      server.removeListener("error", reject);
      const address = server.address();
      resolve({
        port: typeof address === "object" && address !== null ? address.port : options.listenPort,
        stats: () => ({
          acceptedConnections: accepted,
          openConnections: open.size,
          pendingTimers: [...open].flatMap((c) => c.directions).filter((d) => d.hasTimer).length,
          maxQueuedBytes,
          delayedChunks,
        }),
        reshape: (change) => {
          const next = { ...current, ...change };
          Object.assign(shape, linkShapeOf(next));
          current = next;
        },
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            for (const connection of [...open]) {
              open.delete(connection);
              for (const direction of connection.directions) direction.stop();
              for (const socket of connection.sockets) reset(socket);
            }
          }),
      });
    });
  });
}
