/**
 * Errors the client throws. Every one extends ClientError. A JSON-RPC error becomes the RpcError
 * subclass of its code (one class per code of DESIGN.md §2, as viem does), so callers branch with
 * `instanceof` and read the stable `reason` (the node's `error.data.reason`), never the message.
 */

/** JSON-RPC error codes the node uses (mirrors src/rpc/errors.ts; a test keeps them equal). */
export const RPC_ERROR_CODES = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  transactionRejected: -32003,
  limitExceeded: -32005,
} as const;

/** A known string union that stays open: a newer node may send reasons this client predates. */
export type OpenUnion<T extends string> = T | (string & NonNullable<unknown>);

/** Why the node refused a transaction (`data.reason` of -32003). */
export type TransactionRejectReason =
  | "invalid_signature"
  | "wrong_chain_id"
  | "hash_mismatch"
  | "nonce_too_low"
  | "nonce_too_high"
  | "already_known"
  | "stale_timestamp"
  | "tx_too_large"
  | "pool_full"
  | "account_pool_full"
  | "permission_denied"
  | "insufficient_balance"
  | "invalid_operation";

/** The `error` member of a JSON-RPC reply. */
export interface RpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/** Base of every error the client throws. */
export class ClientError extends Error {
  override name = "ClientError";
}

const numberOrString = (value: unknown): number | string | undefined =>
  typeof value === "number" || typeof value === "string" ? value : undefined;

/** A JSON-RPC error reply. Subclasses name the code; unknown codes stay plain RpcError. */
export class RpcError extends ClientError {
  override name = "RpcError";
  readonly code: number;
  /** `error.data.reason`: the stable, machine-readable part (absent for some codes). */
  readonly reason: string | undefined;
  /** `error.data` as sent (`expected`, `actual`, `index`, `path`, `fault_id`…). */
  readonly data: Readonly<Record<string, unknown>> | undefined;
  /** The method whose call failed, when known (a batch-level error has none). */
  readonly method: string | undefined;

  constructor(error: RpcErrorObject, method?: string) {
    super(method === undefined ? error.message : `${method}: ${error.message}`);
    this.code = error.code;
    const data = error.data;
    this.data =
      data !== null && typeof data === "object" && !Array.isArray(data)
        ? (data as Record<string, unknown>)
        : undefined;
    const reason = this.data?.reason;
    this.reason = typeof reason === "string" ? reason : undefined;
    this.method = method;
  }
}

/** -32700: the node could not parse the body as JSON. */
export class ParseError extends RpcError {
  override name = "ParseError";
}

/** -32600: not a JSON-RPC 2.0 request, an empty batch, or a batch over the limit (`batch_too_large`). */
export class InvalidRequestError extends RpcError {
  override name = "InvalidRequestError";
}

/** -32601: the node has no such method. */
export class MethodNotFoundError extends RpcError {
  override name = "MethodNotFoundError";
}

/** -32602: missing, unknown or mistyped params; `path` names the offending member. */
export class InvalidParamsError extends RpcError {
  override name = "InvalidParamsError";
  get path(): string | undefined {
    const path = this.data?.path;
    return typeof path === "string" ? path : undefined;
  }
}

/** -32603: a fault inside the node; `faultId` finds it in the node's log. */
export class InternalError extends RpcError {
  override name = "InternalError";
  get faultId(): string | undefined {
    const id = this.data?.fault_id;
    return typeof id === "string" ? id : undefined;
  }
}

/** -32003: the node refused a transaction; nothing was admitted. */
export class TransactionRejectedError extends RpcError {
  override name = "TransactionRejectedError";
  declare readonly reason: OpenUnion<TransactionRejectReason> | undefined;

  /** What the node expected (the next nonce, the limit, the amount…), when it says. */
  get expected(): number | string | undefined {
    return numberOrString(this.data?.expected);
  }
  /** What it got (the nonce sent, the size, the available balance…), when it says. */
  get actual(): number | string | undefined {
    return numberOrString(this.data?.actual);
  }
  /** Position of the failing entry in `chain_sendSignedTransactionBatch`. */
  get index(): number | undefined {
    const index = this.data?.index;
    return typeof index === "number" ? index : undefined;
  }
}

