import { type BatchResults, sendBatch } from "./batch.ts";
import { createMethods, type NodeMethods, type RequestFn } from "./methods.ts";
import { createHttpTransport, type TransportOptions } from "./transport.ts";
import type { ConfirmedTransaction, Hash, RpcCall } from "./types.ts";
import { getVerifiedValue, type VerifiedReadOptions, type VerifiedValue } from "./verifiedRead.ts";
import { type WaitOptions, waitForTransaction } from "./wait.ts";
import { createWallet, type Wallet } from "./wallet.ts";

export type ConnectOptions = TransportOptions;

/** A connection to one node: every JSON-RPC method, batches, waiting, wallets. */
export interface Client extends NodeMethods {
  /** The JSON-RPC endpoint. */
  readonly url: string;
  /** Any method by its JSON-RPC name, typed by the method table (types.ts `RpcMethods`). */
  request: RequestFn;
  /**
   * Several calls in one JSON-RPC batch (one POST), answered per call and in call order:
   * `client.batch([{ method: "net_id" }, { method: "chain_getBalance", params: { address } }])`.
   */
  batch<const T extends readonly RpcCall[]>(calls: T): Promise<BatchResults<T>>;
  /** Resolves once the transaction is committed (see wait.ts); rejects with WaitTimeoutError. */
  waitForTransaction(hash: Hash, options?: WaitOptions): Promise<ConfirmedTransaction>;
  /** A wallet signing with this key and sending through this client. */
  wallet(privateKey: string | Uint8Array): Wallet;
  /**
   * The value at `ref`, proven against a block header (see verifiedRead.ts): with
   * `trusted_block_hash`, proven to be in that block's state; throws ProofVerificationError.
   */
  getVerifiedValue(ref: string, options?: VerifiedReadOptions): Promise<VerifiedValue>;
}

/**
 * Connects to a node's JSON-RPC endpoint (e.g. `http://127.0.0.1:8080`). Nothing is sent until
 * the first call, so this never fails for an unreachable node; the first call does.
 */
export function connect(url: string, options: ConnectOptions = {}): Client {
  const transport = createHttpTransport(url, options);
  const request = ((method: string, params?: unknown) => transport.request(method, params)) as RequestFn;
  const methods = createMethods(request);
  const client: Client = {
    ...methods,
    url,
    request,
    batch: (calls) => sendBatch(transport, calls),
    waitForTransaction: (hash, waitOptions) => waitForTransaction(methods, hash, waitOptions),
    wallet: (privateKey) => createWallet(methods, privateKey),
    getVerifiedValue: (ref, readOptions) => getVerifiedValue(methods, ref, readOptions),
  };
  return client;
}
