import type { Connection, Stream } from "@libp2p/interface";
import type { Logger } from "pino";
import { isHeight } from "./blocksByRange.ts";
import { P2pError, toP2pError } from "./errors.ts";
import { decodeJson, encodeJson } from "./framing.ts";
import type { LiveNode } from "./libp2pNode.ts";
import type { PeerManager } from "./peerManager.ts";
import {
  MAX_SNAPSHOT_CHUNK_BYTES,
  MAX_SNAPSHOT_LIST_BYTES,
  MAX_SNAPSHOT_LIST_ITEMS,
  MAX_SNAPSHOT_MANIFEST_BYTES,
  MAX_SNAPSHOT_REQUEST_BYTES,
  SNAPSHOTS_PROTOCOL,
} from "./protocols.ts";
import { chargePeer, type RequestResponse } from "./requestResponse.ts";
import type { P2pHandlers } from "./types.ts";

/**
 * Snapshots, both ends (`/chain-node/snapshots/1.0.0`): a node asks a handshaken peer which state
 * snapshots it offers, then for a manifest and its chunks (decision 010 says what they hold; here
 * they are opaque). One protocol id; the request says which of the three it is.
 *
 * Wire format, one frame each way (framing.ts: a 4-byte big-endian length, then the body):
 *
 * - Request body: UTF-8 JSON of at most MAX_SNAPSHOT_REQUEST_BYTES (256), exactly one of
 *   `{"kind":"list"}`, `{"kind":"manifest","height":H}`, `{"kind":"chunk","height":H,"index":I}`,
 *   H and I non-negative safe integers, no other member. Anything else is an offence.
 * - Answer body: one status byte, then the payload, which runs to the end of the frame (the
 *   frame's length delimits it; there is no second length):
 *   - `0x00` NONE, nothing after it: no snapshot at that height, or no such chunk;
 *   - `0x01` FOUND, then the payload as raw bytes: the manifest (at most
 *     MAX_SNAPSHOT_MANIFEST_BYTES, 4 MiB), the chunk (at most MAX_SNAPSHOT_CHUNK_BYTES, 16 MiB), or
 *     for `list` a UTF-8 JSON array (at most MAX_SNAPSHOT_LIST_ITEMS items in
 *     MAX_SNAPSHOT_LIST_BYTES). A list is always FOUND, `[]` when there is nothing to offer.
 *   Manifests and chunks travel as they are: no JSON or base64 (a third larger, and a parse, for
 *   chunks of ~1 MiB). Another status byte, bytes after NONE, a NONE list, a list that is not a
 *   JSON array or is over its bounds, or a frame over the kind's bound is the peer's fault.
 *
 * These bounds are the protocol's own, not `maxMessageBytes` (a chunk may be larger than a block
 * answer). The server sends no answer over them: it logs, and answers NONE (or `[]`).
 */

const utf8 = new TextEncoder();

const NONE = 0x00;
const FOUND = 0x01;

/**
 * Snapshot answers being served at once, over all peers. Each holds up to a chunk (16 MiB, about
 * twice while framed) in memory; per connection libp2p allows MAX_INBOUND_STREAMS.snapshots, and
 * this bounds the sum over maxPeers connections. A request beyond it is refused (stream reset,
 * not an offence): the asker tries again or asks another peer.
 */
const MAX_SNAPSHOT_ANSWERS_IN_FLIGHT = 8;

type SnapshotRequest =
  | { kind: "list" }
  | { kind: "manifest"; height: number }
  | { kind: "chunk"; height: number; index: number };

/** The request exactly as the protocol allows it, or `undefined`. */
function parseSnapshotRequest(value: unknown): SnapshotRequest | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const fields = value as Record<string, unknown>;
  const keys = Object.keys(fields).sort().join(",");
  const { height, index } = fields;
  switch (fields.kind) {
    case "list":
      return keys === "kind" ? { kind: "list" } : undefined;
    case "manifest":
      return keys === "height,kind" && isHeight(height) ? { kind: "manifest", height } : undefined;
    case "chunk":
      return keys === "height,index,kind" && isHeight(height) && isHeight(index)
        ? { kind: "chunk", height, index }
        : undefined;
    default:
      return undefined;
  }
}

/** FOUND ‖ payload. */
function foundBody(payload: Uint8Array): Uint8Array {
  const body = new Uint8Array(1 + payload.byteLength);
  body[0] = FOUND;
  body.set(payload, 1);
  return body;
}

/** An answer body's payload: `undefined` for NONE; throws `P2pError("bad_message")` otherwise. */
function decodeAnswer(body: Uint8Array): Uint8Array | undefined {
  if (body[0] === NONE && body.byteLength === 1) return undefined;
  if (body[0] === FOUND) return body.subarray(1);
  if (body.byteLength === 0) throw new P2pError("bad_message", "empty snapshots answer");
  if (body[0] === NONE) throw new P2pError("bad_message", "snapshots answer has bytes after NONE");
  throw new P2pError("bad_message", `snapshots answer has status byte ${body[0]}`);
}

function decodeList(body: Uint8Array): unknown[] {
  const payload = decodeAnswer(body);
  if (payload === undefined) throw new P2pError("bad_message", "snapshot list answered NONE");
  const list = decodeJson(payload);
  if (!Array.isArray(list)) throw new P2pError("bad_message", "snapshot list is not a JSON array");
  if (list.length > MAX_SNAPSHOT_LIST_ITEMS) {
    throw new P2pError("bad_message", `snapshot list has ${list.length} items`);
  }
  return list;
}

const EMPTY_LIST = foundBody(encodeJson([]));
const NONE_BODY = new Uint8Array([NONE]);

