import { Socket } from "node:net";
import type { MultiaddrConnection, Transport, Upgrader } from "@libp2p/interface";
import { type TCPComponents, type TCPOptions, tcp } from "@libp2p/tcp";

/**
 * `@libp2p/tcp` whose connections hand each outgoing message to the kernel in one system call.
 *
 * Why: @libp2p/tcp 11 writes every buffer of a message with its own `socket.write`, and noise
 * hands it two buffers per frame (the 2-byte length, then the ciphertext). With Nagle off (libp2p's
 * default) that is two syscalls and two TCP segments for every gossip message, vote and yamux
 * window update. Corking the socket around the write makes it one writev: a validator across the
 * WAN test spent 18 % of its busy time in socket writes, and on a link with jitter a message
 * split in two segments arrives with the later of two delays (docs/performance.md, "First stop of
 * 2026-11-27"). Nothing is held back: the socket is uncorked before the call returns.
 *
 * How: libp2p gives every new connection to the upgrader (`options.upgrader` of `dial` and
 * `createListener`), so the transport is wrapped to pass an upgrader that corks the raw
 * connection's `sendData` first. If a later @libp2p/tcp names these differently, connections keep
 * the library's own writes (test/unit/p2p/corkedTcp.test.ts checks one write per frame).
 */
export function corkedTcp(init?: TCPOptions): (components: TCPComponents) => Transport {
  const make = tcp(init);
  return (components) => {
    const transport = make(components);
    const dial = transport.dial.bind(transport);
    const createListener = transport.createListener.bind(transport);
    transport.dial = (ma, options) => dial(ma, { ...options, upgrader: corkingUpgrader(options.upgrader) });
    transport.createListener = (options) =>
      createListener({ ...options, upgrader: corkingUpgrader(options.upgrader) });
    return transport;
  };
}

function corkingUpgrader(upgrader: Upgrader): Upgrader {
  return {
    upgradeOutbound: ((maConn: MultiaddrConnection, opts: Parameters<Upgrader["upgradeOutbound"]>[1]) =>
      upgrader.upgradeOutbound(corkWrites(maConn), opts)) as Upgrader["upgradeOutbound"],
    upgradeInbound: ((maConn: MultiaddrConnection, opts: Parameters<Upgrader["upgradeInbound"]>[1]) =>
      upgrader.upgradeInbound(corkWrites(maConn), opts)) as Upgrader["upgradeInbound"],
    createInboundAbortSignal: (signal) => upgrader.createInboundAbortSignal(signal),
    getStreamMuxers: () => upgrader.getStreamMuxers(),
    getConnectionEncrypters: () => upgrader.getConnectionEncrypters(),
  };
}

/** What @libp2p/tcp's connection has beyond the interface: its socket, and the write it makes. */
interface RawTcpConnection {
  socket?: unknown;
  sendData?: unknown;
}

/** Makes `maConn` write each message corked (one writev); returns it. */
function corkWrites(maConn: MultiaddrConnection): MultiaddrConnection {
  const raw = maConn as unknown as RawTcpConnection;
  const { socket, sendData } = raw;
  if (!(socket instanceof Socket) || typeof sendData !== "function") return maConn;
  raw.sendData = (data: unknown) => {
    socket.cork();
    try {
      return sendData.call(maConn, data);
    } finally {
      socket.uncork();
    }
  };
  return maConn;
}
