import type { Logger } from "pino";

export interface P2POptions {
  /** Listen host: an IPv4 or IPv6 literal, or "localhost" (= 127.0.0.1). */
  host: string;
  /** Listen TCP port; 0 = any free port (see `listenAddrs()`). */
  port: number;
  /** The node identity: a libp2p protobuf-encoded private key (see `generateNodeKey`). */
  nodeKey: Uint8Array;
  /** Static peers, full multiaddrs ending in `/p2p/<peerId>`; dialed at start and redialed when they drop. */
  bootstrap: string[];
  /** Handshaken peers at most; discovery stops dialing there and extra handshakes are refused. */
  maxPeers: number;
  /** Largest gossip payload or request/response body, bytes (DESIGN.md §9). */
  maxMessageBytes: number;
  /** Blocks served per blocks-by-range request at most (longer ranges are clipped). */
  maxBlocksPerRequest: number;
  /** How often each peer is asked for its status, ms. */
  statusIntervalMs: number;
  /** Every request (handshake, blocks, peers) and every served stream must finish within this, ms. */
  requestTimeoutMs?: number;
  /** How long a penalized or incompatible peer is refused, ms (doubles on each repeat offence, up to 32×). */
  penaltyCooldownMs?: number;
  logger: Logger;
}

/** Defaults for everything but the identity, the logger and the port (the node picks those). */
export const defaultP2POptions = {
  host: "127.0.0.1",
  bootstrap: [] as string[],
  maxPeers: 50,
  maxMessageBytes: 10 * 1024 * 1024,
  maxBlocksPerRequest: 100,
  statusIntervalMs: 2000,
  requestTimeoutMs: 10_000,
  penaltyCooldownMs: 60_000,
} satisfies Partial<P2POptions>;

/** The options with every optional member filled in. */
export type ResolvedP2POptions = Required<P2POptions>;
