import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { Logger } from "pino";
import { type RawData, WebSocket, WebSocketServer } from "ws";
import { invalidRequest, limitExceeded, RPC_ERROR_CODES, type RpcErrorObject, toRpcError } from "./errors.ts";
import {
  SUBSCRIBE_METHOD,
  type SubscriptionHub,
  type SubscriptionSession,
  UNSUBSCRIBE_METHOD,
} from "./subscriptions.ts";

/**
 * JSON-RPC over WebSocket at /ws (docs/websocket.md): every normal request or batch, answered by
 * the same method table as HTTP (`handlePayload`), plus chain_subscribe / chain_unsubscribe,
 * served here per connection from the subscription hub. The socket edge owns the limits:
 * connections, message size, calls in flight, and how far a slow reader may fall behind.
 */

export interface WebSocketLimits {
  /** Open connections; one more is refused with HTTP 503 (-32005 too_many_connections). */
  maxConnections: number;
  /** Largest incoming message, bytes (the HTTP body limit); larger closes the connection with 1009. */
  maxMessageBytes: number;
  /** Bytes queued for a client that does not read; beyond it the connection is dropped. */
  maxBufferedBytes: number;
  /** Requests in one batch (the HTTP batch limit). */
  maxBatchItems: number;
  /** Messages of one connection being answered at once; beyond it reading pauses. */
  maxInFlightMessages: number;
  /** Accept browser connections from any origin (dev mode, as CORS); else same origin only. */
  allowAnyOrigin: boolean;
}

/** What answers the normal JSON-RPC calls: RpcServer. */
export interface PayloadHandler {
  handlePayload(payload: unknown): Promise<string | undefined>;
}

type Call = Record<string, unknown>;

const isSubscriptionCall = (value: unknown): value is Call => {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const call = value as Call;
  // A call with a bad envelope or id goes to handlePayload, which words those errors once.
  const id = call.id;
  const validId =
    !("id" in call) ||
    id === null ||
    typeof id === "string" ||
    (typeof id === "number" && Number.isFinite(id));
  return (
    call.jsonrpc === "2.0" &&
    validId &&
    (call.method === SUBSCRIBE_METHOD || call.method === UNSUBSCRIBE_METHOD)
  );
};

const errorText = (id: unknown, error: RpcErrorObject): string =>
  JSON.stringify({ jsonrpc: "2.0", id: id ?? null, error });

const PARSE_ERROR = errorText(null, {
  code: RPC_ERROR_CODES.parseError,
  message: "message is not valid JSON",
});

const rawText = (data: RawData): string => {
  if (Buffer.isBuffer(data)) return data.toString("utf8");
  if (Array.isArray(data)) return Buffer.concat(data).toString("utf8");
  return Buffer.from(data).toString("utf8");
};

