import { TX_REJECT_REASONS } from "../chain/index.ts";
import { RPC_ERROR_CODES, type RpcErrorCode } from "./errors.ts";

/**
 * Which errors a method can answer with, as data for the OpenRPC document: one entry per code and
 * `data.reason`. The prose reference (docs/rpc.md) explains each reason at length.
 */
export interface MethodErrorDoc {
  code: RpcErrorCode;
  message: string;
  /** The stable `data.reason`, where the code has one. */
  reason?: string;
}

const C = RPC_ERROR_CODES;

/** What any method can answer, whatever it does. */
export const COMMON_ERRORS: readonly MethodErrorDoc[] = [
  { code: C.invalidParams, reason: "invalid_params", message: "params missing, unknown or mistyped" },
  { code: C.limitExceeded, reason: "response_too_large", message: "the result exceeds the response limit" },
  { code: C.internalError, message: "internal fault; data.fault_id finds it in the node's log" },
];

/** chain_getBlocks, chain_getBlockHeaders. */
export const RANGE_ERRORS: readonly MethodErrorDoc[] = [
  { code: C.limitExceeded, reason: "range_too_large", message: "to − from + 1 exceeds the range limit" },
];

/** Every reason admission can refuse a transaction for (DESIGN.md §3). */
export const TX_REJECTED_ERRORS: readonly MethodErrorDoc[] = TX_REJECT_REASONS.map((reason) => ({
  code: C.txRejected,
  reason,
  message: `transaction rejected: ${reason}`,
}));

export const BATCH_TOO_LARGE_ERROR: MethodErrorDoc = {
  code: C.invalidRequest,
  reason: "batch_too_large",
  message: "tx_list has more entries than the batch limit",
};
