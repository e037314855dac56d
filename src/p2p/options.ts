import type { Logger } from "pino";
import { checkAnnounceAddrs } from "./addresses.ts";
import { P2pError } from "./errors.ts";
import type { PeerFilter } from "./types.ts";

export interface P2pOptions {
  /** Listen host: an IPv4 or IPv6 literal, or "localhost" (= 127.0.0.1). */
  host: string;
  /** Listen TCP port; 0 = any free port (see `listenAddrs()`). */
  port: number;
  /** The node identity: a libp2p protobuf-encoded private key (see `generateNodeKey`). */
  nodeKey: Uint8Array;
  /** Static peers, full multiaddrs ending in `/p2p/<peerId>`; dialed at start and redialed when they drop. */
  bootstrap: string[];
  /**
   * What identify and peer exchange tell other nodes to dial: multiaddrs without `/p2p` (the peer
   * id is added). Empty: the listen addresses, less loopback and unspecified ones unless the node
   * listens on loopback itself (a local testnet), so a node behind `0.0.0.0` never hands a remote
   * peer an address that only works on its own machine.
   */
  announce?: string[];
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
  /** Peers we may talk to (default: all). Changes close connections to peers no longer allowed. */
  peerFilter?: PeerFilter;
  logger: Logger;
}

/** Defaults for everything but the identity, the logger and the port (the node picks those). */
export const defaultP2pOptions = {
  host: "127.0.0.1",
  bootstrap: [] as string[],
  maxPeers: 50,
  maxMessageBytes: 10 * 1024 * 1024,
  maxBlocksPerRequest: 100,
  statusIntervalMs: 2000,
  requestTimeoutMs: 10_000,
  penaltyCooldownMs: 60_000,
} satisfies Partial<P2pOptions>;

/** The options with every optional member filled in (but the filter: none allows every peer). */
export type ResolvedP2pOptions = Required<Omit<P2pOptions, "peerFilter">> & Pick<P2pOptions, "peerFilter">;

/** Fills in the defaults and checks every bound; throws `P2pError("invalid_argument")`. */
export function resolveP2pOptions(options: P2pOptions): ResolvedP2pOptions {
  const resolved = {
    ...options,
    requestTimeoutMs: options.requestTimeoutMs ?? defaultP2pOptions.requestTimeoutMs,
    penaltyCooldownMs: options.penaltyCooldownMs ?? defaultP2pOptions.penaltyCooldownMs,
    announce: checkAnnounceAddrs(options.announce ?? []),
  };
  validateOptions(resolved);
  return resolved;
}

function validateOptions(options: ResolvedP2pOptions): void {
  const checks: [boolean, string][] = [
    [Number.isInteger(options.port) && options.port >= 0 && options.port <= 65535, "port must be 0..65535"],
    [Number.isSafeInteger(options.maxPeers) && options.maxPeers >= 1, "maxPeers must be a positive integer"],
    [
      Number.isSafeInteger(options.maxMessageBytes) && options.maxMessageBytes >= 1024,
      "maxMessageBytes must be an integer >= 1024",
    ],
    [
      Number.isSafeInteger(options.maxBlocksPerRequest) && options.maxBlocksPerRequest >= 1,
      "maxBlocksPerRequest must be a positive integer",
    ],
    [options.statusIntervalMs >= 10, "statusIntervalMs must be >= 10"],
    [options.requestTimeoutMs >= 10, "requestTimeoutMs must be >= 10"],
    [options.penaltyCooldownMs >= 0, "penaltyCooldownMs must be >= 0"],
    [Array.isArray(options.bootstrap), "bootstrap must be an array of multiaddrs"],
  ];
  for (const [ok, message] of checks) if (!ok) throw new P2pError("invalid_argument", message);
}
