import { isIPv4, isIPv6 } from "node:net";
import { noise } from "@chainsafe/libp2p-noise";
import { yamux } from "@chainsafe/libp2p-yamux";
import { type GossipSub, gossipsub } from "@libp2p/gossipsub";
import { type Identify, identify } from "@libp2p/identify";
import type { Libp2p, PrivateKey } from "@libp2p/interface";
import { type Ping, ping } from "@libp2p/ping";
import { createLibp2p } from "libp2p";
import { announceFilter } from "./addresses.ts";
import { corkedTcp } from "./corkedTcp.ts";
import { P2pError } from "./errors.ts";
import { gossipOptions } from "./gossip.ts";

/** The libp2p node with the services we use. */
export type Libp2pNode = Libp2p<{ identify: Identify; ping: Ping; pubsub: GossipSub }>;

/**
 * The libp2p node while the network runs, else `undefined`. Every part asks before any I/O, so
 * that nothing is sent, dialed or penalized while the network starts or stops.
 */
export type LiveNode = () => Libp2pNode | undefined;

/** Connections above `maxPeers` that libp2p tolerates: room for peers still in the handshake. */
const EXTRA_CONNECTIONS = 4;

export interface Libp2pNodeConfig {
  privateKey: PrivateKey;
  /** From `listenMultiaddr`. */
  listenAddr: string;
  /** What identify tells peers to dial (see addresses.ts): announce addresses, or filtered listen ones. */
  announce: readonly string[];
  listenHost: string;
  /** Our gossip topic names (the only ones gossipsub tracks). */
  topics: readonly string[];
  maxPeers: number;
  maxMessageBytes: number;
  requestTimeoutMs: number;
  /** Peers the connection gater refuses both ways, asked on every dial and connection. */
  isRefused(peerId: string): boolean;
}

/** Builds the node (not started): TCP, noise, yamux, identify, ping and gossipsub. */
export function createLibp2pNode(config: Libp2pNodeConfig): Promise<Libp2pNode> {
  const { maxPeers, requestTimeoutMs, isRefused } = config;
  return createLibp2p({
    start: false,
    privateKey: config.privateKey,
    addresses: {
      listen: [config.listenAddr],
      announce: [...config.announce],
      announceFilter: announceFilter(config.announce, config.listenHost),
    },
    transports: [corkedTcp()],
    connectionEncrypters: [noise()],
    streamMuxers: [yamux()],
    connectionGater: {
      denyDialPeer: (peerId) => isRefused(peerId.toString()),
      denyInboundEncryptedConnection: (peerId) => isRefused(peerId.toString()),
      denyOutboundEncryptedConnection: (peerId) => isRefused(peerId.toString()),
    },
    connectionManager: {
      maxConnections: maxPeers + EXTRA_CONNECTIONS,
      // libp2p refuses more than 5 inbound connections per second from one host by default;
      // every node of a local testnet is the same host (127.0.0.1).
      inboundConnectionThreshold: Math.max(5, maxPeers),
      dialTimeout: requestTimeoutMs,
    },
    services: {
      identify: identify(),
      ping: ping(),
      pubsub: gossipsub(gossipOptions(config.topics, config.maxMessageBytes)),
    },
  });
}

/** The TCP listen multiaddr of an IP literal or "localhost"; throws `P2pError("invalid_argument")`. */
export function listenMultiaddr(host: string, port: number): string {
  const ip = host === "localhost" ? "127.0.0.1" : host;
  if (isIPv4(ip)) return `/ip4/${ip}/tcp/${port}`;
  if (isIPv6(ip)) return `/ip6/${ip}/tcp/${port}`;
  throw new P2pError(
    "invalid_argument",
    `p2p host must be an IP address or "localhost", got ${JSON.stringify(host)}`,
  );
}
