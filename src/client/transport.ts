import {
  HttpError,
  type RpcError,
  type RpcErrorObject,
  rpcErrorFromObject,
  TransportError,
} from "./errors.ts";

/**
 * JSON-RPC 2.0 over HTTP POST with fetch: one request or one batch per POST. It knows nothing of
 * the node's methods; typing happens a layer up (methods.ts).
 */

export interface TransportOptions {
  /** Abort a POST that has not been answered after this long. Default 30,000 ms. */
  timeoutMs?: number;
  /** Extra HTTP headers (e.g. for a proxy in front of the node). */
  headers?: Record<string, string>;
  /** The fetch to use; the global one by default (tests and proxies may swap it). */
  fetch?: typeof fetch;
}

export const DEFAULT_TIMEOUT_MS = 30_000;

export interface TransportCall {
  method: string;
  params?: unknown;
}

/** One entry of a batch reply, in the order of the calls. */
export type RawBatchEntry = { ok: true; result: unknown } | { ok: false; error: RpcError };

export interface Transport {
  readonly url: string;
  /** One call; resolves to its result or throws its RpcError (or an HttpError/TransportError). */
  request(method: string, params?: unknown): Promise<unknown>;
  /** One POST carrying every call; entries come back in call order, whatever order the node used. */
  batch(calls: readonly TransportCall[]): Promise<RawBatchEntry[]>;
}

interface JsonRpcReply {
  id: unknown;
  result?: unknown;
  error?: RpcErrorObject;
}

function isReply(value: unknown): value is JsonRpcReply {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const record = value as Record<string, unknown>;
  if (!("id" in record)) return false;
  if ("error" in record) {
    const error = record.error as Record<string, unknown> | null;
    return error !== null && typeof error === "object" && typeof error.code === "number";
  }
  return "result" in record;
}

const preview = (value: unknown): string => JSON.stringify(value)?.slice(0, 200) ?? String(value);

/** Why a fetch failed, in words: AbortSignal.timeout reports a TimeoutError. */
function failure(cause: unknown, timeoutMs: number): string {
  if (!(cause instanceof Error)) return String(cause);
  return cause.name === "TimeoutError" ? `no reply within ${timeoutMs} ms` : cause.message;
}

export function createHttpTransport(url: string, options: TransportOptions = {}): Transport {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const fetchFn = options.fetch ?? globalThis.fetch;
  // Lower-cased, so a caller's "Content-Type" replaces the default instead of joining it.
  const extra = Object.entries(options.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]);
  const headers = {
    "content-type": "application/json",
    accept: "application/json",
    ...Object.fromEntries(extra),
  };
  let nextId = 1;

  const envelope = (call: TransportCall): Record<string, unknown> => {
    const request: Record<string, unknown> = { jsonrpc: "2.0", id: nextId++, method: call.method };
    // Methods without params are sent without the member, the form the spec shows.
    if (call.params !== undefined) request.params = call.params;
    return request;
  };

  /** POSTs a body and returns the parsed JSON reply; HTTP and network failures become errors. */
  async function post(body: unknown): Promise<unknown> {
    let response: Response;
    let text: string;
    try {
      response = await fetchFn(url, {
        method: "POST",
        headers,
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
      text = await response.text(); // the timeout covers reading the body too
    } catch (cause) {
      throw new TransportError(`POST ${url} failed: ${failure(cause, timeoutMs)}`, { cause });
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    if (response.status !== 200) {
      const rpcError = isReply(json) && json.error !== undefined ? rpcErrorFromObject(json.error) : undefined;
      throw new HttpError(response.status, response.statusText, text, rpcError);
    }
    if (json === undefined)
      throw new TransportError(`POST ${url}: the reply is not JSON: ${text.slice(0, 200)}`);
    return json;
  }

  return {
    url,

    async request(method, params) {
      const request = envelope({ method, params });
      const reply = await post(request);
      if (!isReply(reply)) throw new TransportError(`${method}: not a JSON-RPC reply: ${preview(reply)}`);
      // An error about the envelope itself comes back with id null; it still answers this call.
      if (reply.error !== undefined) throw rpcErrorFromObject(reply.error, method);
      if (reply.id !== request.id) {
        throw new TransportError(`${method}: the reply's id ${preview(reply.id)} is not ${request.id}`);
      }
      return reply.result;
    },

    async batch(calls) {
      if (calls.length === 0) return []; // the node refuses an empty batch; there is nothing to ask
      const requests = calls.map(envelope);
      const reply = await post(requests);
      // A refused batch as a whole (too long) is one error object, not an array.
      if (isReply(reply) && reply.error !== undefined) throw rpcErrorFromObject(reply.error);
      if (!Array.isArray(reply))
        throw new TransportError(`batch: not a JSON-RPC batch reply: ${preview(reply)}`);
      const byId = new Map<unknown, JsonRpcReply>();
      for (const entry of reply) if (isReply(entry)) byId.set(entry.id, entry);
      return requests.map((request, i): RawBatchEntry => {
        const entry = byId.get(request.id);
        const method = calls[i]?.method ?? "";
        if (entry === undefined) throw new TransportError(`batch: no reply for call ${i} (${method})`);
        return entry.error === undefined
          ? { ok: true, result: entry.result }
          : { ok: false, error: rpcErrorFromObject(entry.error, method) };
      });
    },
  };
}
