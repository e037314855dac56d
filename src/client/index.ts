/**
 * client: a typed TypeScript client of the node's JSON-RPC interface, published as
 * `chain-node/client` (compiled to dist/ by tsconfig.client.json, so consumers need no tsx).
 * Owns: the HTTP transport, one typed function per method, batches, error classes per JSON-RPC
 * code, waiting for commits, and wallets (signing with src/crypto, automatic nonces).
 * Does not own: anything of the node itself; it speaks to a node only over HTTP, and imports
 * nothing from src/ but crypto (through its index.ts).
 *
 *   import { connect } from "chain-node/client";
 *   const client = connect("http://127.0.0.1:8080");
 *   const hash = await client.wallet(privateKey).transfer(to, 100);
 *   const tx = await client.waitForTransaction(hash);
 *
 * Proofs: `verifyProof(stateRoot, proofResult)` checks a chain_getProof answer, and
 * `client.getVerifiedValue(ref, { trusted_block_hash })` reads a value proven to be in a block's
 * state (docs/client.md, "Verified reads"). Their files (proof.ts, trieProof.ts, rlp.ts,
 * bytes.ts, ref.ts, blockHash.ts, verifiedRead.ts) use no Node-only API, for bundling into a
 * browser page.
 */
export type { BatchEntry, BatchResults } from "./batch.ts";
export { hashBlockHeader } from "./blockHash.ts";
export { type Client, type ConnectOptions, connect } from "./client.ts";
export {
  ClientError,
  HttpError,
  InternalError,
  InvalidParamsError,
  InvalidRequestError,
  LimitExceededError,
  MethodNotFoundError,
  type OpenUnion,
  ParseError,
  type ProofFailureReason,
  ProofVerificationError,
  RPC_ERROR_CODES,
  RpcError,
  type RpcErrorObject,
  rpcErrorFromObject,
  TransactionRejectedError,
  type TransactionRejectReason,
  TransportError,
  WaitTimeoutError,
} from "./errors.ts";
export type { NodeMethods, RequestFn } from "./methods.ts";
export { verifyProof } from "./proof.ts";
export { normalizeRef } from "./ref.ts";
export { DEFAULT_TIMEOUT_MS, type TransportOptions } from "./transport.ts";
export type {
  Address,
  Block,
  BlockHeader,
  ConfirmedTransaction,
  ExecutionFailureReason,
  Hash,
  JsonValue,
  NodeInfo,
  PendingTransaction,
  PendingTransactionEntry,
  ProofLeaf,
  ProofResult,
  RpcCall,
  RpcMethodName,
  RpcMethods,
  RpcParams,
  RpcParamsArgs,
  RpcResult,
  SetValueOperation,
  SignedTransaction,
  Transaction,
  TransactionBody,
  TransactionResult,
  ValueQuery,
  TransactionsByAddressParams,
  TransactionsPage,
} from "./types.ts";
export { getVerifiedValue, type VerifiedReadOptions, type VerifiedValue } from "./verifiedRead.ts";
export {
  DEFAULT_POLL_MS,
  DEFAULT_WAIT_TIMEOUT_MS,
  isConfirmedTransaction,
  type WaitOptions,
} from "./wait.ts";
export {
  createWallet,
  type KeyedSendOptions,
  type SendOptions,
  type Wallet,
  type WalletMethods,
  type WalletOperation,
} from "./wallet.ts";
