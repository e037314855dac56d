import { type Static, type TSchema, Type } from "@sinclair/typebox";

/** Building blocks of the params schemas. They are also the source of the OpenRPC document. */
export const BlockNumber = Type.Integer({
  minimum: 0,
  maximum: Number.MAX_SAFE_INTEGER,
  description: "block number",
});
export const Index = Type.Integer({
  minimum: 0,
  maximum: Number.MAX_SAFE_INTEGER,
  description: "position in a block",
});
export const Hash = Type.String({
  pattern: "^0x[0-9a-fA-F]{64}$",
  description: "32-byte hash, 0x-prefixed hex",
});
/** Transactions per page of chain_getTransactionsByAddress (issue 18: a default of 25, at most 100). */
export const HISTORY_PAGE_DEFAULT = 25;
const HISTORY_PAGE_MAX = 100;
export const HistoryLimit = Type.Integer({
  minimum: 1,
  maximum: HISTORY_PAGE_MAX,
  description: `transactions per page (default ${HISTORY_PAGE_DEFAULT})`,
});
/**
 * A page's `next_cursor`, passed back unchanged: opaque to clients (it encodes where the next page
 * starts). Any value of this shape is a place in the chain, so the schema is its whole check.
 */
export const HistoryCursor = Type.String({
  pattern: "^0x[0-9a-fA-F]{16}$",
  description: "next_cursor of the previous page, unchanged",
});
export const Address = Type.String({
  pattern: "^0x[0-9a-fA-F]{40}$",
  description: "20-byte address, any case",
});
const Signature = Type.String({
  pattern: "^0x[0-9a-fA-F]{194}$",
  description: "97 bytes: hash ‖ r ‖ s ‖ v, 0x-prefixed hex",
});

const TransactionBody = Type.Object(
  {
    nonce: Type.Integer({ minimum: -1, maximum: Number.MAX_SAFE_INTEGER, description: "-1 for unordered" }),
    timestamp: Type.Integer({
      minimum: 0,
      maximum: Number.MAX_SAFE_INTEGER,
      description: "ms since the epoch",
    }),
    // The operation's inner shape is the chain's to judge: a wrong one is `invalid_operation`.
    operation: Type.Object({}, { description: "{type: SET_VALUE, ref, value}" }),
    parent_tx_hash: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

export const SignedTransaction = Type.Object(
  { signature: Signature, transaction: TransactionBody },
  { additionalProperties: false },
);

export const NoParams = Type.Object({}, { additionalProperties: false });

/** Params object with exactly these members (unknown members are refused: they are usually typos). */
export const Params = <T extends Record<string, TSchema>>(members: T) =>
  Type.Object(members, { additionalProperties: false });

export type SignedTransactionParams = Static<typeof SignedTransaction>;
