import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { Logger } from "pino";
import { errorResponse, JsonRpcDispatcher, type Reply } from "./dispatch.ts";
import { invalidRequest, limitExceeded, RPC_ERROR_CODES, toRpcError } from "./errors.ts";
import type { RpcServerHooks, RpcServerOptions } from "./options.ts";
import type { Route } from "./routes.ts";

/**
 * A handler for a path other than the JSON-RPC endpoint (health, metrics, the explorer). It gets
 * the request untouched (any method) and answers it itself.
 */
export type HttpHandler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

/** Takes over an HTTP upgrade (WebSocket) for its path; it owns the socket from then on. */
export type UpgradeHandler = (req: IncomingMessage, socket: Duplex, head: Buffer) => void;

const RPC_PATHS = new Set(["/", "/json-rpc"]);
const JSON_CONTENT_TYPE = /^application\/(json|json-rpc|[\w.+-]+\+json)$/i;

/** The request's path without query and trailing slashes. */
const pathOf = (req: IncomingMessage): string => {
  const url = req.url ?? "/";
  if (url === "/") return url; // almost every JSON-RPC call
  return url.split("?")[0]?.replace(/(.)\/+$/, "$1") ?? "/";
};

/**
 * What a CORS preflight is told (rpc.cors): any origin may POST JSON. Max-Age lets a browser
 * reuse the answer for 2 h (Chromium's ceiling) instead of asking before every call.
 */
const CORS_PREFLIGHT = {
  "Access-Control-Allow-Origin": "*",
  "Access-Control-Allow-Methods": "POST, OPTIONS",
  "Access-Control-Allow-Headers": "Content-Type",
  "Access-Control-Max-Age": "7200",
} as const;

/**
 * True once `res` gets the connection's socket (its turn among pipelined replies), false if the
 * connection closes first.
 */
const turnOf = (req: IncomingMessage, res: ServerResponse): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = req.socket;
    if (socket.destroyed) {
      resolve(false);
      return;
    }
    const done = (turn: boolean) => (): void => {
      res.off("socket", onTurn);
      socket.off("close", onClose);
      resolve(turn);
    };
    const onTurn = done(true);
    const onClose = done(false);
    res.on("socket", onTurn);
    socket.on("close", onClose);
  });

/** GET /: what this port serves, for a person who opens it in a browser. Fixed text, no input. */
const rootPage = (explorer: boolean): string =>
  [
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>chain-node</title></head><body>',
    "<h1>chain-node</h1>",
    "<p>JSON-RPC 2.0 endpoint: POST a request here or to <code>/json-rpc</code>; WebSocket at <code>/ws</code>.</p>",
    explorer ? '<p><a href="/explorer">Open the block explorer</a></p>' : "",
    "</body></html>\n",
  ].join("");

/**
 * JSON-RPC 2.0 over HTTP (DESIGN.md §2): HTTP gatekeeping (paths, 405/413/415, body and reply
 * bounds, one reply at a time per connection), other paths' handlers and upgrades. The envelope,
 * batches and result limits are the dispatcher's (dispatch.ts); what a method does is its route's.
 */
export class RpcServer {
  private readonly dispatch: JsonRpcDispatcher;
  private readonly options: RpcServerOptions;
  private readonly log: Logger;
  private readonly server: Server;
  private readonly httpHandlers = new Map<string, HttpHandler>();
  private readonly upgradeHandlers = new Map<string, UpgradeHandler>();
  /**
   * rpc.cors: what every reply carries. Allow-Methods and Allow-Headers count only in a preflight's
   * answer (Fetch standard, CORS protocol), so only OPTIONS sends them (CORS_PREFLIGHT): each header
   * costs node:http validation and bytes on every call (docs/performance.md).
   */
  private readonly corsHeaders: Readonly<Record<string, string>>;
  /** Connections holding reply bytes their client has not taken yet, the one behind longest first. */
  private readonly behind = new Set<Socket>();
  private shed = { count: 0, loggedAt: 0 };

