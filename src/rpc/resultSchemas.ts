import { type TSchema, Type } from "@sinclair/typebox";

/**
 * JSON Schemas of what the methods return (spec §2, plus the members this node adds, marked
 * "beyond the spec"). They are served in the OpenRPC document (`rpc.discover`) and tested against
 * real responses, so they are strict: `additionalProperties: false` everywhere, so that a member
 * the code starts returning fails the tests until it is described here.
 */

export const Hash32 = Type.String({
  pattern: "^0x[0-9a-f]{64}$",
  description: "32 bytes, 0x-prefixed lower-case hex",
});
/** A hash that is the empty string where there is nothing to hash (block 0's parent). */
const HashOrEmpty = Type.String({
  pattern: "^(0x[0-9a-f]{64})?$",
  description: "32 bytes, 0x-prefixed lower-case hex; empty string where there is none",
});
export const ChecksumAddress = Type.String({
  pattern: "^0x[0-9a-fA-F]{40}$",
  description: "20-byte address, EIP-55 checksummed",
});
const SignatureHex = Type.String({
  pattern: "^0x[0-9a-f]{194}$",
  description: "97 bytes: hash ‖ r ‖ s ‖ v, lower-case hex",
});
export const Count = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });
const Millis = Type.Integer({
  minimum: 0,
  maximum: Number.MAX_SAFE_INTEGER,
  description: "ms since the Unix epoch",
});
export const Amount = Type.Integer({
  minimum: 0,
  maximum: Number.MAX_SAFE_INTEGER,
  description: "smallest unit, a safe integer",
});

const strict = { additionalProperties: false } as const;

const Operation = Type.Object(
  {
    type: Type.Literal("SET_VALUE"),
    ref: Type.String({ description: "path into the state tree" }),
    value: Type.Unknown({ description: "any JSON value; null deletes" }),
  },
  { ...strict, title: "Operation" },
);

/** Members every transaction shape shares, in the order the node returns them. */
const txMembers = {
  hash: Hash32,
  address: ChecksumAddress,
  signature: SignatureHex,
  timestamp: Millis,
  nonce: Type.Integer({ minimum: -1, maximum: Number.MAX_SAFE_INTEGER, description: "-1: unordered" }),
  parent_tx_hash: Type.Optional(Type.String({ description: "as signed; not interpreted" })),
};

/** A transaction inside a block (full transactions). */
const Transaction = Type.Object({ ...txMembers, operation: Operation }, { ...strict, title: "Transaction" });

const TxResult = Type.Union(
  [
    Type.Object({ code: Type.Literal(0) }, strict),
    Type.Object({ code: Type.Integer({ minimum: 1 }), reason: Type.String() }, strict),
  ],
  { title: "TxResult", description: "execution outcome (beyond the spec): code 0 is success" },
);

/** A committed transaction fetched by hash or by block and index. */
export const ConfirmedTransaction = Type.Object(
  {
    ...txMembers,
    operation: Operation,
    block_hash: Hash32,
    block_number: Count,
    index: Count,
    result: TxResult,
  },
  { ...strict, title: "ConfirmedTransaction" },
);

/** A page of chain_getTransactionsByAddress. */
export const TransactionsPage = Type.Object(
  {
    transactions: Type.Array(ConfirmedTransaction, {
      description: "newest first: block number descending, then index in the block descending",
    }),
    next_cursor: Type.Union(
      [
        Type.String({ pattern: "^0x[0-9a-f]{16}$", description: "opaque: pass it back as `cursor`" }),
        Type.Null(),
      ],
      { description: "where the next page starts; null on the last page" },
    ),
  },
  { ...strict, title: "TransactionsPage" },
);

const pendingMembers = { status: Type.Literal("PENDING"), ...txMembers };

/** An entry of chain_getPendingTransactions: no operation (spec §2). */
export const PendingTransaction = Type.Object(pendingMembers, { ...strict, title: "PendingTransaction" });

/** A pending transaction fetched by hash: the entry plus its operation. */
export const PendingTransactionWithOperation = Type.Object(
  { ...pendingMembers, operation: Operation },
  { ...strict, title: "PendingTransactionWithOperation" },
);

const headerMembers = {
  timestamp: Millis,
  hash: Hash32,
  parent_hash: HashOrEmpty,
  number: Count,
  proposer: ChecksumAddress,
  validators: Type.Array(ChecksumAddress, { description: "sorted signers of the commit certificate" }),
  size: Type.Integer({ minimum: 0, description: "bytes of the canonical JSON of the transaction list" }),
  // Beyond the spec: what a client needs to recompute and check `hash`.
  transactions_hash: Hash32,
  state_root: Hash32,
  last_commit_hash: HashOrEmpty,
};

export const BlockHeader = Type.Object(headerMembers, { ...strict, title: "BlockHeader" });

/** A block whose `transactions` are full objects (chain_getRecentBlock, chain_getBlocks). */
export const BlockWithTransactions = Type.Object(
  { ...headerMembers, transactions: Type.Array(Transaction) },
  { ...strict, title: "BlockWithTransactions" },
);

/** A block with full transactions or their hashes, as `getFullTransactions` asks. */
export const Block = Type.Object(
  {
    ...headerMembers,
    transactions: Type.Union([Type.Array(Transaction), Type.Array(Hash32)], {
      description: "full transactions when getFullTransactions is true, else their hashes",
    }),
  },
  { ...strict, title: "Block" },
);

export const NodeInfoSchema = Type.Object(
  { name: Type.String(), location: Type.String(), version: Type.String() },
  { ...strict, title: "NodeInfo" },
);

/** The OpenRPC document itself, loosely: its full shape is the OpenRPC meta-schema's business. */
export const OpenRpcDocumentSchema = Type.Object(
  {
    openrpc: Type.String(),
    info: Type.Object({ title: Type.String(), version: Type.String() }),
    methods: Type.Array(Type.Object({ name: Type.String() })),
  },
  { title: "OpenrpcDocument", description: "an OpenRPC 1.3 document (meta-schema: @open-rpc/meta-schema)" },
);

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** Any JSON value of the data tree (null where nothing is stored). */
export const StateValue = Type.Unknown({
  description: "JSON value of the data tree; null where nothing is stored",
});

const ProofNodes = Type.Array(
  Type.String({ pattern: "^0x([0-9a-f]{2})+$", description: "an RLP-encoded trie node, hex" }),
  { description: "trie nodes on the key's path, root first" },
);

const LeafProof = Type.Object(
  { ref: Type.String(), value: StateValue, proof: ProofNodes },
  { ...strict, title: "LeafProof" },
);

/** chain_getProof (beyond the spec; DESIGN.md §12). */
export const ValueProof = Type.Object(
  {
    block_number: Count,
    block_hash: Hash32,
    state_root: Hash32,
    ref: Type.String({ description: "the path proven, normalised" }),
    value: StateValue,
    proof: ProofNodes,
    leaves: Type.Optional(
      Type.Array(LeafProof, { description: "for a subtree: each leaf below ref with its own proof" }),
    ),
  },
  { ...strict, title: "ValueProof" },
);
