import type { ConfirmedTx, JsonValue, SignedTxInput, StoredBlock, Tx, ValueProof } from "../chain/index.ts";

/**
 * The narrow views RPC handlers are given (node/ supplies the real objects). RPC never sees
 * concrete classes of other layers.
 */
export interface RpcChainView {
  headNumber(): number;
  getBlock(number: number): StoredBlock | undefined;
  /** Lowest block number above 0 still stored: blocks 1 … blocksFrom() - 1 were pruned. */
  blocksFrom(): number;
  getBlockNumber(hash: string): number | undefined;
  getConfirmedTx(hash: string): ConfirmedTx | undefined;
  balanceOf(address: string): number;
  stakeOf(address: string): number;
  nonceOf(address: string): number;
  isValidator(address: string): boolean;
  /**
   * The history index's entries of `address` (0x + 40 hex, any case): the committed transactions
   * it sent or received a successful transfer by, newest first, from `query.upTo` (inclusive)
   * down to block `query.fromBlock`, at most `query.limit`. Blocks below blocksFrom() have none.
   */
  addressHistory(address: string, query: AddressHistoryQuery): AddressHistoryEntry[];
}

/** A place in the chain: a block and a transaction's index in it. */
export interface ChainPosition {
  block: number;
  index: number;
}

export interface AddressHistoryQuery {
  fromBlock: number;
  upTo: ChainPosition;
  limit: number;
}

export interface AddressHistoryEntry extends ChainPosition {
  hash: string;
}

/**
 * Reads of the data tree (chain/stateReads.ts), paths already normalised. They throw the chain's
 * StateUnavailableError and TooManyLeavesError, which the handlers answer as JSON-RPC errors.
 */
export interface RpcStateView {
  value(path: string, blockNumber?: number): JsonValue;
  prove(path: string, blockNumber?: number): ValueProof;
}

export interface RpcTxPool {
  submit(input: SignedTxInput): Promise<string>;
  submitBatch(inputs: readonly SignedTxInput[]): Promise<string[]>;
  pending(): Tx[];
  getPending(hash: string): Tx | undefined;
}

export interface NodeInfo {
  name: string;
  location: string;
  version: string;
}

export interface RpcNetworkView {
  listening(): boolean;
  peerCount(): number;
  syncing(): boolean;
  networkId(): number;
  chainId(): number;
  nodeInfo(): NodeInfo;
}

export interface RpcLimits {
  /** Largest from..to span of chain_getBlocks / chain_getBlockHeaders, inclusive. */
  maxBlockRange: number;
  /** Entries of tx_list in chain_sendSignedTransactionBatch. */
  maxBatchItems: number;
}

export interface RpcContext {
  chain: RpcChainView;
  state: RpcStateView;
  pool: RpcTxPool;
  network: RpcNetworkView;
  limits: RpcLimits;
}
