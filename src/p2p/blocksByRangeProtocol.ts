import type { Connection, Stream } from "@libp2p/interface";
import type { Logger } from "pino";
import { clipRange, encodeBlocksResponse, isHeight, parseBlocksRequest } from "./blocksByRange.ts";
import { P2pError, toP2pError } from "./errors.ts";
import { encodeJson, FRAME_HEADER_BYTES } from "./framing.ts";
import type { LiveNode } from "./libp2pNode.ts";
import type { PeerManager } from "./peerManager.ts";
import { BLOCKS_BY_RANGE_PROTOCOL, MAX_BLOCKS_REQUEST_BYTES } from "./protocols.ts";
import { chargePeer, type RequestResponse } from "./requestResponse.ts";
import type { P2pHandlers } from "./types.ts";

/**
 * Blocks by range, both ends: `{from, to}` asks for heights `from..to`; the answer is a JSON
 * array of at most that many blocks, as many as fit in `maxMessageBytes` (the asker continues
 * from where it stopped). The wire format is in blocksByRange.ts; the blocks are opaque here.
 */
export class BlocksByRangeProtocol {
  private readonly live: LiveNode;
  private readonly reqResp: RequestResponse;
  private readonly peers: PeerManager;
  private readonly serveBlocks: P2pHandlers["serveBlocks"];
  private readonly maxBlocksPerRequest: number;
  private readonly maxMessageBytes: number;
  private readonly log: Logger;

  constructor(parts: {
    live: LiveNode;
    reqResp: RequestResponse;
    peers: PeerManager;
    serveBlocks: P2pHandlers["serveBlocks"];
    maxBlocksPerRequest: number;
    maxMessageBytes: number;
    log: Logger;
  }) {
    this.live = parts.live;
    this.reqResp = parts.reqResp;
    this.peers = parts.peers;
    this.serveBlocks = parts.serveBlocks;
    this.maxBlocksPerRequest = parts.maxBlocksPerRequest;
    this.maxMessageBytes = parts.maxMessageBytes;
    this.log = parts.log;
  }

  /** See P2pNetwork.requestBlocks. */
  async request(peerId: string, from: number, to: number): Promise<unknown[]> {
    if (!isHeight(from) || !isHeight(to) || from > to) {
      throw new P2pError("invalid_argument", `bad block range ${from}..${to}`);
    }
    if (this.live() === undefined) throw new P2pError("not_running", "network not running");
    const entry = this.peers.get(peerId);
    if (entry?.status === undefined) throw new P2pError("not_connected", `peer ${peerId} is not handshaken`);
    try {
      const answer = await this.reqResp.request(
        entry,
        BLOCKS_BY_RANGE_PROTOCOL,
        encodeJson({ from, to }),
        this.maxMessageBytes,
      );
      if (!Array.isArray(answer)) throw new P2pError("bad_message", "blocks answer is not a JSON array");
      if (answer.length > to - from + 1) {
        throw new P2pError(
          "bad_message",
          `blocks answer has ${answer.length} items for ${to - from + 1} heights`,
        );
      }
      entry.silentRequests = 0;
      return answer;
    } catch (err) {
      const error = toP2pError(err, "stream_error");
      chargePeer(this.peers, entry, "blocks by range", error);
      throw error;
    }
  }

  /** Serves a handshaken peer's request from `serveBlocks`, clipped to `maxBlocksPerRequest`. */
  serve(stream: Stream, connection: Connection): Promise<void> {
    return this.reqResp.serve(
      stream,
      connection,
      "blocks",
      MAX_BLOCKS_REQUEST_BYTES,
      async (request, entry) => {
        if (entry.status === undefined) return undefined;
        const parsed = parseBlocksRequest(request);
        if (parsed === undefined) throw new P2pError("bad_message", "malformed blocks request");
        const range = clipRange(parsed, this.maxBlocksPerRequest);
        const items = await this.serveBlocks(range.from, range.to);
        if (typeof (items as Partial<Iterable<unknown>>)?.[Symbol.iterator] !== "function") {
          throw new Error("serveBlocks returned a non-iterable");
        }
        const { body, count, cut } = encodeBlocksResponse(
          items,
          range.to - range.from + 1,
          this.maxMessageBytes - FRAME_HEADER_BYTES,
        );
        // A prefix is the protocol working (the peer asks again from where it stopped): big blocks
        // make it routine under load. A first block alone over the limit is not: no peer can fetch
        // it from this node, and an operator has to raise [p2p] max_message_bytes.
        if (cut && count === 0) {
          this.log.warn({ from: range.from }, "a block is larger than the message limit");
        } else if (cut) {
          this.log.debug({ from: range.from, count }, "blocks answer cut to the message limit");
        }
        return { body };
      },
    );
  }
}
