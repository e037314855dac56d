import { TX_REJECT_REASONS, type TxRejectReason } from "../chain/index.ts";
import { RPC_ERROR_CODES, type RpcErrorCode } from "./errors.ts";

/**
 * Which errors a method can answer with, as data: one entry per code and `data.reason`. The
 * OpenRPC document (rpc.discover) carries `message`; docs/rpc.md (scripts/genRpcDocs.ts) carries
 * `detail`. Limits are named by their setting, not restated: docs/rpc.md's limits table gives
 * their defaults from node/settings.ts.
 */
export interface MethodErrorDoc {
  code: RpcErrorCode;
  message: string;
  /** The stable `data.reason`, where the code has one. */
  reason?: string;
  /** When it happens, in full (Markdown). */
  detail: string;
}

const C = RPC_ERROR_CODES;

/** What any method can answer, whatever it does. */
export const COMMON_ERRORS: readonly MethodErrorDoc[] = [
  {
    code: C.invalidParams,
    reason: "invalid_params",
    message: "params missing, unknown or mistyped",
    detail:
      "`params` is not an object, has an unknown member, or a member is missing, mistyped or out of range (`data.path` names it).",
  },
  {
    code: C.limitExceeded,
    reason: "response_too_large",
    message: "the result exceeds the response limit",
    detail: "The serialized result would exceed the response limit (`rpc.max_response_bytes`).",
  },
  {
    code: C.internalError,
    message: "internal fault; data.fault_id finds it in the node's log",
    detail: "An internal fault; `data.fault_id` finds it in the node's log.",
  },
];

/** chain_getBlocks, chain_getBlockHeaders. */
export const RANGE_ERRORS: readonly MethodErrorDoc[] = [
  {
    code: C.invalidParams,
    reason: "invalid_params",
    message: "params missing, unknown or mistyped, or from greater than to",
    detail: "`from` is greater than `to`.",
  },
  {
    code: C.limitExceeded,
    reason: "range_too_large",
    message: "to − from + 1 exceeds the range limit",
    detail: "`to − from + 1` exceeds the block range limit (`rpc.max_block_range`, given as `data.limit`).",
  },
];

/** Methods that take a block number: the node may have pruned that block (`storage.retain_blocks`). */
export const PRUNED_ERRORS: readonly MethodErrorDoc[] = [
  {
    code: C.limitExceeded,
    reason: "pruned",
    message: "the block was pruned; data.first_available is the lowest block above 0 still kept",
    detail:
      "The block (or a block of the range) is older than this node keeps (`storage.retain_blocks`); `data.first_available` is the lowest block above 0 it still holds (block 0 is always kept). Ask an archive node.",
  },
];

/** chain_getValue, chain_getProof: reads of the data tree at a height. */
export const STATE_READ_ERRORS: readonly MethodErrorDoc[] = [
  {
    code: C.invalidParams,
    reason: "invalid_params",
    message: "params missing, unknown or mistyped; a malformed ref; block_number above the head",
    detail:
      "`ref` is not a valid path (empty, `a//b`, control characters, over 32 segments or 512 characters), or `block_number` is above the head (the message names the head).",
  },
  {
    code: C.limitExceeded,
    reason: "pruned",
    message: "the state of that block is no longer kept; data.first_available is the lowest height readable",
    detail:
      "The block's state is older than this node keeps (`storage.retain_states`, `storage.retain_blocks`); `data.first_available` is the lowest height it can answer for. Ask an archive node.",
  },
  {
    code: C.limitExceeded,
    reason: "response_too_large",
    message:
      "the subtree at ref holds more leaves than one answer carries (data.limit); read a narrower path",
    detail:
      "The subtree holds more leaves than `rpc.max_value_leaves` (chain_getValue) or `rpc.max_proof_leaves` (chain_getProof), given as `data.limit`; read a narrower path.",
  },
];

/** chain_getTransactionsByAddress: its range, and a `from_block` the node no longer keeps. */
export const HISTORY_ERRORS: readonly MethodErrorDoc[] = [
  {
    code: C.invalidParams,
    reason: "invalid_params",
    message: "params missing, unknown or mistyped, or from_block greater than to_block",
    detail:
      "`from_block` is greater than `to_block`. A `limit` outside 1–100, or a `cursor` that is not a `next_cursor` passed back unchanged, is refused like any other mistyped member.",
  },
  {
    code: C.limitExceeded,
    reason: "pruned",
    message: "from_block was pruned; data.first_available is the lowest block above 0 still kept",
    detail:
      "`from_block` was given and the range reaches a block older than this node keeps (`storage.retain_blocks`); `data.first_available` is the lowest block above 0 it still holds. Without `from_block` the listing ends at that block instead.",
  },
];

/** Why each rejection happens. Typed by the closed union: a new reason cannot go undocumented. */
export const TX_REJECT_REASON_DETAILS: Readonly<Record<TxRejectReason, string>> = {
  invalid_signature: "The signature is malformed, high-s, or no key recovers from it.",
  wrong_chain_id: "The signature's v does not encode this node's chain id (see `net_chainId`).",
  hash_mismatch: "The hash inside the signature is not the hash of the submitted body.",
  nonce_too_low:
    "The nonce is below the sender's next nonce (committed nonce plus the sender's pending ordered transactions). `data.expected`, `data.actual`.",
  nonce_too_high:
    "The nonce is above the sender's next nonce; there is no queue for future nonces. `data.expected`, `data.actual`.",
  already_known:
    "A transaction with this hash is pending or committed (an unordered one can never be replayed).",
  stale_timestamp:
    "An unordered transaction (nonce -1) has a timestamp outside the node's clock ± the replay window. `data.expected` (node clock), `data.actual`.",
  tx_too_large:
    "The canonical JSON of the body exceeds the transaction size limit. `data.expected` (limit), `data.actual`.",
  pool_full: "The pool holds its limit of pending transactions.",
  account_pool_full: "The sender holds its limit of pending transactions.",
  permission_denied:
    "The sender may not write `operation.ref` (see the path table), or the transfer/staking key was already used (committed or pending).",
  insufficient_balance:
    "The amount exceeds the committed balance minus the sender's pending debits (or an unstake exceeds the stake). `data.expected` (amount), `data.actual` (available).",
  invalid_operation:
    'The operation is not exactly `{type: "SET_VALUE", ref, value}`, its path is malformed, its amount is not a valid safe integer, its value nests too deep, or it holds text storage cannot keep exactly (a lone UTF-16 surrogate, an object member named `__proto__`).',
};

const txRejected = (suffix: string): MethodErrorDoc[] =>
  TX_REJECT_REASONS.map((reason) => ({
    code: C.txRejected,
    reason,
    message: `transaction rejected: ${reason}`,
    detail: `${TX_REJECT_REASON_DETAILS[reason]}${suffix}`,
  }));

/** Every reason admission can refuse a transaction for (DESIGN.md §3): chain_sendSignedTransaction. */
export const TX_REJECTED_ERRORS: readonly MethodErrorDoc[] = txRejected("");

/** chain_sendSignedTransactionBatch: the same reasons, for the first failing entry, and the batch limit. */
export const BATCH_ERRORS: readonly MethodErrorDoc[] = [
  {
    code: C.invalidRequest,
    reason: "batch_too_large",
    message: "tx_list has more entries than the batch limit",
    detail: "`tx_list` has more entries than the batch limit (`rpc.max_batch_items`).",
  },
  ...txRejected(" `data.index` names the first failing entry; nothing is admitted."),
];
