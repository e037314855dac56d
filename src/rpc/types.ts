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
