import WebSocket, { type RawData } from "ws";

/** A JSON-RPC message as received over the WebSocket: a reply (with id) or a notification. */
export interface WsMessage {
  jsonrpc: "2.0";
  id?: number | string | null;
  result?: unknown;
  error?: { code: number; message: string; data?: Record<string, unknown> };
  method?: string;
  params?: { subscription: string; result: Record<string, unknown> };
}

let nextId = 1;

/**
 * A test's WebSocket client for /ws: keeps every message in arrival order and lets the test wait
 * (bounded) for the next one that matches. Register `close` as teardown right after `open`.
 */
export class WsClient {
  readonly socket: WebSocket;
  readonly messages: WsMessage[] = [];
  /** Messages not yet taken by a `next`. */
  private readonly queue: WsMessage[] = [];
  private readonly waiters = new Set<() => void>();
  /** Socket errors (e.g. a reset when the node drops the connection); the close follows them. */
  readonly errors: Error[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;

  private constructor(socket: WebSocket) {
    this.socket = socket;
    socket.on("message", (data: RawData) => {
      const text = Array.isArray(data)
        ? Buffer.concat(data).toString()
        : Buffer.from(data as Buffer).toString();
      const message = JSON.parse(text) as WsMessage;
      this.messages.push(message);
      this.queue.push(message);
      for (const wake of this.waiters) wake();
    });
    socket.on("error", (error) => this.errors.push(error));
    this.closed = new Promise((resolve) => {
      socket.once("close", (code, reason) => {
        resolve({ code, reason: reason.toString() });
        for (const wake of this.waiters) wake();
      });
    });
  }

  /** Opens `<http url>/ws`; rejects with the HTTP status when the node refuses the upgrade. */
  static open(httpUrl: string, headers: Record<string, string> = {}): Promise<WsClient> {
    const socket = new WebSocket(`${httpUrl.replace(/^http/, "ws")}/ws`, { headers });
    return new Promise((resolve, reject) => {
      const client = new WsClient(socket);
      socket.once("open", () => resolve(client));
      socket.once("unexpected-response", (_req, res) => {
        let body = "";
        res.on("data", (chunk: Buffer) => {
          body += chunk.toString();
        });
        res.on("end", () => reject(new UpgradeRefusedError(res.statusCode ?? 0, body)));
      });
      socket.once("error", reject);
    });
  }

  get isOpen(): boolean {
    return this.socket.readyState === WebSocket.OPEN;
  }

  send(data: string | Buffer): void {
    this.socket.send(data);
  }

  /** Sends a request and waits for the reply with its id. */
  async request(method: string, params?: unknown, timeoutMs = 3_000): Promise<WsMessage> {
    const id = nextId++;
    const call: Record<string, unknown> = { jsonrpc: "2.0", id, method };
    if (params !== undefined) call.params = params;
    this.send(JSON.stringify(call));
    return this.next(`the reply to ${method} (id ${id})`, (m) => m.id === id, timeoutMs);
  }

  /** A request that must succeed; its result. */
  async result<T = unknown>(method: string, params?: unknown): Promise<T> {
    const reply = await this.request(method, params);
    if (reply.error !== undefined)
      throw new Error(`${method} over /ws failed: ${JSON.stringify(reply.error)}`);
    return reply.result as T;
  }

  /** Subscribes; returns the subscription id. */
  subscribe(params: unknown): Promise<string> {
    return this.result<string>("chain_subscribe", params);
  }

  /** The next notification of `subscription` not taken yet. */
  notification(subscription: string, timeoutMs = 3_000): Promise<Record<string, unknown>> {
    return this.next(
      `a notification of subscription ${subscription}`,
      (m) => m.method === "chain_subscription" && m.params?.subscription === subscription,
      timeoutMs,
    ).then((m) => m.params?.result as Record<string, unknown>);
  }

  /** Takes the first queued message matching `match`, waiting up to `timeoutMs` for one. */
  next(what: string, match: (message: WsMessage) => boolean, timeoutMs = 3_000): Promise<WsMessage> {
    return new Promise((resolve, reject) => {
      const look = (): boolean => {
        const index = this.queue.findIndex(match);
        if (index === -1) return false;
        const [message] = this.queue.splice(index, 1);
        resolve(message as WsMessage);
        return true;
      };
      if (look()) return;
      if (this.socket.readyState === WebSocket.CLOSED) {
        reject(new Error(`the connection is closed; still waiting for ${what}`));
        return;
      }
      const wake = () => {
        if (look()) done();
        else if (!this.isOpen) {
          done();
          reject(new Error(`the connection closed while waiting for ${what}`));
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(wake);
      };
      this.waiters.add(wake);
    });
  }

  /** Messages of `subscription` received so far (taken or not). */
  notificationsOf(subscription: string): WsMessage[] {
    return this.messages.filter(
      (m) => m.method === "chain_subscription" && m.params?.subscription === subscription,
    );
  }

  /** Closes (if open) and waits for the close. */
  async close(): Promise<void> {
    if (this.socket.readyState === WebSocket.CLOSED) return;
    this.socket.close();
    const timer = setTimeout(() => this.socket.terminate(), 1_000);
    await this.closed;
    clearTimeout(timer);
  }
}

export class UpgradeRefusedError extends Error {
  readonly status: number;
  readonly body: string;

  constructor(status: number, body: string) {
    super(`the WebSocket upgrade was refused with HTTP ${status}: ${body}`);
    this.status = status;
    this.body = body;
  }
}
