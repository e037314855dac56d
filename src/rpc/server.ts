import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { Logger } from "pino";
import {
  invalidParams,
  invalidRequest,
  limitExceeded,
  RPC_ERROR_CODES,
  type RpcErrorObject,
  toRpcError,
} from "./errors.ts";
import { RawJson } from "./rawJson.ts";
import type { RpcServerHooks, RpcServerOptions } from "./options.ts";
import type { Route } from "./routes.ts";

type JsonRpcId = string | number | null;

/**
 * A handler for a path other than the JSON-RPC endpoint (health, metrics, the explorer). It gets
 * the request untouched (any method) and answers it itself.
 */
export type HttpHandler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

/** Takes over an HTTP upgrade (WebSocket) for its path; it owns the socket from then on. */
export type UpgradeHandler = (req: IncomingMessage, socket: Duplex, head: Buffer) => void;

interface JsonRpcResponse {
  jsonrpc: "2.0";
  id: JsonRpcId;
  result?: unknown;
  error?: RpcErrorObject;
}

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

const errorResponse = (id: JsonRpcId, error: RpcErrorObject): JsonRpcResponse => ({
  jsonrpc: "2.0",
  id,
  error,
});

const errorText = (id: JsonRpcId, error: RpcErrorObject): string => JSON.stringify(errorResponse(id, error));

/** A reply as JSON text, or as its UTF-8 bytes when a result came serialized (RawJson). */
type Reply = string | Buffer;

const textOf = (reply: Reply): string => (typeof reply === "string" ? reply : reply.toString("utf8"));

/** What is left of one batch's maxResponseBytes for the results of its remaining calls. */
interface ReplyBudget {
  bytesLeft: number;
}

const batchTooLarge = (limit: number) =>
  limitExceeded(`the results of this batch exceed ${limit} bytes together`, "response_too_large", { limit });

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
 * JSON-RPC 2.0 over HTTP (DESIGN.md §2): HTTP gatekeeping (paths, 405/413/415), the envelope,
 * batches and notifications, result size limits and the error envelope. It knows routes by name
 * only; what a method does is the route's business.
 */
export class RpcServer {
  private readonly routes: ReadonlyMap<string, Route>;
  private readonly options: RpcServerOptions;
  private readonly log: Logger;
  private readonly server: Server;
  private readonly httpHandlers = new Map<string, HttpHandler>();
  private readonly upgradeHandlers = new Map<string, UpgradeHandler>();
  private readonly hooks: RpcServerHooks;
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
    this.routes = routes;
    this.options = options;
    this.log = log;
    this.hooks = hooks;
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

  /**
   * Dispatches one parsed JSON-RPC payload (object or batch) and returns the reply as JSON text
   * (each result is serialized once, when its size is checked); undefined means "no content".
   */
  async handlePayload(payload: unknown): Promise<string | undefined> {
    const reply = await this.replyTo(payload);
    return reply === undefined ? undefined : textOf(reply);
  }

  /** As handlePayload, but a single call's reply may be bytes (see RawJson): HTTP sends them as is. */
  private async replyTo(payload: unknown): Promise<Reply | undefined> {
    if (!Array.isArray(payload)) return this.handleCall(payload);
    if (payload.length === 0) {
      this.reportCall("invalid", RPC_ERROR_CODES.invalidRequest, 0);
      return errorText(null, invalidRequest("empty batch").toObject());
    }
    if (payload.length > this.options.maxBatchItems) {
      this.reportCall("invalid", RPC_ERROR_CODES.invalidRequest, 0);
      return errorText(
        null,
        invalidRequest(
          `batch of ${payload.length} exceeds ${this.options.maxBatchItems}`,
          "batch_too_large",
        ).toObject(),
      );
    }
    // Calls start in order (each handler's synchronous part runs before the next one starts),
    // so a batch of dependent transactions is admitted in the order it was written.
    // The results of one batch share one maxResponseBytes budget. Without it a batch of 100
    // chain_getBlocks of 8 MB each made the server build all 800 MB of results, fail to join them
    // (HTTP 500, "Invalid string length") and grow by 1.8 GB (test/load/limitsUnderAttack.test.ts).
    // A synchronous handler's result is counted before the next call starts, so the calls past
    // the budget never run.
    const budget: ReplyBudget = { bytesLeft: this.options.maxResponseBytes };
    const responses = await Promise.all(payload.map((call) => this.handleCall(call, budget)));
    const answered = responses.flatMap((r) => (r === undefined ? [] : [textOf(r)]));
    return answered.length === 0 ? undefined : `[${answered.join(",")}]`;
  }

