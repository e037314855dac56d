// The page's one WebSocket (/ws): JSON-RPC calls and chain_subscribe notifications (docs/websocket.md).
import { RpcError, request } from "./rpc.js";

/**
 * One WebSocket for the page. Subscriptions survive reconnects: their params are kept and sent
 * again when the socket reopens (the server gives new ids).
 */
export class LiveFeed {
  constructor(onStatus) {
    this.onStatus = onStatus;
    this.socket = null;
    this.pending = new Map();
    this.subscriptions = new Set();
    this.retryMs = 500;
    this.connect();
  }

  get open() {
    return this.socket !== null && this.socket.readyState === WebSocket.OPEN;
  }

  connect() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const socket = new WebSocket(`${scheme}://${location.host}/ws`);
    this.socket = socket;
    socket.addEventListener("open", () => {
      this.retryMs = 500;
      this.onStatus(true);
      for (const sub of this.subscriptions) this.start(sub);
    });
    socket.addEventListener("message", (event) => this.receive(event.data));
    socket.addEventListener("close", () => {
      this.onStatus(false);
      for (const sub of this.subscriptions) sub.id = null;
      for (const waiter of this.pending.values()) waiter.reject(new Error("connection closed"));
      this.pending.clear();
      setTimeout(() => this.connect(), this.retryMs);
      this.retryMs = Math.min(this.retryMs * 2, 10_000);
    });
  }

  call(method, params) {
    return new Promise((resolve, reject) => {
      if (!this.open) {
        reject(new Error("not connected"));
        return;
      }
      const call = request(method, params);
      this.pending.set(call.id, { resolve, reject });
      this.socket.send(JSON.stringify(call));
    });
  }

  receive(text) {
    let message;
    try {
      message = JSON.parse(text);
    } catch {
      return;
    }
    if (message.method === "chain_subscription") {
      for (const sub of this.subscriptions) {
        if (sub.id === message.params.subscription) sub.onResult(message.params.result);
      }
      return;
    }
    const waiter = this.pending.get(message.id);
    if (waiter === undefined) return;
    this.pending.delete(message.id);
    if (message.error !== undefined) waiter.reject(new RpcError(message.error));
    else waiter.resolve(message.result);
  }

  async start(sub) {
    try {
      const id = await this.call("chain_subscribe", sub.params);
      if (this.subscriptions.has(sub)) {
        sub.id = id;
        sub.onStart?.();
      } else {
        this.call("chain_unsubscribe", { subscription: id }).catch(() => {});
      }
    } catch {
      // Not connected any more: the next "open" subscribes again.
    }
  }

  /**
   * Subscribes; returns the function that ends it. `onStart`, if given, runs each time the
   * subscription is in place (first, and after each reconnect): nothing is replayed, so what
   * changed before then is for the caller to read again.
   */
  subscribe(params, onResult, onStart) {
    const sub = { params, onResult, onStart, id: null };
    this.subscriptions.add(sub);
    if (this.open) this.start(sub);
    return () => {
      if (!this.subscriptions.delete(sub)) return;
      if (sub.id !== null && this.open) {
        this.call("chain_unsubscribe", { subscription: sub.id }).catch(() => {});
      }
    };
  }
}
