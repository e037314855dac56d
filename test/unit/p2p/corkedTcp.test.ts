import assert from "node:assert/strict";
import type { Socket } from "node:net";
import { after, describe, it } from "node:test";
import type {
  ComponentLogger,
  Connection,
  Listener,
  MultiaddrConnection,
  Transport,
  Upgrader,
} from "@libp2p/interface";
import { tcp } from "@libp2p/tcp";
import { multiaddr } from "@multiformats/multiaddr";
import { corkedTcp } from "../../../src/p2p/corkedTcp.ts";

/**
 * src/p2p/corkedTcp.ts against the real @libp2p/tcp: a message of two buffers (as noise hands
 * over every frame: its length, then the ciphertext) reaches the socket as one writev through the
 * corked transport, and as two writes through the plain one. The second case pins the library
 * behaviour the wrapper exists for: if a new @libp2p/tcp writes once by itself, it fails, and the
 * wrapper can go.
 */

const silent = Object.assign(() => {}, { enabled: false, error: () => {}, trace: () => {} });
const log = Object.assign(silent, { newScope: () => log });
const logger = { forComponent: () => log } as unknown as ComponentLogger;

/** An upgrader that keeps the raw connections it is given (libp2p's would encrypt and multiplex them). */
function keepingUpgrader(kept: MultiaddrConnection[]): Upgrader {
  return {
    upgradeOutbound: (async (maConn: MultiaddrConnection) => {
      kept.push(maConn);
      return {} as Connection;
    }) as Upgrader["upgradeOutbound"],
    upgradeInbound: (async (maConn: MultiaddrConnection) => {
      kept.push(maConn);
    }) as Upgrader["upgradeInbound"],
    createInboundAbortSignal: (signal) => Object.assign(signal, { clear: () => {} }),
    getStreamMuxers: () => new Map(),
    getConnectionEncrypters: () => new Map(),
  };
}

interface Pair {
  outbound: MultiaddrConnection;
  inbound: MultiaddrConnection;
  listener: Listener;
}

async function connect(make: (components: { logger: ComponentLogger }) => Transport): Promise<Pair> {
  const transport = make({ logger });
  const inbound: MultiaddrConnection[] = [];
  const outbound: MultiaddrConnection[] = [];
  const listener = transport.createListener({ upgrader: keepingUpgrader(inbound) });
  await listener.listen(multiaddr("/ip4/127.0.0.1/tcp/0"));
  const [address] = listener.getAddrs();
  assert.ok(address !== undefined);
  await transport.dial(address, { upgrader: keepingUpgrader(outbound), signal: AbortSignal.timeout(5_000) });
  for (let i = 0; i < 100 && inbound.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
  const [a, b] = [outbound[0], inbound[0]];
  assert.ok(a !== undefined && b !== undefined, "both ends of the connection were upgraded");
  return { outbound: a, inbound: b, listener };
}

/** Sends two buffers as one message on `pair`; the socket calls it took, and what the other end read. */
async function sendTwoBuffers(pair: Pair): Promise<{ writes: number; writevs: number; received: string }> {
  const socket = (pair.outbound as unknown as { socket: Socket }).socket;
  const internals = socket as unknown as Record<"_write" | "_writev", (...args: unknown[]) => unknown>;
  const counts = { writes: 0, writevs: 0 };
  const write = internals._write.bind(socket);
  const writev = internals._writev.bind(socket);
  internals._write = (...args) => {
    counts.writes++;
    return write(...args);
  };
  internals._writev = (...args) => {
    counts.writevs++;
    return writev(...args);
  };
  const chunks: Buffer[] = [];
  pair.inbound.addEventListener("message", (event) => {
    chunks.push(Buffer.from(event.data.subarray()));
  });
  const send = (pair.outbound as unknown as { sendData(data: Uint8Array[]): unknown }).sendData.bind(
    pair.outbound,
  );
  send([Buffer.from("\u0000\u0005"), Buffer.from("hello")]);
  for (let i = 0; i < 100 && Buffer.concat(chunks).length < 7; i++)
    await new Promise((r) => setTimeout(r, 10));
  return { ...counts, received: Buffer.concat(chunks).subarray(2).toString() };
}

describe("corkedTcp", () => {
  const pairs: Pair[] = [];
  after(async () => {
    for (const { outbound, inbound, listener } of pairs) {
      outbound.abort(new Error("test over"));
      inbound.abort(new Error("test over"));
      await listener.close();
    }
  });

  const cases = [
    {
      name: "writes a message of two buffers with one writev",
      make: corkedTcp(),
      calls: { writes: 0, writevs: 1 },
    },
    {
      name: "needs to: @libp2p/tcp alone writes the same message with two writes",
      make: tcp(),
      calls: { writes: 2, writevs: 0 },
    },
  ];
  for (const { name, make, calls } of cases) {
    it(name, async () => {
      const pair = await connect(make);
      pairs.push(pair);
      const { writes, writevs, received } = await sendTwoBuffers(pair);
      assert.equal(received, "hello");
      assert.deepEqual({ writes, writevs }, calls);
    });
  }
});
