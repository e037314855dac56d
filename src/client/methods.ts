import type {
  Address,
  Block,
  BlockHeader,
  ConfirmedTransaction,
  Hash,
  JsonValue,
  NodeInfo,
  PendingTransaction,
  PendingTransactionEntry,
  ProofResult,
  RpcMethodName,
  RpcParamsArgs,
  RpcResult,
  SignedTransaction,
  Transaction,
  ValueQuery,
  TransactionsByAddressParams,
  TransactionsPage,
} from "./types.ts";

/**
 * One typed function per JSON-RPC method. `chain_` methods drop their prefix and take the same
 * params object the node does (docs/rpc.md names every member); the `net_` ones read as what
 * they answer. "Not found" resolves to null.
 */
export interface NodeMethods {
  /** chain_getRecentBlock: the most recent block, with full transactions. */
  getRecentBlock(): Promise<Block<Transaction>>;
  /** chain_getRecentBlockNumber. */
  getRecentBlockNumber(): Promise<number>;
  /** chain_getBlockByNumber: transactions are full objects only with `getFullTransactions: true`. */
  getBlockByNumber<Full extends boolean = false>(params: {
    number: number;
    getFullTransactions?: Full;
  }): Promise<Block<Full extends true ? Transaction : Hash> | null>;
  /** chain_getBlockByHash: as getBlockByNumber. */
  getBlockByHash<Full extends boolean = false>(params: {
    hash: Hash;
    getFullTransactions?: Full;
  }): Promise<Block<Full extends true ? Transaction : Hash> | null>;
  /** chain_getBlocks: blocks from..to inclusive, clipped to the head, with full transactions. */
  getBlocks(params: { from: number; to: number }): Promise<Block<Transaction>[]>;
  /** chain_getBlockHeaders: headers from..to inclusive, clipped to the head. */
  getBlockHeaders(params: { from: number; to: number }): Promise<BlockHeader[]>;
  /** chain_getBlockTransactionCountByNumber. */
  getBlockTransactionCountByNumber(params: { number: number }): Promise<number | null>;
  /** chain_getBlockTransactionCountByHash. */
  getBlockTransactionCountByHash(params: { hash: Hash }): Promise<number | null>;
  /** chain_getProposerByHash. */
  getProposerByHash(params: { hash: Hash }): Promise<Address | null>;
  /** chain_getProposerByNumber. */
  getProposerByNumber(params: { number: number }): Promise<Address | null>;
  /** chain_getValidatorsByHash: the sorted addresses whose votes finalized the block. */
  getValidatorsByHash(params: { hash: Hash }): Promise<Address[] | null>;
  /** chain_getValidatorsByNumber. */
  getValidatorsByNumber(params: { number: number }): Promise<Address[] | null>;
  /** chain_getPendingTransactions: in arrival order, without operations. */
  getPendingTransactions(): Promise<PendingTransactionEntry[]>;
  /** chain_getTransactionByBlockNumberAndIndex. */
  getTransactionByBlockNumberAndIndex(params: {
    block_number: number;
    index: number;
  }): Promise<ConfirmedTransaction | null>;
  /** chain_getTransactionByBlockHashAndIndex. */
  getTransactionByBlockHashAndIndex(params: {
    block_hash: Hash;
    index: number;
  }): Promise<ConfirmedTransaction | null>;
  /** chain_getTransactionByHash: committed (with block and result) or pending (status PENDING). */
  getTransactionByHash(params: { hash: Hash }): Promise<ConfirmedTransaction | PendingTransaction | null>;
  /**
   * chain_getTransactionsByAddress: committed transactions the address sent or received a
   * successful transfer by, newest first, one page; pass `next_cursor` back as `cursor` for the next.
   */
  getTransactionsByAddress(params: TransactionsByAddressParams): Promise<TransactionsPage>;
  /** chain_sendSignedTransaction: the hash once every admission check passed (else -32003). */
  sendSignedTransaction(params: SignedTransaction): Promise<Hash>;
  /** chain_sendSignedTransactionBatch: all or none; the hashes in input order. */
  sendSignedTransactionBatch(params: { tx_list: SignedTransaction[] }): Promise<Hash[]>;
  /** chain_getBalance (0 for an unknown account). */
  getBalance(params: { address: Address }): Promise<number>;
  /** chain_getConsensusStakeAmount. */
  getConsensusStakeAmount(params: { address: Address }): Promise<number>;
  /** chain_getNonce: committed ordered transactions, i.e. the nonce the next one carries if none is pending. */
  getNonce(params: { address: Address }): Promise<number>;
  /** chain_isValidator: whether the address is in the current validator set. */
  isValidator(params: { address: Address }): Promise<boolean>;
  /** chain_getValue: the JSON at `ref` (a leaf, or the subtree as one object; null if nothing), at the head or `block_number`. */
  getValue(params: ValueQuery): Promise<JsonValue>;
  /** chain_getProof: the value at `ref` with its Merkle proof against the block's state root (check it with verifyProof). */
  getProof(params: ValueQuery): Promise<ProofResult>;
  /** net_listening: whether the peer-to-peer listener is open. */
  isListening(): Promise<boolean>;
  /** net_nodeInfo. */
  getNodeInfo(): Promise<NodeInfo>;
  /** net_peerCount. */
  getPeerCount(): Promise<number>;
  /** net_syncing: whether the node is catching up with its peers. */
  isSyncing(): Promise<boolean>;
  /** net_id: 0 main network, 1 test network. */
  getNetworkId(): Promise<number>;
  /** net_chainId: the chain id transactions must be signed for. */
  getChainId(): Promise<number>;
}