  private async handleCall(call: unknown, budget?: ReplyBudget): Promise<Reply | undefined> {
    if (call === null || typeof call !== "object" || Array.isArray(call)) {
      this.reportCall("invalid", RPC_ERROR_CODES.invalidRequest, 0);
      return errorText(null, invalidRequest("a request is a JSON object").toObject());
    }
    const request = call as Record<string, unknown>;
    const hasId = "id" in request;
    const id = request.id;
    const validId = id === null || typeof id === "string" || (typeof id === "number" && Number.isFinite(id));
    if (hasId && !validId) {
      this.reportCall("invalid", RPC_ERROR_CODES.invalidRequest, 0);
      return errorText(null, invalidRequest("id must be a string, number or null").toObject());
    }
    const replyId = hasId ? (id as JsonRpcId) : null;
    if (request.jsonrpc !== "2.0" || typeof request.method !== "string") {
      this.reportCall("invalid", RPC_ERROR_CODES.invalidRequest, 0);
      return errorText(
        replyId,
        invalidRequest('expected {"jsonrpc": "2.0", "method": String, ...}').toObject(),
      );
    }
    const response = await this.invoke(request.method, request.params, replyId, budget);
    return hasId ? response : undefined; // a notification gets no reply
  }

  private async invoke(name: string, params: unknown, id: JsonRpcId, budget?: ReplyBudget): Promise<Reply> {
    const started = performance.now();
    const route = this.routes.get(name);
    if (route === undefined) {
      this.reportCall("unknown", RPC_ERROR_CODES.methodNotFound, (performance.now() - started) / 1000);
      return errorText(id, {
        code: RPC_ERROR_CODES.methodNotFound,
        message: `method ${name} does not exist`,
      });
    }
    const limit = this.options.maxResponseBytes;
    try {
      const args = params === undefined ? {} : params;
      if (args === null || typeof args !== "object" || Array.isArray(args)) {
        throw invalidParams("params must be an object of named members");
      }
      if (!route.check.Check(args)) {
        const first = route.check.Errors(args).First();
        const where = first?.path ? `params${first.path.replaceAll("/", ".")}` : "params";
        throw invalidParams(`${where}: ${first?.message ?? "invalid"}`, { path: first?.path ?? "" });
      }
      if (budget !== undefined && budget.bytesLeft <= 0) throw batchTooLarge(limit);
      // Not `await` on a plain value: the budget must be charged before the next call of a batch starts.
      const produced: unknown = route.definition.handler(args);
      const value = produced instanceof Promise ? ((await produced) as unknown) : produced;
      const result = value instanceof RawJson ? value : JSON.stringify(value ?? null);
      const size = result instanceof RawJson ? result.size : Buffer.byteLength(result);
      if (size > limit) {
        throw limitExceeded(`result is ${size} bytes; the limit is ${limit}`, "response_too_large");
      }
      if (budget !== undefined) {
        if (size > budget.bytesLeft) {
          budget.bytesLeft = 0;
          throw batchTooLarge(limit);
        }
        budget.bytesLeft -= size;
      }
      this.reportCall(name, "ok", (performance.now() - started) / 1000);
      const head = `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":`;
      if (typeof result === "string") return `${head}${result}}`;
      const reply = Buffer.allocUnsafe(Buffer.byteLength(head) + result.size + 1);
      const at = reply.write(head);
      result.bytes.copy(reply, at);
      reply[reply.length - 1] = 0x7d; // "}"
      return reply;
    } catch (error) {
      const mapped = toRpcError(error, randomUUID);
      this.reportCall(name, mapped.error.code, (performance.now() - started) / 1000);
      if (mapped.unexpected) {
        this.log.error(
          { err: error, method: name, faultId: mapped.error.data?.fault_id },
          "internal error in handler",
        );
      } else {
        this.log.debug(
          { method: name, code: mapped.error.code, reason: mapped.error.data?.reason },
          "request refused",
        );
      }
      return errorText(id, mapped.error);
    }
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
      this.reportCall("invalid", RPC_ERROR_CODES.parseError, 0);
      this.send(
        res,
        200,
        errorResponse(null, { code: RPC_ERROR_CODES.parseError, message: "body is not valid JSON" }),
      );
      return;
    }
    const response = await this.replyTo(payload);
    if (response === undefined) res.writeHead(204, this.corsHeaders).end();
    else this.sendText(res, 200, response);
  }

  private reportCall(method: string, outcome: number | "ok", seconds: number): void {
    if (this.hooks.onCall === undefined) return;
    try {
      this.hooks.onCall(method, outcome, seconds);
    } catch (error) {
      this.log.warn({ err: error, method }, "onCall hook failed");
    }
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
    const length = typeof text === "string" ? Buffer.byteLength(text) : text.length;
    // One header object, no setHeader: node:http validates set headers again when it merges them.
    res.writeHead(
      status,
      this.options.cors
        ? { "Content-Type": "application/json", "Content-Length": length, "Access-Control-Allow-Origin": "*" }
        : { "Content-Type": "application/json", "Content-Length": length },
    );
    res.end(text);
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
