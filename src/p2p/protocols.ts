import type { GossipTopic, PeerStatus } from "./types.ts";

/**
 * Protocol ids and wire limits. A version bump in an id is a breaking wire change: old and new
 * nodes then simply do not speak that protocol to each other.
 */
export const STATUS_PROTOCOL = "/chain-node/status/1.0.0";
export const BLOCKS_BY_RANGE_PROTOCOL = "/chain-node/blocks/1.0.0";
export const PEERS_PROTOCOL = "/chain-node/peers/1.0.0";
export const SNAPSHOTS_PROTOCOL = "/chain-node/snapshots/1.0.0";

/** A status is ~200 bytes of JSON; anything near this bound is garbage. */
export const MAX_STATUS_BYTES = 1024;
/** `{"from":…,"to":…}`. */
export const MAX_BLOCKS_REQUEST_BYTES = 256;
/** The peers request carries nothing (`{}`). */
export const MAX_PEERS_REQUEST_BYTES = 64;
/** A peers answer: at most this many multiaddrs … */
export const MAX_PEER_ADDRS = 256;
/** … of at most this many characters each … */
export const MAX_PEER_ADDR_CHARS = 256;
/** … in at most this many bytes. */
export const MAX_PEERS_RESPONSE_BYTES = 64 * 1024;

/** `{"kind":"chunk","height":…,"index":…}` is under 80 bytes. */
export const MAX_SNAPSHOT_REQUEST_BYTES = 256;
/** A snapshots list: at most this many items … (a node keeps a handful: `[snapshot] keep`) */
export const MAX_SNAPSHOT_LIST_ITEMS = 256;
/** … in at most this many bytes of JSON (an item `{height, manifest_hash}` is ~100 bytes). */
export const MAX_SNAPSHOT_LIST_BYTES = 64 * 1024;
/**
 * A manifest, bytes. It grows with the chunk count (~150 B per 1 MiB chunk), the validator-set
 * history and the genesis (decision 010): 4 MiB is a state of ~20 GiB with room for the rest.
 */
export const MAX_SNAPSHOT_MANIFEST_BYTES = 4 * 1024 * 1024;
/** A chunk, bytes: what a snapshot reader takes (decision 010; chunks aim at 1 MiB). */
export const MAX_SNAPSHOT_CHUNK_BYTES = 16 * 1024 * 1024;

/** Concurrent inbound streams per connection and protocol (libp2p resets streams beyond it). */
export const MAX_INBOUND_STREAMS = {
  status: 4,
  blocks: 4,
  peers: 2,
  snapshots: 2,
} as const;

/**
 * The gossipsub topic of `topic` for this chain: `/chain-node/<chain_id>/<network_id>/<genesis
 * prefix>/<topic>`. Naming the chain and its genesis in the topic means a node of another chain
 * never shares a topic with us, so gossip cannot cross chains even before the status handshake
 * has refused the peer.
 */
export function topicName(topic: GossipTopic, status: PeerStatus): string {
  const genesis = status.genesis_hash.toLowerCase().replace(/^0x/, "").slice(0, 16);
  return `/chain-node/${status.chain_id}/${status.network_id}/${genesis}/${topic}`;
}
