import { TxRejectedError } from "../chain/index.ts";

/** JSON-RPC error codes used by this node (DESIGN.md §2). */
export const RPC_ERROR_CODES = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  txRejected: -32003,
  limitExceeded: -32005,
} as const;

export type RpcErrorCode = (typeof RPC_ERROR_CODES)[keyof typeof RPC_ERROR_CODES];

export interface RpcErrorObject {
  code: number;
  message: string;
  data?: Record<string, unknown>;
}

/** An error meant for the client, with a stable `data.reason`. */
export class RpcError extends Error {
  readonly code: RpcErrorCode;
  readonly data: Record<string, unknown> | undefined;

  constructor(code: RpcErrorCode, message: string, data?: Record<string, unknown>) {
    super(message);
    this.name = "RpcError";
    this.code = code;
    this.data = data;
  }

  toObject(): RpcErrorObject {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}

export const invalidParams = (message: string, extra: Record<string, unknown> = {}): RpcError =>
  new RpcError(RPC_ERROR_CODES.invalidParams, message, { reason: "invalid_params", ...extra });

export const invalidRequest = (message: string, reason = "invalid_request"): RpcError =>
  new RpcError(RPC_ERROR_CODES.invalidRequest, message, { reason });

export const limitExceeded = (
  message: string,
  reason: string,
  extra: Record<string, unknown> = {},
): RpcError => new RpcError(RPC_ERROR_CODES.limitExceeded, message, { reason, ...extra });

/** A block (or state) the node no longer keeps: an error, never a null that reads as "none". */
export const pruned = (what: string, firstAvailable: number): RpcError =>
  limitExceeded(`${what} was pruned; the lowest kept above 0 is ${firstAvailable}`, "pruned", {
    first_available: firstAvailable,
  });

/**
 * The one place where errors become JSON-RPC errors. Domain rejections keep their reason;
 * anything unexpected is reported as -32603 with an id the operator can find in the log.
 */
export function toRpcError(
  error: unknown,
  faultId: () => string,
): { error: RpcErrorObject; unexpected: boolean } {
  if (error instanceof RpcError) return { error: error.toObject(), unexpected: false };
  if (error instanceof TxRejectedError) {
    const data: Record<string, unknown> = { reason: error.reason, ...error.detail };
    if (error.index !== undefined) data.index = error.index;
    return { error: { code: RPC_ERROR_CODES.txRejected, message: error.message, data }, unexpected: false };
  }
  const id = faultId();
  return {
    error: {
      code: RPC_ERROR_CODES.internalError,
      message: `internal error (fault id ${id})`,
      data: { fault_id: id },
    },
    unexpected: true,
  };
}
