export interface RpcServerOptions {
  host: string;
  /** 0 picks a free port (tests). */
  port: number;
  /** Largest request body, bytes; larger gets HTTP 413. */
  maxBodyBytes: number;
  /** Requests in one JSON-RPC batch. */
  maxBatchItems: number;
  /** Largest serialized result of one call, bytes; larger gets -32005 response_too_large. */
  maxResponseBytes: number;
  /** Largest from..to span of the range methods. */
  maxBlockRange: number;
  /** Send permissive CORS headers (dev mode); also lets pages of any origin open /ws. */
  cors: boolean;
  /** Open WebSocket connections at /ws; one more is refused with HTTP 503. */
  wsMaxConnections: number;
  /** Subscriptions one WebSocket connection may hold; one more is -32005 too_many_subscriptions. */
  wsMaxSubscriptions: number;
  /**
   * Bytes queued for a WebSocket client that does not read fast enough; beyond it the connection
   * is dropped, so a slow client cannot make the node's memory grow.
   */
  wsMaxBufferedBytes: number;
  /** Messages of one WebSocket connection answered at once; beyond it the node stops reading it. */
  wsMaxInFlight: number;
}

export const defaultRpcServerOptions: RpcServerOptions = {
  host: "127.0.0.1",
  port: 8080,
  maxBodyBytes: 5 * 1024 * 1024,
  maxBatchItems: 100,
  maxResponseBytes: 32 * 1024 * 1024,
  maxBlockRange: 100,
  cors: false,
  wsMaxConnections: 256,
  wsMaxSubscriptions: 32,
  wsMaxBufferedBytes: 4 * 1024 * 1024,
  wsMaxInFlight: 16,
};

/**
 * Observers of the server's work (metrics live in node/, so the transport stays free of them).
 * A hook that throws is logged and ignored: watching must never break serving.
 */
export interface RpcServerHooks {
  /**
   * After each call is answered. `method` is the route name; "unknown" for a method the table does
   * not have and "invalid" for a call that was no valid request (so labels stay a closed set).
   * `outcome` is "ok" or the JSON-RPC error code.
   */
  onCall?(method: string, outcome: number | "ok", seconds: number): void;
}
