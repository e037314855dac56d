/**
 * Wire types of the JSON-RPC interface, exactly as the node sends and accepts them (docs/rpc.md,
 * "Data shapes"; snake_case members as on the wire).
 *
 * They are declared here rather than imported from src/chain because importing the chain layer
 * would compile it (state trie, execution) into the client's dist and its .d.ts. The node's own
 * shapes are checked against these at compile time in test/client/types.test.ts, so they cannot
 * drift apart silently.
 */

/** `0x` + 40 hex digits. The node returns the EIP-55 checksummed form and accepts any case. */
export type Address = string;
/** `0x` + 64 hex digits; lower case from the node, looked up in any case. */
export type Hash = string;

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** The only operation the chain accepts; `value: null` deletes. */
export interface SetValueOperation {
  type: "SET_VALUE";
  ref: string;
  value: JsonValue;
}

/** The signed body of a transaction (DESIGN.md §3); nothing else is allowed in it. */
export interface TransactionBody {
  /** The sender's next nonce, or -1 for an unordered transaction. */
  nonce: number;
  /** Milliseconds since the Unix epoch. */
  timestamp: number;
  operation: SetValueOperation;
  parent_tx_hash?: string;
}

/** What `chain_sendSignedTransaction` takes: the body and the 97-byte signature beside it. */
export interface SignedTransaction {
  signature: string;
  transaction: TransactionBody;
}

/** A transaction inside a block. */
export interface Transaction {
  hash: Hash;
  /** The sender, recovered from the signature. */
  address: Address;
  signature: string;
  timestamp: number;
  nonce: number;
  parent_tx_hash?: string;
  operation: SetValueOperation;
}

/** Reasons an admitted transaction can still fail when its block executes. */
export type ExecutionFailureReason = "insufficient_balance" | "permission_denied" | "invalid_operation";

/**
 * How a committed transaction executed. A failed one is still recorded and consumes its nonce,
 * but changes no state.
 */
export type TransactionResult =
  | { code: 0 }
  | { code: 1; reason: "insufficient_balance" }
  | { code: 2; reason: "permission_denied" }
  | { code: 3; reason: "invalid_operation" };

/** A committed transaction fetched by hash or by position. */
export interface ConfirmedTransaction extends Transaction {
  block_hash: Hash;
  block_number: number;
  index: number;
  result: TransactionResult;
}

/** A page of an account's history (`chain_getTransactionsByAddress`). */
export interface TransactionsPage {
  /** Newest first: block number descending, then index in the block descending. */
  transactions: ConfirmedTransaction[];
  /** Pass it back as `cursor` (with the same other params) for the next page; null on the last. */
  next_cursor: string | null;
}

/** Params of `chain_getTransactionsByAddress`. */
export interface TransactionsByAddressParams {
  address: Address;
  /** Lowest block listed (inclusive); default the first the node keeps. */
  from_block?: number;
  /** Highest block listed (inclusive); default and at most the head. */
  to_block?: number;
  /** Transactions per page, 1 to 100; default 25. */
  limit?: number;
  /** A previous page's `next_cursor`, unchanged. */
  cursor?: string;
}

/** An entry of `chain_getPendingTransactions`: no operation (spec §2). */
export interface PendingTransactionEntry {
  status: "PENDING";
  hash: Hash;
  address: Address;
  signature: string;
  timestamp: number;
  nonce: number;
  parent_tx_hash?: string;
}

/** A pending transaction fetched by hash: the entry plus its operation. */
export interface PendingTransaction extends PendingTransactionEntry {
  operation: SetValueOperation;
}

export interface BlockHeader {
  /** Milliseconds since the Unix epoch. */
  timestamp: number;
  hash: Hash;
  /** `""` for block 0. */
  parent_hash: string;
  number: number;
  proposer: Address;
  /** Sorted addresses whose precommits finalized the block. */
  validators: Address[];
  /** Bytes of the canonical JSON of the block's transaction list. */
  size: number;
  transactions_hash: string;
  state_root: string;
  /** `""` for blocks 0 and 1. */
  last_commit_hash: string;
}

/** A block; `T` is what `transactions` holds: full transactions or their hashes. */
export interface Block<T extends Transaction | Hash = Transaction | Hash> extends BlockHeader {
  transactions: T[];
}

export interface NodeInfo {
  name: string;
  location: string;
  version: string;
}

