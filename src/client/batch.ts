import type { RpcError } from "./errors.ts";
import type { Transport } from "./transport.ts";
import type { RpcCall, RpcResult } from "./types.ts";

/** One answer of a batch: the call's typed result, or the error the node gave for that call alone. */
export type BatchEntry<R> = { ok: true; result: R } | { ok: false; error: RpcError };

/** The answers of a batch, one per call and in call order, each typed by its method. */
export type BatchResults<T extends readonly RpcCall[]> = {
  -readonly [K in keyof T]: T[K] extends { method: infer M extends RpcCall["method"] }
    ? BatchEntry<RpcResult<M>>
    : never;
};

/**
 * Sends the calls as one JSON-RPC batch (one POST). Each call succeeds or fails on its own; a
 * batch refused as a whole (over the node's limit of 100 calls: InvalidRequestError
 * `batch_too_large`) or an HTTP/transport failure rejects the promise instead.
 */
export async function sendBatch<const T extends readonly RpcCall[]>(
  transport: Transport,
  calls: T,
): Promise<BatchResults<T>> {
  // The transport keeps call order; only the static types are added here.
  return (await transport.batch(calls)) as BatchResults<T>;
}
