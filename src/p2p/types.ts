/** The three gossip topics. The wire topic name adds the chain (see `topicName` in protocols.ts). */
export type GossipTopic = "txs" | "proposals" | "votes";

export const GOSSIP_TOPICS: readonly GossipTopic[] = ["txs", "proposals", "votes"];

/**
 * What the caller decided about a gossip message. "accept" delivers and forwards it; "ignore" drops
 * it without blame (e.g. already known, too old); "reject" drops it, is not forwarded, and the peer
 * that sent it is penalized (disconnected and banned for a cool-down).
 */
export type Verdict = "accept" | "reject" | "ignore";

/** A node's view of its chain, exchanged in the status handshake and refreshed periodically. */
export interface PeerStatus {
  chain_id: number;
  network_id: number;
  /** `0x` + 64 lowercase hex: the hash of block 0. */
  genesis_hash: string;
  head_number: number;
  /** `0x` + 64 hex: the hash of block `head_number`. */
  head_hash: string;
}

/** What the p2p layer asks of the node. Payloads are opaque JSON: the caller validates them. */
export interface P2pHandlers {
  /** Our status, sent in the handshake and on refresh. Called often; must be cheap and not throw. */
  status(): PeerStatus;
  /**
   * A gossip message from a peer (already JSON-parsed, size-checked, from a handshaken peer).
   * "reject" scores the sender down (and is a gossipsub Reject so it is not forwarded); "ignore"
   * drops without penalty; only "accept" is forwarded. May be async: keep it well under 100 ms,
   * since forwarding waits for it. A throw counts as "ignore" (and is logged as an error).
   */
  onGossip(topic: GossipTopic, payload: unknown, from: string): Verdict | Promise<Verdict>;
  /**
   * Serves a blocks-by-range request for `from..to` inclusive (`from <= to`, already clipped to
   * `maxBlocksPerRequest`). Returns the items in order (opaque JSON), possibly fewer (none when
   * the range is beyond the head). The layer takes items until the next would exceed
   * `maxMessageBytes` and takes no more, so a lazy iterable (a generator) reads no block the
   * answer leaves out.
   */
  serveBlocks(from: number, to: number): Iterable<unknown> | Promise<Iterable<unknown>>;
  /**
   * Serves the snapshots protocol to handshaken peers (snapshotProtocol.ts); absent, every request
   * is answered with an empty list or "none". Each call runs under the stream's deadline
   * (`requestTimeoutMs`): read from disk asynchronously, never block the event loop. A throw, or an
   * answer that is not what is declared here, is our fault: logged, and the peer's stream reset.
   */
  serveSnapshots?: {
    /**
     * The snapshots we offer, opaque JSON items (the node's are `{height, manifest_hash}`). A list
     * over MAX_SNAPSHOT_LIST_ITEMS items or MAX_SNAPSHOT_LIST_BYTES of JSON is not sent (logged;
     * the peer gets an empty list).
     */
    list(): unknown[] | Promise<unknown[]>;
    /**
     * The manifest's bytes of the snapshot at `height` (a non-negative safe integer), `undefined`
     * when we have none there. Over MAX_SNAPSHOT_MANIFEST_BYTES it is not sent (logged; "none").
     */
    manifest(height: number): Uint8Array | undefined | Promise<Uint8Array | undefined>;
    /**
     * Chunk `index` of the snapshot at `height` (both non-negative safe integers), `undefined`
     * when we have no such snapshot or chunk. Over MAX_SNAPSHOT_CHUNK_BYTES it is not sent
     * (logged; "none").
     */
    chunk(height: number, index: number): Uint8Array | undefined | Promise<Uint8Array | undefined>;
  };
}

/**
 * Which peers we may talk to, decided outside p2p (the node's test partition, for one). A peer it
 * does not allow is refused both ways by the connection gater and its gossip is dropped; that is
 * not an offence (no ban), and once allowed again a static peer is redialed as usual.
 */
export interface PeerFilter {
  /** Asked on every dial, connection and gossip message: must be cheap and must not throw. */
  allows(peerId: string): boolean;
  /**
   * Registers `listener`, to be called after `allows` may have changed its answers; p2p then
   * closes its connections to the peers no longer allowed. Returns the function that removes it.
   */
  onChange(listener: () => void): () => void;
}

/** A handshaken peer and the latest status it sent. */
export interface PeerInfo {
  id: string;
  status: PeerStatus;
}
