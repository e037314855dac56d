import {
  hexToBytes,
  isAddress,
  isHex,
  isValidPrivateKey,
  MAX_CHAIN_ID,
  privateKeyToAddress,
  signObject,
  toChecksumAddress,
} from "../crypto/index.ts";
import type { NodeMethods } from "./methods.ts";
import { NonceManager } from "./nonce.ts";
import type {
  Address,
  Hash,
  JsonValue,
  SetValueOperation,
  SignedTransaction,
  TransactionBody,
} from "./types.ts";

/**
 * A wallet: one private key that signs transactions in the node's format (DESIGN.md §3, signed
 * by src/crypto, the same code the node verifies with) and submits them with managed nonces.
 */

export interface SendOptions {
  /**
   * Send with nonce -1: no ordering and no nonce bookkeeping, but the timestamp must lie within
   * the node's replay window (±1 h by default) and the same body can never be committed twice.
   */
  unordered?: boolean;
  /** Carried as signed; the node does not interpret it. */
  parentTxHash?: string;
}

export interface KeyedSendOptions extends SendOptions {
  /**
   * The transfer or staking key: each may be written once per account. Default: a fresh random
   * UUID. Give your own to make a retry idempotent (a repeat is then `permission_denied`).
   */
  key?: string;
}

/** What a wallet writes: a SET_VALUE without its fixed `type`. */
export type WalletOperation = Omit<SetValueOperation, "type">;

export interface Wallet {
  /** The EIP-55 address of the key. */
  readonly address: Address;
  /** Moves `amount` (a positive safe integer) to `to`: `/transfer/<from>/<to>/<key>/value`. */
  transfer(to: Address, amount: number, options?: KeyedSendOptions): Promise<Hash>;
  /** Moves `amount` of the balance into consensus stake: `/staking/<addr>/<key>/value`. */
  stake(amount: number, options?: KeyedSendOptions): Promise<Hash>;
  /** Moves `amount` of stake back to the balance (the same path with a negative amount). */
  unstake(amount: number, options?: KeyedSendOptions): Promise<Hash>;
  /** Writes free application data at `/users/<addr>/<path>` (`null` deletes). */
  setUserData(path: string, value: JsonValue, options?: SendOptions): Promise<Hash>;
  /** Signs and submits any operation; the node judges the path (see docs/rpc.md). */
  send(operation: WalletOperation, options?: SendOptions): Promise<Hash>;
  /**
   * Signs the operations with consecutive nonces and submits them in one
   * chain_sendSignedTransactionBatch: all are admitted or none.
   */
  sendBatch(operations: readonly WalletOperation[], options?: SendOptions): Promise<Hash[]>;
  /** Signs a body for the node's chain id without sending it (e.g. for a batch of many wallets). */
  signTransaction(body: TransactionBody): Promise<SignedTransaction>;
  /** Forgets the locally counted nonce; the next send asks the node again. */
  resetNonce(): void;
}

/** What a wallet needs from a client. */
export type WalletMethods = Pick<
  NodeMethods,
  "getChainId" | "getNonce" | "sendSignedTransaction" | "sendSignedTransactionBatch"
>;

function parsePrivateKey(privateKey: string | Uint8Array): Uint8Array {
  let bytes: Uint8Array | undefined = typeof privateKey === "string" ? undefined : privateKey;
  if (typeof privateKey === "string" && isHex(privateKey, 32)) bytes = hexToBytes(privateKey);
  if (bytes === undefined || !isValidPrivateKey(bytes)) {
    throw new TypeError("a private key is 32 bytes (0x + 64 hex digits) within the secp256k1 order");
  }
  return Uint8Array.from(bytes); // a copy: the caller may wipe or reuse its buffer
}

function assertAmount(amount: number, what: string): void {
  if (!Number.isSafeInteger(amount) || amount <= 0) {
    throw new RangeError(`${what} must be a positive safe integer, got ${amount}`);
  }
}

const newKey = (): string => globalThis.crypto.randomUUID();

export function createWallet(methods: WalletMethods, privateKey: string | Uint8Array): Wallet {
  const key = parsePrivateKey(privateKey);
  const address = privateKeyToAddress(key);
  const nonces = new NonceManager(() => methods.getNonce({ address }));

  // The chain id is fixed for a node's life: ask once; a failed ask is asked again next time.
  let chainId: Promise<number> | undefined;
  const getChainId = (): Promise<number> => {
    chainId ??= methods.getChainId().then((id) => {
      if (!Number.isInteger(id) || id < 0 || id > MAX_CHAIN_ID) {
        throw new RangeError(`the node's chain id ${id} cannot be signed for (0..${MAX_CHAIN_ID})`);
      }
      return id;
    });
    chainId.catch(() => {
      chainId = undefined;
    });
    return chainId;
  };

  const sign = async (transaction: TransactionBody): Promise<SignedTransaction> => ({
    signature: signObject(transaction, key, await getChainId()),
    transaction,
  });

  const body = (operation: WalletOperation, nonce: number, options: SendOptions): TransactionBody => {
    const tx: TransactionBody = {
      nonce,
      timestamp: Date.now(),
      operation: { type: "SET_VALUE", ref: operation.ref, value: operation.value },
    };
    if (options.parentTxHash !== undefined) tx.parent_tx_hash = options.parentTxHash;
    return tx;
  };

  const send = async (operation: WalletOperation, options: SendOptions = {}): Promise<Hash> => {
    if (options.unordered === true)
      return methods.sendSignedTransaction(await sign(body(operation, -1, options)));
    return nonces.use(1, async (nonce) =>
      methods.sendSignedTransaction(await sign(body(operation, nonce, options))),
    );
  };

  const sendBatch = async (
    operations: readonly WalletOperation[],
    options: SendOptions = {},
  ): Promise<Hash[]> => {
    if (operations.length === 0) return [];
    const signAll = (nonceAt: (i: number) => number) =>
      Promise.all(operations.map((operation, i) => sign(body(operation, nonceAt(i), options))));
    if (options.unordered === true) {
      return methods.sendSignedTransactionBatch({ tx_list: await signAll(() => -1) });
    }
    return nonces.use(operations.length, async (first) =>
      methods.sendSignedTransactionBatch({ tx_list: await signAll((i) => first + i) }),
    );
  };

  const stakeWrite = (amount: number, options: KeyedSendOptions): Promise<Hash> =>
    send({ ref: `/staking/${address}/${options.key ?? newKey()}/value`, value: amount }, options);

  // Async methods throughout, so bad input rejects the promise like any other failure.
  return {
    address,
    async transfer(to, amount, options = {}) {
      if (!isAddress(to)) throw new TypeError(`not an address: ${to}`);
      assertAmount(amount, "a transfer amount");
      const ref = `/transfer/${address}/${toChecksumAddress(to)}/${options.key ?? newKey()}/value`;
      return send({ ref, value: amount }, options);
    },
    async stake(amount, options = {}) {
      assertAmount(amount, "a stake amount");
      return stakeWrite(amount, options);
    },
    async unstake(amount, options = {}) {
      assertAmount(amount, "an unstake amount");
      return stakeWrite(-amount, options);
    },
    async setUserData(path, value, options = {}) {
      const rest = path.replace(/^\/+/, "");
      return send({ ref: rest === "" ? `/users/${address}` : `/users/${address}/${rest}`, value }, options);
    },
    send,
    sendBatch,
    signTransaction: sign,
    resetNonce: () => nonces.reset(),
  };
}
