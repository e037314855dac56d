/**
 * Why a transaction is refused. The reasons are DESIGN.md §2's `data.reason` strings; the RPC edge
 * maps them to JSON-RPC -32003, and node/network.ts maps them to a gossip verdict (the reasons that
 * prove the sender forwarded garbage reject the message; the others ignore it).
 */
export const TX_REJECT_REASONS = [
  "invalid_signature",
  "wrong_chain_id",
  "hash_mismatch",
  "nonce_too_low",
  "nonce_too_high",
  "already_known",
  "stale_timestamp",
  "tx_too_large",
  "pool_full",
  "account_pool_full",
  "permission_denied",
  "insufficient_balance",
  "invalid_operation",
] as const;

export type TxRejectReason = (typeof TX_REJECT_REASONS)[number];

export interface TxRejectDetail {
  expected?: number | string;
  actual?: number | string;
}

export class TxRejectedError extends Error {
  readonly reason: TxRejectReason;
  readonly detail: TxRejectDetail;
  /** Position in a batch submission, when the transaction came in one. */
  readonly index: number | undefined;

  constructor(reason: TxRejectReason, message: string, detail: TxRejectDetail = {}, index?: number) {
    super(message);
    this.name = "TxRejectedError";
    this.reason = reason;
    this.detail = detail;
    this.index = index;
  }

  atIndex(index: number): TxRejectedError {
    return new TxRejectedError(this.reason, `transaction ${index}: ${this.message}`, this.detail, index);
  }
}

/** Execution-time failure codes recorded in a committed transaction's result. */
export const EXEC_FAILURE_CODES = {
  insufficient_balance: 1,
  permission_denied: 2,
  invalid_operation: 3,
} as const;

export type ExecFailureReason = keyof typeof EXEC_FAILURE_CODES;