/** Writes a plain HTTP refusal on a socket that asked to upgrade, and closes it. */
function refuseUpgrade(socket: Duplex, status: string, error: RpcErrorObject): void {
  const body = errorText(null, error);
  socket.end(
    `HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

/** One client: its socket, its subscriptions and its flow control. */
interface Connection {
  readonly socket: WebSocket;
  readonly session: SubscriptionSession;
  inFlight: number;
  /** While > 0, notifications wait: a batch that subscribes has not been answered yet. */
  holds: number;
  readonly held: string[];
  heldBytes: number;
}

export class WebSocketEndpoint {
  private readonly rpc: PayloadHandler;
  private readonly hub: SubscriptionHub;
  private readonly limits: WebSocketLimits;
  private readonly log: Logger;
  private readonly server: WebSocketServer;
  private readonly connections = new Set<Connection>();
  /** Handshakes under way: they count against maxConnections too. */
  private upgrading = 0;
  private closing = false;

  constructor(rpc: PayloadHandler, hub: SubscriptionHub, limits: WebSocketLimits, log: Logger) {
    this.rpc = rpc;
    this.hub = hub;
    this.limits = limits;
    this.log = log;
    // Compression off: it costs CPU and memory per connection and lets a small frame inflate.
    this.server = new WebSocketServer({
      noServer: true,
      maxPayload: limits.maxMessageBytes,
      perMessageDeflate: false,
      clientTracking: false,
    });
  }

  /** For RpcServer.handleUpgrade("/ws", …). Never throws: the HTTP server's upgrade event has no catch. */
  readonly upgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    socket.on("error", (error) => this.log.debug({ err: error }, "websocket handshake socket error"));
    try {
      this.startUpgrade(req, socket, head);
    } catch (error) {
      this.log.error({ err: error }, "websocket upgrade failed");
      socket.destroy();
    }
  };

  private startUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    if (this.closing) {
      refuseUpgrade(
        socket,
        "503 Service Unavailable",
        invalidRequest("the node is stopping", "node_stopping").toObject(),
      );
      return;
    }
    if (!this.originAllowed(req)) {
      refuseUpgrade(
        socket,
        "403 Forbidden",
        invalidRequest(`origin ${req.headers.origin} may not connect`, "origin_not_allowed").toObject(),
      );
      return;
    }
    if (this.connections.size + this.upgrading >= this.limits.maxConnections) {
      refuseUpgrade(
        socket,
        "503 Service Unavailable",
        limitExceeded(`at most ${this.limits.maxConnections} WebSocket connections`, "too_many_connections", {
          limit: this.limits.maxConnections,
        }).toObject(),
      );
      return;
    }
    this.upgrading += 1;
    let counted = true;
    // A handshake ws refuses (bad headers) never calls back; the closed socket releases its slot.
    const release = () => {
      if (!counted) return;
      counted = false;
      this.upgrading -= 1;
    };
    socket.once("close", release);
    this.server.handleUpgrade(req, socket, head, (ws) => {
      release();
      socket.off("close", release);
      this.accept(ws);
    });
  }

  /** Closes every connection (1001 going away), dropping those that do not answer within `graceMs`. */
  async close(graceMs = 1_000): Promise<void> {
    this.closing = true;
    const open = [...this.connections];
    const closed = open.map(
      ({ socket }) =>
        new Promise<void>((resolve) => {
          if (socket.readyState === WebSocket.CLOSED) resolve();
          else socket.once("close", () => resolve());
        }),
    );
    for (const { socket } of open) socket.close(1001, "node stopping");
    const force = setTimeout(() => {
      for (const { socket } of open) socket.terminate();
    }, graceMs);
    await Promise.all(closed);
    clearTimeout(force);
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /**
   * Browsers send Origin; other clients do not. Without allowAnyOrigin only the node's own pages
   * (the explorer) may connect, so a web page elsewhere cannot use a local node as the user.
   */
  private originAllowed(req: IncomingMessage): boolean {
    const origin = req.headers.origin;
    if (origin === undefined || this.limits.allowAnyOrigin) return true;
    try {
      return new URL(origin).host === req.headers.host;
    } catch {
      return false;
    }
  }

  private accept(socket: WebSocket): void {
    let self: Connection | undefined;
    const session = this.hub.open((text) => {
      if (self !== undefined) this.notify(self, text);
    });
    const connection: Connection = { socket, session, inFlight: 0, holds: 0, held: [], heldBytes: 0 };
    self = connection;
    this.connections.add(connection);
    this.log.debug({ connections: this.connections.size }, "websocket connected");
    socket.on("message", (data) => this.onMessage(connection, data));
    // Protocol errors (oversized or malformed frames) are ws's to answer with a close code; they
    // must never reach the process as an unhandled 'error'.
    socket.on("error", (error) => this.log.debug({ err: error }, "websocket error"));
    socket.on("close", () => {
      connection.session.close();
      this.connections.delete(connection);
      this.log.debug({ connections: this.connections.size }, "websocket closed");
    });
  }

  private onMessage(connection: Connection, data: RawData): void {
    connection.inFlight += 1;
    if (connection.inFlight >= this.limits.maxInFlightMessages) connection.socket.pause();
    this.answer(connection, rawText(data))
      .catch((error: unknown) => {
        const mapped = toRpcError(error, randomUUID);
        this.log.error({ err: error, faultId: mapped.error.data?.fault_id }, "websocket message failed");
        this.send(connection, errorText(null, mapped.error));
      })
      .finally(() => {
        connection.inFlight -= 1;
        if (connection.socket.isPaused && connection.inFlight < this.limits.maxInFlightMessages) {
          connection.socket.resume();
        }
      });
  }

  private async answer(connection: Connection, text: string): Promise<void> {
    let payload: unknown;
    try {
      payload = JSON.parse(text);
    } catch {
      this.send(connection, PARSE_ERROR);
      return;
    }
    if (isSubscriptionCall(payload)) {
      // Synchronous from subscribe to send: no notification can overtake the reply with its id.
      const initial: string[] = [];
      const reply = this.callLocal(connection, payload, initial);
      if (reply !== undefined) this.send(connection, reply);
      for (const notification of initial) this.send(connection, notification);
      return;
    }
    const batch = Array.isArray(payload) ? payload : undefined;
    const splits =
      batch !== undefined &&
      batch.length > 0 &&
      batch.length <= this.limits.maxBatchItems &&
      batch.some(isSubscriptionCall);
    if (!splits) {
      const reply = await this.rpc.handlePayload(payload);
      if (reply !== undefined) this.send(connection, reply);
      return;
    }
    // A batch with subscription calls: each entry in order, the ordinary ones through
    // handlePayload one by one. Notifications wait until the batch's reply is sent.
    connection.holds += 1;
    const initial: string[] = [];
    try {
      const replies = await Promise.all(
        batch.map((call) => {
          if (isSubscriptionCall(call)) return this.callLocal(connection, call, initial);
          // handlePayload would take a nested array for a batch of its own; inside a batch it is
          // just an invalid request, as over HTTP.
          if (Array.isArray(call))
            return errorText(null, invalidRequest("a request is a JSON object").toObject());
          return this.rpc.handlePayload(call);
        }),
      );
      const answered = replies.filter((reply): reply is string => reply !== undefined);
      if (answered.length > 0) this.send(connection, `[${answered.join(",")}]`);
    } finally {
      connection.holds -= 1;
      for (const notification of initial) this.send(connection, notification);
      if (connection.holds === 0) {
        connection.heldBytes = 0;
        for (const notification of connection.held.splice(0)) this.send(connection, notification);
      }
    }
  }

  /** chain_subscribe / chain_unsubscribe for this connection; undefined for a notification. */
  private callLocal(connection: Connection, call: Call, initial: string[]): string | undefined {
    const hasId = "id" in call;
    try {
      let result: string | boolean;
      if (call.method === SUBSCRIBE_METHOD) {
        const outcome = connection.session.subscribe(call.params);
        initial.push(...outcome.initial);
        result = outcome.id;
      } else {
        result = connection.session.unsubscribe(call.params);
      }
      return hasId
        ? `{"jsonrpc":"2.0","id":${JSON.stringify(call.id)},"result":${JSON.stringify(result)}}`
        : undefined;
    } catch (error) {
      const mapped = toRpcError(error, randomUUID);
      if (mapped.unexpected) {
        this.log.error(
          { err: error, method: call.method, faultId: mapped.error.data?.fault_id },
          "subscription call failed",
        );
      }
      return hasId ? errorText(call.id, mapped.error) : undefined;
    }
  }

  /** A notification: sent now, or held (and bounded like the send queue) while a batch is answered. */
  private notify(connection: Connection, text: string): void {
    if (connection.holds === 0) {
      this.send(connection, text);
      return;
    }
    connection.held.push(text);
    connection.heldBytes += text.length;
    if (connection.heldBytes > this.limits.maxBufferedBytes) this.drop(connection, connection.heldBytes);
  }

  private drop(connection: Connection, bufferedBytes: number): void {
    this.log.warn(
      { bufferedBytes, limit: this.limits.maxBufferedBytes },
      "websocket client too slow; connection dropped",
    );
    connection.held.length = 0;
    connection.socket.terminate();
  }

  /**
   * Sends unless the connection is closing. A client that stops reading while we keep writing
   * would make its queue grow without end: past maxBufferedBytes it is dropped instead.
   */
  private send(connection: Connection, text: string): void {
    const { socket } = connection;
    if (socket.readyState !== WebSocket.OPEN) return;
    socket.send(text);
    if (socket.bufferedAmount > this.limits.maxBufferedBytes) this.drop(connection, socket.bufferedAmount);
  }
}
