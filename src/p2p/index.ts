/**
 * p2p: the peer-to-peer network — libp2p 3 over TCP (noise, yamux, identify, ping), the status
 * handshake that admits only peers of our chain id, network id and genesis, gossipsub topics for
 * transactions, proposals and votes, blocks by range, peer exchange, state snapshots (manifests and
 * chunks as raw bytes), and bans for misbehaviour.
 *
 * Owns: connections, wire formats and limits, peer scoring. Does not own: what a payload means.
 * Gossip payloads and blocks are opaque JSON here; the node validates them through P2pHandlers
 * and answers with a verdict. Imports nothing from chain, consensus, node, storage or rpc.
 */
export { P2pError, type P2pErrorReason } from "./errors.ts";
export { P2pNetwork } from "./network.ts";
export { generateNodeKey, peerIdOf } from "./nodeKey.ts";
export { checkAnnounceAddrs, isLocalOnlyIp } from "./addresses.ts";
export { listenMultiaddr } from "./libp2pNode.ts";
export { defaultP2pOptions, type P2pOptions } from "./options.ts";
export {
  BLOCKS_BY_RANGE_PROTOCOL,
  SNAPSHOTS_PROTOCOL,
  STATUS_PROTOCOL,
  topicName,
} from "./protocols.ts";
export {
  GOSSIP_TOPICS,
  type GossipTopic,
  type P2pHandlers,
  type PeerFilter,
  type PeerInfo,
  type PeerStatus,
  type Verdict,
} from "./types.ts";