/**
 * `chain_getProof`: the value at `ref` in the state of one block, and the Merkle proof of it
 * against that block's `state_root` (verify with `verifyProof`). `proof` holds the RLP trie nodes
 * (hex) from the root down the path of keccak256(utf8(ref)), root first: of the leaf, or of its
 * absence. For a subtree, `leaves` lists every leaf below `ref` with its own proof, sorted by ref,
 * `proof` proves `ref` itself is no leaf, and `value` is the object the leaves rebuild.
 */
export interface ProofResult {
  block_number: number;
  block_hash: Hash;
  state_root: Hash;
  /** The path, normalised: one leading slash, no trailing one, account segments in checksum form. */
  ref: string;
  value: JsonValue;
  proof: string[];
  leaves?: ProofLeaf[];
}

/** One leaf of a subtree's proof: a non-object value at its full path. */
export interface ProofLeaf {
  ref: string;
  value: JsonValue;
  proof: string[];
}

/** Params of `chain_getValue` and `chain_getProof`; `block_number` omitted: the head. */
export interface ValueQuery {
  ref: string;
  block_number?: number;
}

interface ByNumber {
  number: number;
}
interface ByHash {
  hash: Hash;
}
interface ByAddress {
  address: Address;
}
interface Range {
  /** First block number. */
  from: number;
  /** Last block number, inclusive; at most 100 blocks per call by default. */
  to: number;
}

/**
 * Every method of the node: its params object (`undefined`: the method takes none) and its
 * result. "Not found" is `null`, never an error.
 */
export interface RpcMethods {
  chain_getRecentBlock: { params: undefined; result: Block<Transaction> };
  chain_getRecentBlockNumber: { params: undefined; result: number };
  chain_getBlockByNumber: { params: ByNumber & { getFullTransactions?: boolean }; result: Block | null };
  chain_getBlockByHash: { params: ByHash & { getFullTransactions?: boolean }; result: Block | null };
  chain_getBlocks: { params: Range; result: Block<Transaction>[] };
  chain_getBlockHeaders: { params: Range; result: BlockHeader[] };
  chain_getBlockTransactionCountByNumber: { params: ByNumber; result: number | null };
  chain_getBlockTransactionCountByHash: { params: ByHash; result: number | null };
  chain_getProposerByHash: { params: ByHash; result: Address | null };
  chain_getProposerByNumber: { params: ByNumber; result: Address | null };
  chain_getValidatorsByHash: { params: ByHash; result: Address[] | null };
  chain_getValidatorsByNumber: { params: ByNumber; result: Address[] | null };
  chain_getPendingTransactions: { params: undefined; result: PendingTransactionEntry[] };
  chain_getTransactionByBlockNumberAndIndex: {
    params: { block_number: number; index: number };
    result: ConfirmedTransaction | null;
  };
  chain_getTransactionByBlockHashAndIndex: {
    params: { block_hash: Hash; index: number };
    result: ConfirmedTransaction | null;
  };
  chain_getTransactionByHash: { params: ByHash; result: ConfirmedTransaction | PendingTransaction | null };
  chain_getTransactionsByAddress: { params: TransactionsByAddressParams; result: TransactionsPage };
  chain_sendSignedTransaction: { params: SignedTransaction; result: Hash };
  chain_sendSignedTransactionBatch: { params: { tx_list: SignedTransaction[] }; result: Hash[] };
  chain_getBalance: { params: ByAddress; result: number };
  chain_getConsensusStakeAmount: { params: ByAddress; result: number };
  chain_getNonce: { params: ByAddress; result: number };
  chain_isValidator: { params: ByAddress; result: boolean };
  chain_getValue: { params: ValueQuery; result: JsonValue };
  chain_getProof: { params: ValueQuery; result: ProofResult };
  net_listening: { params: undefined; result: boolean };
  net_nodeInfo: { params: undefined; result: NodeInfo };
  net_peerCount: { params: undefined; result: number };
  net_syncing: { params: undefined; result: boolean };
  net_id: { params: undefined; result: number };
  net_chainId: { params: undefined; result: number };
}

export type RpcMethodName = keyof RpcMethods;
export type RpcParams<M extends RpcMethodName> = RpcMethods[M]["params"];
export type RpcResult<M extends RpcMethodName> = RpcMethods[M]["result"];

/** The argument list of a call: nothing for a method without params, else its params object. */
export type RpcParamsArgs<M extends RpcMethodName> =
  RpcParams<M> extends undefined ? [] : [params: RpcParams<M>];

/** One call of a batch; `params` is left out for methods that take none. */
export type RpcCall = {
  [M in RpcMethodName]: RpcParams<M> extends undefined
    ? { method: M; params?: undefined }
    : { method: M; params: RpcParams<M> };
}[RpcMethodName];
