import type { Connection, Stream } from "@libp2p/interface";
import type { Multiaddr } from "@multiformats/multiaddr";
import type { Logger } from "pino";
import { parsePeersResponse, peerIdInAddr } from "./discovery.ts";
import { addrsForRequester } from "./addresses.ts";
import { P2pError, toP2pError } from "./errors.ts";
import { encodeJson } from "./framing.ts";
import type { LiveNode } from "./libp2pNode.ts";
import type { PeerEntry, PeerManager } from "./peerManager.ts";
import {
  MAX_PEER_ADDR_CHARS,
  MAX_PEER_ADDRS,
  MAX_PEERS_REQUEST_BYTES,
  MAX_PEERS_RESPONSE_BYTES,
  PEERS_PROTOCOL,
} from "./protocols.ts";
import { chargePeer, type RequestResponse } from "./requestResponse.ts";

/** Addresses given per peer in a peers answer. */
const ADDRS_PER_PEER = 4;

/**
 * Peer exchange, both ends: `{}` asks a handshaken peer for its peers; the answer is a bounded
 * list of multiaddrs ending in `/p2p/<id>` (see parsePeersResponse). Which of them to dial is
 * discovery's call (discoveryLoop.ts).
 */
export class PeerExchangeProtocol {
  private readonly live: LiveNode;
  private readonly reqResp: RequestResponse;
  private readonly peers: PeerManager;
  private readonly log: Logger;

  constructor(parts: { live: LiveNode; reqResp: RequestResponse; peers: PeerManager; log: Logger }) {
    this.live = parts.live;
    this.reqResp = parts.reqResp;
    this.peers = parts.peers;
    this.log = parts.log;
  }

  /**
   * The peer's peers as multiaddr strings, or `undefined` when the request failed: garbage is
   * penalized, a timeout counted as silence (PeerManager.lateAnswer), anything else logged.
   */
  async request(entry: PeerEntry): Promise<string[] | undefined> {
    entry.peersAskedAt = Date.now();
    try {
      const answer = await this.reqResp.request(
        entry,
        PEERS_PROTOCOL,
        encodeJson({}),
        MAX_PEERS_RESPONSE_BYTES,
      );
      const entries = parsePeersResponse(answer);
      if (entries === undefined) throw new P2pError("bad_message", "malformed peers answer");
      entry.silentRequests = 0;
      return entries;
    } catch (err) {
      const error = toP2pError(err, "stream_error");
      if (this.live() === undefined) return undefined;
      if (!chargePeer(this.peers, entry, "peers", error)) {
        this.log.debug({ peer: entry.id, err: error.message }, "peers request failed");
      }
      return undefined;
    }
  }

  /** Answers a handshaken peer with the addresses of our other peers. */
  serve(stream: Stream, connection: Connection): Promise<void> {
    return this.reqResp.serve(
      stream,
      connection,
      "peers",
      MAX_PEERS_REQUEST_BYTES,
      async (_request, entry) => {
        if (entry.status === undefined) return undefined;
        return { body: encodeJson(await this.knownPeerAddrs(entry.id, connection.remoteAddr)) };
      },
    );
  }

  /**
   * Multiaddrs (with `/p2p/<id>`) of our handshaken peers other than `except`, bounded; local-only
   * ones (loopback, unspecified) only for a requester on this machine (addresses.ts).
   */
  private async knownPeerAddrs(except: string, requesterAddr: Multiaddr): Promise<string[]> {
    const node = this.live();
    if (node === undefined) return [];
    const out: string[] = [];
    let bytes = 2;
    for (const entry of [...this.peers.values()]) {
      if (entry.id === except || !entry.ready) continue;
      let addrs: Multiaddr[] = [];
      try {
        addrs = (await node.peerStore.get(entry.peerId)).addresses.map((address) => address.multiaddr);
      } catch {
        // Not in the peer store (yet): fall back to where we dialed it.
      }
      if (addrs.length === 0) {
        addrs = node
          .getConnections(entry.peerId)
          .filter((connection) => connection.direction === "outbound")
          .map((connection) => connection.remoteAddr);
      }
      for (const addr of addrsForRequester(addrs, requesterAddr).slice(0, ADDRS_PER_PEER)) {
        const text =
          peerIdInAddr(addr) === undefined ? `${addr.toString()}/p2p/${entry.id}` : addr.toString();
        bytes += text.length + 3;
        if (text.length > MAX_PEER_ADDR_CHARS || bytes > MAX_PEERS_RESPONSE_BYTES) continue;
        out.push(text);
        if (out.length >= MAX_PEER_ADDRS) return out;
      }
    }
    return out;
  }
}