export class SnapshotProtocol {
  private readonly live: LiveNode;
  private readonly reqResp: RequestResponse;
  private readonly peers: PeerManager;
  private readonly serveSnapshots: P2pHandlers["serveSnapshots"];
  private readonly log: Logger;
  private answersInFlight = 0;

  constructor(parts: {
    live: LiveNode;
    reqResp: RequestResponse;
    peers: PeerManager;
    serveSnapshots: P2pHandlers["serveSnapshots"];
    log: Logger;
  }) {
    this.live = parts.live;
    this.reqResp = parts.reqResp;
    this.peers = parts.peers;
    this.serveSnapshots = parts.serveSnapshots;
    this.log = parts.log;
  }

  /** See P2pNetwork.requestSnapshotList. */
  requestList(peerId: string): Promise<unknown[]> {
    return this.ask(peerId, { kind: "list" }, MAX_SNAPSHOT_LIST_BYTES, decodeList);
  }

  /** See P2pNetwork.requestSnapshotManifest. */
  async requestManifest(peerId: string, height: number): Promise<Uint8Array | undefined> {
    if (!isHeight(height)) throw new P2pError("invalid_argument", `bad snapshot height ${height}`);
    return this.ask(peerId, { kind: "manifest", height }, MAX_SNAPSHOT_MANIFEST_BYTES, decodeAnswer);
  }

  /** See P2pNetwork.requestSnapshotChunk. */
  async requestChunk(peerId: string, height: number, index: number): Promise<Uint8Array | undefined> {
    if (!isHeight(height) || !isHeight(index)) {
      throw new P2pError("invalid_argument", `bad snapshot chunk ${height}/${index}`);
    }
    return this.ask(peerId, { kind: "chunk", height, index }, MAX_SNAPSHOT_CHUNK_BYTES, decodeAnswer);
  }

  /**
   * One request to a handshaken peer; `decode` judges the answer body. A malformed or oversized
   * answer penalizes the peer, a timeout counts as silence (chargePeer), as for blocks by range.
   */
  private async ask<T>(
    peerId: string,
    request: SnapshotRequest,
    maxPayloadBytes: number,
    decode: (body: Uint8Array) => T,
  ): Promise<T> {
    if (this.live() === undefined) throw new P2pError("not_running", "network not running");
    const entry = this.peers.get(peerId);
    if (entry?.status === undefined) throw new P2pError("not_connected", `peer ${peerId} is not handshaken`);
    try {
      const body = await this.reqResp.requestBytes(
        entry,
        SNAPSHOTS_PROTOCOL,
        encodeJson(request),
        1 + maxPayloadBytes,
      );
      const answer = decode(body);
      entry.silentRequests = 0;
      return answer;
    } catch (err) {
      const error = toP2pError(err, "stream_error");
      chargePeer(this.peers, entry, `snapshot ${request.kind}`, error);
      throw error;
    }
  }

  /** Serves a handshaken peer's request from `serveSnapshots` (none: `[]` and NONE). */
  async serve(stream: Stream, connection: Connection): Promise<void> {
    let counted = false;
    try {
      await this.reqResp.serve(
        stream,
        connection,
        "snapshots",
        MAX_SNAPSHOT_REQUEST_BYTES,
        async (raw, entry) => {
          if (entry.status === undefined) return undefined;
          const request = parseSnapshotRequest(raw);
          if (request === undefined) throw new P2pError("bad_message", "malformed snapshots request");
          if (this.answersInFlight >= MAX_SNAPSHOT_ANSWERS_IN_FLIGHT) {
            this.log.debug({ peer: entry.id, kind: request.kind }, "snapshots request refused: busy");
            return undefined;
          }
          this.answersInFlight++;
          counted = true;
          return { body: await this.answer(request) };
        },
      );
    } finally {
      if (counted) this.answersInFlight--;
    }
  }

  private async answer(request: SnapshotRequest): Promise<Uint8Array> {
    const serve = this.serveSnapshots;
    if (request.kind === "list") {
      if (serve === undefined) return EMPTY_LIST;
      const items = await serve.list();
      if (!Array.isArray(items)) throw new Error("serveSnapshots.list returned a non-array");
      const json = items.length > MAX_SNAPSHOT_LIST_ITEMS ? undefined : utf8.encode(JSON.stringify(items));
      if (json === undefined || json.byteLength > MAX_SNAPSHOT_LIST_BYTES) {
        this.log.warn(
          { items: items.length, bytes: json?.byteLength },
          "snapshot list over the protocol's bounds: answered empty",
        );
        return EMPTY_LIST;
      }
      return foundBody(json);
    }
    if (serve === undefined) return NONE_BODY;
    if (request.kind === "manifest") {
      const bytes = await serve.manifest(request.height);
      return this.binary(bytes, MAX_SNAPSHOT_MANIFEST_BYTES, request);
    }
    const bytes = await serve.chunk(request.height, request.index);
    return this.binary(bytes, MAX_SNAPSHOT_CHUNK_BYTES, request);
  }

  /** A manifest or chunk answer: NONE when absent or over `maxBytes` (logged), else FOUND ‖ bytes. */
  private binary(bytes: unknown, maxBytes: number, request: SnapshotRequest): Uint8Array {
    if (bytes === undefined) return NONE_BODY;
    if (!(bytes instanceof Uint8Array)) {
      throw new Error(`serveSnapshots.${request.kind} returned neither bytes nor undefined`);
    }
    if (bytes.byteLength > maxBytes) {
      this.log.warn(
        { ...request, bytes: bytes.byteLength, limit: maxBytes },
        "snapshot answer over the protocol's bound: answered none",
      );
      return NONE_BODY;
    }
    return foundBody(bytes);
  }
}
