export interface RpcServerOptions {
  host: string;
  /** 0 picks a free port (tests). */
  port: number;
  /** Largest request body, bytes; larger gets HTTP 413. */
  maxBodyBytes: number;
  /** Requests in one JSON-RPC batch. */
  maxBatchItems: number;
  /**
   * Largest serialized result of one call, and of all the results of one batch together, bytes;
   * larger gets -32005 response_too_large (in a batch: the calls past the limit, which do not run).
   */
  maxResponseBytes: number;
  /**
   * Time a client has to send a request's head, ms (node:http `headersTimeout`); after it the
   * connection gets 408 and is closed, so a slowloris client cannot hold a connection open.
   * Also applies to a connection that sends nothing at all.
   */
  headersTimeoutMs: number;
  /** Time a client has to send a whole request, head and body, ms (node:http `requestTimeout`); 408 after. */
  requestTimeoutMs: number;
  /**
   * Bytes of replies the node holds for HTTP clients that have not taken them yet, all
   * connections together. Beyond it the connections that have been behind longest are closed,
   * so clients that ask for large answers and never read them cannot make the node's memory grow.
   * Keep it above maxResponseBytes.
   */
  maxBufferedBytes: number;
  /** Largest from..to span of the range methods. */
  maxBlockRange: number;
  /** Leaves chain_getValue rebuilds one answer from; more is -32005 response_too_large. */
  maxValueLeaves: number;
  /** Leaves chain_getProof proves in one answer (a proof each); more is -32005 response_too_large. */
  maxProofLeaves: number;
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
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  maxBufferedBytes: 128 * 1024 * 1024,
  maxBlockRange: 100,
  maxValueLeaves: 10_000,
  maxProofLeaves: 256,
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