/** A typed `request`: the method name fixes the params and the result. */
export type RequestFn = <M extends RpcMethodName>(
  method: M,
  ...params: RpcParamsArgs<M>
) => Promise<RpcResult<M>>;

/** Binds every method to `request`. */
export function createMethods(request: RequestFn): NodeMethods {
  return {
    getRecentBlock: () => request("chain_getRecentBlock"),
    getRecentBlockNumber: () => request("chain_getRecentBlockNumber"),
    // The node's answer depends on getFullTransactions; the generic signature states how.
    getBlockByNumber: <Full extends boolean>(params: { number: number; getFullTransactions?: Full }) =>
      request("chain_getBlockByNumber", params) as Promise<Block<
        Full extends true ? Transaction : Hash
      > | null>,
    getBlockByHash: <Full extends boolean>(params: { hash: Hash; getFullTransactions?: Full }) =>
      request("chain_getBlockByHash", params) as Promise<Block<
        Full extends true ? Transaction : Hash
      > | null>,
    getBlocks: (params) => request("chain_getBlocks", params),
    getBlockHeaders: (params) => request("chain_getBlockHeaders", params),
    getBlockTransactionCountByNumber: (params) => request("chain_getBlockTransactionCountByNumber", params),
    getBlockTransactionCountByHash: (params) => request("chain_getBlockTransactionCountByHash", params),
    getProposerByHash: (params) => request("chain_getProposerByHash", params),
    getProposerByNumber: (params) => request("chain_getProposerByNumber", params),
    getValidatorsByHash: (params) => request("chain_getValidatorsByHash", params),
    getValidatorsByNumber: (params) => request("chain_getValidatorsByNumber", params),
    getPendingTransactions: () => request("chain_getPendingTransactions"),
    getTransactionByBlockNumberAndIndex: (params) =>
      request("chain_getTransactionByBlockNumberAndIndex", params),
    getTransactionByBlockHashAndIndex: (params) => request("chain_getTransactionByBlockHashAndIndex", params),
    getTransactionByHash: (params) => request("chain_getTransactionByHash", params),
    getTransactionsByAddress: (params) => request("chain_getTransactionsByAddress", params),
    sendSignedTransaction: (params) => request("chain_sendSignedTransaction", params),
    sendSignedTransactionBatch: (params) => request("chain_sendSignedTransactionBatch", params),
    getBalance: (params) => request("chain_getBalance", params),
    getConsensusStakeAmount: (params) => request("chain_getConsensusStakeAmount", params),
    getNonce: (params) => request("chain_getNonce", params),
    isValidator: (params) => request("chain_isValidator", params),
    getValue: (params) => request("chain_getValue", params),
    getProof: (params) => request("chain_getProof", params),
    isListening: () => request("net_listening"),
    getNodeInfo: () => request("net_nodeInfo"),
    getPeerCount: () => request("net_peerCount"),
    isSyncing: () => request("net_syncing"),
    getNetworkId: () => request("net_id"),
    getChainId: () => request("net_chainId"),
  };
}
