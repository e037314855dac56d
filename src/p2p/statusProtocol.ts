import type { Connection, Stream } from "@libp2p/interface";
import type { Logger } from "pino";
import { P2pError, toP2pError } from "./errors.ts";
import { encodeJson } from "./framing.ts";
import type { LiveNode } from "./libp2pNode.ts";
import type { PeerEntry, PeerManager } from "./peerManager.ts";
import { MAX_STATUS_BYTES, STATUS_PROTOCOL } from "./protocols.ts";
import { isPeerFault, type RequestResponse } from "./requestResponse.ts";
import { parsePeerStatus, statusMismatch } from "./status.ts";
import type { PeerStatus } from "./types.ts";

/** Status exchanges that fail this many times in a row (timeouts, resets) drop the peer. */
const MAX_STATUS_FAILURES = 3;

/**
 * The status protocol, both ends: each side sends its status (chain id, network id, genesis,
 * head) and answers with its own. The first exchange is the handshake; it repeats every status
 * interval to learn the peer's head. What a status means is the peer manager's call.
 */
export class StatusProtocol {
  private readonly live: LiveNode;
  private readonly reqResp: RequestResponse;
  private readonly peers: PeerManager;
  private readonly ourStatus: () => PeerStatus;
  private readonly log: Logger;

  constructor(parts: {
    live: LiveNode;
    reqResp: RequestResponse;
    peers: PeerManager;
    ourStatus: () => PeerStatus;
    log: Logger;
  }) {
    this.live = parts.live;
    this.reqResp = parts.reqResp;
    this.peers = parts.peers;
    this.ourStatus = parts.ourStatus;
    this.log = parts.log;
  }

  /** Sends our status and takes the peer's from the answer. The handshake and each refresh. */
  async exchange(entry: PeerEntry): Promise<void> {
    if (entry.statusInFlight) return;
    entry.statusInFlight = true;
    try {
      const answer = await this.reqResp.request(
        entry,
        STATUS_PROTOCOL,
        encodeJson(this.ourStatus()),
        MAX_STATUS_BYTES,
      );
      entry.failures = 0;
      this.peers.acceptStatus(entry, answer);
    } catch (err) {
      if (this.live() === undefined || !this.peers.isCurrent(entry)) return;
      const error = toP2pError(err, "stream_error");
      // A late answer counts as a failure (the peer may be busy); garbage is an offence.
      if (isPeerFault(error)) {
        this.peers.penalize(entry.id, `status: ${error.message}`);
        return;
      }
      entry.failures++;
      const unsupported = err instanceof Error && err.name === "UnsupportedProtocolError";
      this.log.debug(
        { peer: entry.id, err: error.message, failures: entry.failures },
        "status exchange failed",
      );
      if (unsupported || entry.failures >= MAX_STATUS_FAILURES) {
        this.log.info(
          { peer: entry.id, reason: unsupported ? "not a chain-node" : error.message },
          "peer dropped",
        );
        this.peers.disconnect(entry.id);
      }
    } finally {
      entry.statusInFlight = false;
    }
  }

  /** Answers a peer's status with ours (a malformed one is an offence). */
  serve(stream: Stream, connection: Connection): Promise<void> {
    return this.reqResp.serve(stream, connection, "status", MAX_STATUS_BYTES, (request, entry) => {
      const status = parsePeerStatus(request);
      if (status === undefined) throw new P2pError("bad_message", "malformed status");
      const identity = this.peers.chainIdentity;
      const mismatch = identity === undefined ? undefined : statusMismatch(identity, status);
      const body = encodeJson(this.ourStatus());
      if (mismatch !== undefined) {
        // Another chain still gets our status (so it refuses us too, with a clear reason); the
        // ban is in place at once, the hang-up waits until the answer is out.
        this.peers.refuse(entry.id, mismatch);
        return { body, after: () => this.peers.disconnect(entry.id) };
      }
      if (!this.peers.acceptStatus(entry, status)) return undefined;
      return { body };
    });
  }
}