/** -32005: a limit was exceeded (`range_too_large`, `response_too_large`, `body_too_large`). */
export class LimitExceededError extends RpcError {
  override name = "LimitExceededError";
}

type RpcErrorClass = new (error: RpcErrorObject, method?: string) => RpcError;

const CLASS_BY_CODE: ReadonlyMap<number, RpcErrorClass> = new Map<number, RpcErrorClass>([
  [RPC_ERROR_CODES.parseError, ParseError],
  [RPC_ERROR_CODES.invalidRequest, InvalidRequestError],
  [RPC_ERROR_CODES.methodNotFound, MethodNotFoundError],
  [RPC_ERROR_CODES.invalidParams, InvalidParamsError],
  [RPC_ERROR_CODES.internalError, InternalError],
  [RPC_ERROR_CODES.transactionRejected, TransactionRejectedError],
  [RPC_ERROR_CODES.limitExceeded, LimitExceededError],
]);

/** The error class of a JSON-RPC error object's code. */
export function rpcErrorFromObject(error: RpcErrorObject, method?: string): RpcError {
  const ErrorClass = CLASS_BY_CODE.get(error.code) ?? RpcError;
  return new ErrorClass(error, method);
}

/**
 * The node answered with an HTTP status other than 200 (413 body too large, 415 wrong content
 * type, 404 wrong path…). The node puts a JSON-RPC error in most such bodies: `rpcError`.
 */
export class HttpError extends ClientError {
  override name = "HttpError";
  readonly status: number;
  readonly body: string;
  readonly rpcError: RpcError | undefined;

  constructor(status: number, statusText: string, body: string, rpcError: RpcError | undefined) {
    const detail = rpcError === undefined ? "" : `: ${rpcError.message}`;
    super(`HTTP ${status} ${statusText}${detail}`);
    this.status = status;
    this.body = body;
    this.rpcError = rpcError;
  }

  /** `data.reason` of the JSON-RPC error in the body (e.g. `body_too_large`), if any. */
  get reason(): string | undefined {
    return this.rpcError?.reason;
  }
}

/** No usable reply: the connection failed, the request timed out, or the reply is not JSON-RPC. */
export class TransportError extends ClientError {
  override name = "TransportError";
}

/** `waitForTransaction` gave up before the transaction was committed. */
export class WaitTimeoutError extends ClientError {
  override name = "WaitTimeoutError";
  readonly hash: string;
  /** Whether the node still listed the transaction as pending when the wait ended. */
  readonly pending: boolean;

  constructor(hash: string, timeoutMs: number, pending: boolean) {
    const state = pending ? "still pending" : "not known to the node";
    super(`transaction ${hash} was not committed within ${timeoutMs} ms (${state})`);
    this.hash = hash;
    this.pending = pending;
  }
}

/** Why a proof did not verify (`ProofVerificationError.reason`). */
export type ProofFailureReason =
  /** The result is not of the agreed shape: a member missing or mistyped, bad hex, unsorted leaves. */
  | "malformed_result"
  /** A proof node is not canonical RLP, or not a trie node of the shape its place requires. */
  | "malformed_node"
  /** The first node does not hash to the state root (or the result names another state root). */
  | "root_mismatch"
  /** A node does not hash to the reference its parent holds. */
  | "hash_mismatch"
  /** The proof ends before the key's path reaches a leaf or a proven gap. */
  | "incomplete_proof"
  /** Nodes follow the end of the key's path: a proof carries nothing it does not use. */
  | "extra_nodes"
  /** The value the result states is not the value the proof proves. */
  | "value_mismatch"
  /** The result answers another path than the one asked, or a leaf lies outside the subtree. */
  | "ref_mismatch"
  /** The block header does not hash to its hash or the trusted one, or names another state root or height. */
  | "header_mismatch";

/**
 * A proof, or the header it was checked against, did not verify: nothing in the answer may be
 * trusted. `ref` names the path whose proof failed (a subtree's leaf, for a leaf's proof).
 */
export class ProofVerificationError extends ClientError {
  override name = "ProofVerificationError";
  readonly reason: ProofFailureReason;
  readonly ref: string | undefined;

  constructor(reason: ProofFailureReason, message: string, ref?: string) {
    super(ref === undefined ? message : `${ref}: ${message}`);
    this.reason = reason;
    this.ref = ref;
  }
}
