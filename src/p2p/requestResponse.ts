import type { Connection, PeerId, Stream } from "@libp2p/interface";
import type { Logger } from "pino";
import type { RequestDeadlines } from "./deadlines.ts";
import { P2pError, toP2pError } from "./errors.ts";
import { decodeJson, FRAME_HEADER_BYTES, StreamReader, writeFrame } from "./framing.ts";
import type { LiveNode } from "./libp2pNode.ts";
import type { PeerEntry } from "./peerManager.ts";

/** What a served request answers: the body, and what to do once it is sent. */
export interface Answer {
  body: Uint8Array;
  after?: () => void;
}

/** What request/response needs of the peer manager. */
export interface RequestPeers {
  entryFor(peerId: PeerId): PeerEntry | undefined;
  penalize(peerId: string, reason: string): void;
}

/**
 * The two ends every request/response protocol shares (status, blocks by range, peers): one
 * bounded frame each way under a deadline, then a half-close. The protocols (statusProtocol.ts,
 * blocksByRangeProtocol.ts, peerExchangeProtocol.ts) say what the frames hold.
 */
export class RequestResponse {
  private readonly live: LiveNode;
  private readonly deadlines: RequestDeadlines;
  private readonly peers: RequestPeers;
  private readonly log: Logger;

  constructor(parts: { live: LiveNode; deadlines: RequestDeadlines; peers: RequestPeers; log: Logger }) {
    this.live = parts.live;
    this.deadlines = parts.deadlines;
    this.peers = parts.peers;
    this.log = parts.log;
  }

  /**
   * One request: opens a stream on an open connection, sends a frame, reads one frame of at most
   * `maxAnswerBytes` back and parses it as JSON. Throws `P2pError` (see failureOf).
   */
  async request(
    entry: PeerEntry,
    protocol: string,
    payload: Uint8Array,
    maxAnswerBytes: number,
  ): Promise<unknown> {
    return decodeJson(await this.requestBytes(entry, protocol, payload, maxAnswerBytes));
  }

  /** As `request`, but the answer frame's body is returned as it came (binary answers). */
  async requestBytes(
    entry: PeerEntry,
    protocol: string,
    payload: Uint8Array,
    maxAnswerBytes: number,
  ): Promise<Uint8Array> {
    const node = this.live();
    if (node === undefined) throw new P2pError("not_running", "network not running");
    const connection = node.getConnections(entry.peerId).find((c) => c.status === "open");
    if (connection === undefined) throw new P2pError("not_connected", `no open connection to ${entry.id}`);
    const controller = this.deadlines.track();
    const { signal } = controller;
    let stream: Stream | undefined;
    let reader: StreamReader | undefined;
    try {
      stream = await connection.newStream(protocol, { signal });
      reader = new StreamReader(stream, maxAnswerBytes + FRAME_HEADER_BYTES);
      await writeFrame(stream, payload, signal);
      await stream.close({ signal });
      return await reader.readFrame(maxAnswerBytes, signal);
    } catch (err) {
      const error = failureOf(err, signal);
      stream?.abort(error);
      throw error;
    } finally {
      reader?.dispose();
      this.deadlines.untrack(controller);
    }
  }

  /**
   * Serves one inbound stream: reads one bounded frame, answers with one frame, half-closes.
   * A malformed or oversized request penalizes the peer; `answer` returning `undefined` refuses
   * quietly; a fault of ours (the handler threw) is logged and the stream reset. `answer` gets the
   * stream's deadline too: one still running when it fires is left behind and the stream reset, so
   * a slow handler (a disk read for a snapshot chunk) holds an inbound stream slot no longer.
   */
  async serve(
    stream: Stream,
    connection: Connection,
    what: string,
    maxRequestBytes: number,
    answer: (request: unknown, entry: PeerEntry) => Answer | undefined | Promise<Answer | undefined>,
  ): Promise<void> {
    const entry = this.peers.entryFor(connection.remotePeer);
    if (entry === undefined) {
      stream.abort(new P2pError("not_connected", "refused"));
      return;
    }
    const controller = this.deadlines.track();
    const { signal } = controller;
    const reader = new StreamReader(stream, maxRequestBytes + FRAME_HEADER_BYTES);
    try {
      const request = decodeJson(await reader.readFrame(maxRequestBytes, signal));
      const reply = await untilAborted(answer(request, entry), signal);
      if (reply === undefined) {
        stream.abort(new P2pError("not_connected", "refused"));
        return;
      }
      await writeFrame(stream, reply.body, signal);
      await stream.close({ signal });
      reply.after?.();
    } catch (err) {
      const error = failureOf(err, signal);
      stream.abort(error);
      if (this.live() === undefined) return;
      if (isPeerFault(error)) {
        this.peers.penalize(entry.id, `${what} request: ${error.message}`);
      } else if (err instanceof P2pError || error.reason === "timeout") {
        this.log.debug({ peer: entry.id, what, err: error.message }, "inbound stream failed");
      } else {
        this.log.warn({ peer: entry.id, what, err }, "serving a request failed");
      }
    } finally {
      reader.dispose();
      this.deadlines.untrack(controller);
    }
  }
}

/** `work`'s outcome, or a throw of the signal's reason once it aborts first. */
function untilAborted<T>(work: T | Promise<T>, signal: AbortSignal): Promise<T> {
  if (!(work instanceof Promise)) return Promise.resolve(work);
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/** The error a request failed with: ours if we threw one, else why the deadline fired. */
function failureOf(err: unknown, signal: AbortSignal): P2pError {
  if (err instanceof P2pError && err.reason !== "timeout") return err;
  if (signal.aborted && signal.reason instanceof P2pError) return signal.reason;
  return toP2pError(err, "stream_error");
}

/**
 * Whether an error proves the peer misbehaved (it answered too much, or garbage), which earns a
 * ban. A timeout does not: a validator whose event loop is busy with a large block, or whose link
 * is full of gossip, answers late but honestly, and banning it for that would take it out of
 * consensus exactly when the network is loaded (seen in the bench: four validators banned each
 * other within 10 s of full load). A late answer is only a failed request; the status exchange
 * drops a peer after repeated failures, and other requests after repeated silence.
 */
export function isPeerFault(error: P2pError): boolean {
  return error.reason === "message_too_large" || error.reason === "bad_message";
}

/**
 * Charges a failed request of ours to the peer that was asked, as isPeerFault says: garbage is a
 * penalty, a late answer a strike (lateAnswer). False when the failure says nothing of the peer.
 */
export function chargePeer(
  peers: { penalize(peerId: string, reason: string): void; lateAnswer(entry: PeerEntry, what: string): void },
  entry: PeerEntry,
  what: string,
  error: P2pError,
): boolean {
  if (isPeerFault(error)) peers.penalize(entry.id, `${what}: ${error.message}`);
  else if (error.reason === "timeout") peers.lateAnswer(entry, `${what}: ${error.message}`);
  else return false;
  return true;
}
