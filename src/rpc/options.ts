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
  /** Send permissive CORS headers (dev mode). */
  cors: boolean;
}

export const defaultRpcServerOptions: RpcServerOptions = {
  host: "127.0.0.1",
  port: 8080,
  maxBodyBytes: 5 * 1024 * 1024,
  maxBatchItems: 100,
  maxResponseBytes: 32 * 1024 * 1024,
  maxBlockRange: 100,
  cors: false,
};