  constructor(
    routes: ReadonlyMap<string, Route>,
    options: RpcServerOptions,
    log: Logger,
    hooks: RpcServerHooks = {},
  ) {
    this.dispatch = new JsonRpcDispatcher(routes, options, log, hooks);
    this.options = options;
    this.log = log;
    this.corsHeaders = options.cors ? { "Access-Control-Allow-Origin": "*" } : {};
    // node:http's own defaults (60 s for the head, 300 s for the request, checked every 30 s)
    // let a slowloris client hold a connection for up to 90 s with one byte every few seconds
    // (test/load/limitsUnderAttack.test.ts). node:http refuses a head timeout above the request one.
    const headersTimeout = Math.min(options.headersTimeoutMs, options.requestTimeoutMs);
    this.server = createServer(
      {
        headersTimeout,
        requestTimeout: options.requestTimeoutMs,
        connectionsCheckingInterval: Math.max(100, Math.min(1_000, headersTimeout / 4)),
      },
      (req, res) => {
        this.onRequest(req, res).catch((error: unknown) => {
          this.log.error({ err: error }, "request handling failed");
          if (!res.headersSent) this.send(res, 500, errorResponse(null, toRpcError(error, randomUUID).error));
        });
      },
    );
    this.server.keepAliveTimeout = 5_000;
    this.server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      const handler = this.upgradeHandlers.get(pathOf(req));
      if (handler !== undefined) {
        handler(req, socket, head);
        return;
      }
      socket.end("HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
    });
  }

  /** Serves `path` (exact, no trailing slash) with `handler` beside the JSON-RPC endpoint. */
  handle(path: string, handler: HttpHandler): void {
    if (RPC_PATHS.has(path)) throw new Error(`${path} is the JSON-RPC endpoint`);
    this.httpHandlers.set(path, handler);
  }

  /** Hands HTTP upgrades of `path` (a WebSocket endpoint) to `handler`. */
  handleUpgrade(path: string, handler: UpgradeHandler): void {
    this.upgradeHandlers.set(path, handler);
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(this.options.port, this.options.host, () => {
        this.server.off("error", reject);
        resolve();
      });
    });
    return this.url();
  }

  url(): string {
    const address = this.server.address() as AddressInfo;
    const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
    return `http://${host}:${address.port}`;
  }

  /** Stops accepting connections, lets requests in flight finish (up to `graceMs`), then closes. */
  /** One parsed JSON-RPC payload's reply (see JsonRpcDispatcher.handlePayload); ws.ts calls it. */
  handlePayload(payload: unknown): Promise<string | undefined> {
    return this.dispatch.handlePayload(payload);
  }

  async close(graceMs = 2_000): Promise<void> {
    if (!this.server.listening) return;
    await new Promise<void>((resolve) => {
      const force = setTimeout(() => this.server.closeAllConnections(), graceMs);
      this.server.close(() => {
        clearTimeout(force);
        resolve();
      });
      this.server.closeIdleConnections();
    });
  }

  private async onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = pathOf(req);
    const handler = this.httpHandlers.get(path);
    if (handler !== undefined) {
      if (this.options.cors) res.setHeader("Access-Control-Allow-Origin", "*");
      await handler(req, res);
      return;
    }
    if (!RPC_PATHS.has(path)) {
      this.send(
        res,
        404,
        errorResponse(null, invalidRequest(`no JSON-RPC endpoint at ${path}; use / or /json-rpc`).toObject()),
      );
      return;
    }
    // RFC 9110: Allow lists what this resource supports, and `/` also serves GET (a short page).
    const allow = path === "/" ? "GET, POST, OPTIONS" : "POST, OPTIONS";
    if (req.method === "OPTIONS") {
      res.writeHead(204, { Allow: allow, ...(this.options.cors ? CORS_PREFLIGHT : {}) }).end();
      return;
    }
    if (req.method === "GET" && path === "/") {
      const page = rootPage(this.httpHandlers.has("/explorer"));
      res.writeHead(200, {
        ...this.corsHeaders,
        "Content-Type": "text/html; charset=utf-8",
        "Content-Length": Buffer.byteLength(page),
        "Content-Security-Policy": "default-src 'none'",
        "X-Content-Type-Options": "nosniff",
      });
      res.end(page);
      return;
    }
    if (req.method !== "POST") {
      res.setHeader("Allow", allow);
      this.send(
        res,
        405,
        errorResponse(null, invalidRequest(`HTTP ${req.method} is not allowed; use POST`).toObject()),
      );
      return;
    }
    const contentType = req.headers["content-type"]?.split(";")[0]?.trim();
    if (contentType !== undefined && contentType !== "" && !JSON_CONTENT_TYPE.test(contentType)) {
      this.send(
        res,
        415,
        errorResponse(null, invalidRequest(`content type ${contentType} is not JSON`).toObject()),
      );
      return;
    }
    // One reply at a time per connection. node:http hands over every request of a chunk at once
    // (its pause for pipelining acts on later chunks only) and queues their replies in memory, so
    // 50 clients that pipelined 4 requests for 8 MB each and never read made the node build and
    // hold all 200 replies, 2 GB (test/load/limitsUnderAttack.test.ts). A queued reply gets the
    // socket once the one before it has been taken; the request is served then, if the
    // connection is still open.
    if (res.socket === null && !(await turnOf(req, res))) return;
    const body = await this.readBody(req);
    if (body === undefined) {
      // No `Connection: close` here: closing the socket while the client is still sending makes
      // the kernel reset the connection, and the client got EPIPE/ECONNRESET instead of this 413
      // (about half of over-limit bodies, found by test/rpc/fuzz.test.ts). readBody discards the
      // rest of the body (bounded), so the connection stays usable (RFC 9112 §9.6).
      this.send(
        res,
        413,
        errorResponse(
          null,
          limitExceeded(`body exceeds ${this.options.maxBodyBytes} bytes`, "body_too_large").toObject(),
        ),
      );
      return;
    }
    // A connection closed by now (the client left, or watchBacklog closed it) has no one to read
    // the reply: do not build it.
    if (req.socket.destroyed) return;
    let payload: unknown;
    try {
      payload = JSON.parse(body.toString("utf8"));
    } catch {
      this.dispatch.reportCall("invalid", RPC_ERROR_CODES.parseError, 0);
      this.send(
        res,
        200,
        errorResponse(null, { code: RPC_ERROR_CODES.parseError, message: "body is not valid JSON" }),
      );
      return;
    }
    const response = await this.dispatch.replyTo(payload);
    if (response === undefined) res.writeHead(204, this.corsHeaders).end();
    else this.sendText(res, 200, response);
  }

  /**
   * The body, or undefined when it is over the limit. An over-limit body is read and discarded,
   * not buffered, up to twice `maxBodyBytes` in all; a client that sends more than that is cut
   * off (so a huge declared length cannot keep the server reading).
   */
  private readBody(req: IncomingMessage): Promise<Buffer | undefined> {
    const limit = this.options.maxBodyBytes;
    const declared = Number(req.headers["content-length"]);
    let discarded = 0;
    const discard = (chunk: Buffer): void => {
      discarded += chunk.length;
      if (discarded > 2 * limit) req.socket.destroy();
    };
    return new Promise((resolve, reject) => {
      if (Number.isFinite(declared) && declared > limit) {
        req.on("data", discard);
        req.resume();
        resolve(undefined);
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      let over = false;
      req.on("data", (chunk: Buffer) => {
        if (over) {
          discard(chunk);
          return;
        }
        size += chunk.length;
        if (size > limit) {
          over = true;
          chunks.length = 0;
          resolve(undefined);
          return;
        }
        chunks.push(chunk);
      });
      req.on("end", () => {
        if (!over) resolve(Buffer.concat(chunks));
      });
      req.on("error", reject);
    });
  }

  private send(res: ServerResponse, status: number, body: unknown): void {
    this.sendText(res, status, JSON.stringify(body));
  }

  private sendText(res: ServerResponse, status: number, text: Reply): void {
    const length = typeof text === "string" ? Buffer.byteLength(text) : text.size;
    // One header object, no setHeader: node:http validates set headers again when it merges them.
    res.writeHead(
      status,
      this.options.cors
        ? { "Content-Type": "application/json", "Content-Length": length, "Access-Control-Allow-Origin": "*" }
        : { "Content-Type": "application/json", "Content-Length": length },
    );
    if (typeof text === "string") res.end(text);
    else {
      // Corked here and uncorked at once, so the chunks go out in one writev now (left to
      // node:http, the socket would stay corked to the next tick and look behind just below).
      const socket = res.socket;
      socket?.cork();
      for (const chunk of text.chunks) res.write(chunk);
      res.end();
      socket?.uncork();
    }
    // end() has handed the reply to the socket, which wrote what the kernel took at once.
    this.watchBacklog(res.req.socket);
  }

  /**
   * Bounds the reply bytes held for clients that do not read (maxBufferedBytes, all connections
   * together): a connection that falls behind is noted, and while the total is over the bound the
   * connections that fell behind first are closed. A client that reads catches up and is forgotten.
   * Without it, 50 clients that asked for 8 MB each and never read kept ~400 MB at the node for as
   * long as they stayed connected, and 1,000 such clients would have taken 8 GB
   * (test/load/limitsUnderAttack.test.ts). At most one warning per 10 s says how many were closed.
   */
  private watchBacklog(socket: Socket): void {
    if (!socket.destroyed && socket.writableLength > 0 && !this.behind.has(socket)) {
      this.behind.add(socket);
      const forget = (): void => {
        this.behind.delete(socket);
        socket.off("drain", forget);
        socket.off("close", forget);
      };
      socket.on("drain", forget);
      socket.on("close", forget);
    }
    let total = 0;
    for (const held of this.behind) total += held.writableLength;
    for (const held of this.behind) {
      if (total <= this.options.maxBufferedBytes) break;
      total -= held.writableLength;
      this.behind.delete(held);
      held.destroy();
      this.shed.count++;
    }
    const now = Date.now();
    if (this.shed.count > 0 && now - this.shed.loggedAt > 10_000) {
      this.log.warn(
        { connections: this.shed.count, maxBufferedBytes: this.options.maxBufferedBytes },
        "closed connections that did not take their replies",
      );
      this.shed = { count: 0, loggedAt: now };
    }
  }
}
