import {
  canonicalJson,
  checkSignedHash,
  type SignedHashJob,
  type SignedHashResult,
} from "../crypto/index.ts";
import { TxRejectedError } from "./errors.ts";
import { isSetValueShape } from "./operation.ts";
import type { SignedTxInput, Tx, TxBody } from "./types.ts";

const BODY_KEYS = new Set(["nonce", "timestamp", "operation", "parent_tx_hash"]);

/** Deepest nesting of arrays and objects in a value; deeper would risk the stack in recursive code. */
const MAX_VALUE_DEPTH = 64;

/** Whether `value` nests deeper than `max` (iterative, so hostile depth cannot overflow the stack). */
function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop() as [unknown, number];
    if (current === null || typeof current !== "object") continue;
    if (depth >= max) return true;
    for (const member of Object.values(current)) stack.push([member, depth + 1]);
  }
  return false;
}

export interface TxVerifyOptions {
  chainId: number;
  /** Largest canonical body accepted, in bytes. */
  maxTxBytes: number;
}

// A UTF-16 code unit of a surrogate pair standing alone (with the u flag, a whole pair is one code
// point and does not match).
const LONE_SURROGATE = /\p{Cs}/u;
const LONE_SURROGATE_REASON = "strings must be Unicode text (a lone surrogate is not)";

/**
 * What in `value` storage cannot keep exactly, if anything: the reason to refuse it. A stored
 * transaction must come back byte for byte, or it no longer matches its signature (a peer
 * re-verifying a block served from storage refuses it, and a chain with it can no longer be
 * synced; a restart drops it from the journal as hash_mismatch), and a stored value must be the
 * one the state root commits to.
 * - A lone surrogate in a string or key: not Unicode text. JSON.parse makes one from a "\ud800"
 *   escape; LMDB's encoding turns it into U+FFFD.
 * - An object member named `__proto__`: JSON.parse makes it an ordinary member, but msgpackr (LMDB's
 *   encoding) renames it `__proto_` when it decodes, against prototype pollution (found by
 *   test/unit/chain/stateProperties.test.ts with a random seed).
 */
function unstorable(value: unknown): string | undefined {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const current = stack.pop();
    if (typeof current === "string") {
      if (LONE_SURROGATE.test(current)) return LONE_SURROGATE_REASON;
    } else if (current !== null && typeof current === "object") {
      for (const [key, member] of Object.entries(current)) {
        if (LONE_SURROGATE.test(key)) return LONE_SURROGATE_REASON;
        if (key === "__proto__") return "an object member may not be named __proto__";
        stack.push(member);
      }
    }
  }
  return undefined;
}

/**
 * Body shape per DESIGN.md §3. The RPC schema checks the same first; this repeats it because
 * transactions also arrive from peers, and no path into the chain may skip it.
 */
function assertBodyShape(body: TxBody): void {
  const record = body as unknown as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (!BODY_KEYS.has(key))
      throw new TxRejectedError("invalid_operation", `unexpected member ${key} in transaction`);
  }
  const { nonce, timestamp, parent_tx_hash } = body;
  if (!Number.isSafeInteger(nonce) || nonce < -1) {
    throw new TxRejectedError("invalid_operation", "nonce must be -1 or a non-negative integer");
  }
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
    throw new TxRejectedError("invalid_operation", "timestamp must be a non-negative integer (ms)");
  }
  if (parent_tx_hash !== undefined && typeof parent_tx_hash !== "string") {
    throw new TxRejectedError("invalid_operation", "parent_tx_hash must be a string");
  }
  if (!isSetValueShape(body.operation)) {
    throw new TxRejectedError("invalid_operation", "operation must be exactly {type: SET_VALUE, ref, value}");
  }
  if (nestsDeeperThan(body.operation.value, MAX_VALUE_DEPTH)) {
    throw new TxRejectedError(
      "invalid_operation",
      `operation value nests deeper than ${MAX_VALUE_DEPTH} levels`,
    );
  }
  const refusal = unstorable(body);
  if (refusal !== undefined) throw new TxRejectedError("invalid_operation", refusal);
}

/**
 * The checks of a submitted transaction that need no signature work: shape and size. Returns the
 * canonical body, which is what is hashed and signed; throws TxRejectedError.
 */
export function prepareSignedTx(input: SignedTxInput, options: TxVerifyOptions): SignedHashJob {
  const body = input.transaction;
  assertBodyShape(body);
  const canonical = canonicalJson(body);
  const size = Buffer.byteLength(canonical, "utf8");
  if (size > options.maxTxBytes) {
    throw new TxRejectedError(
      "tx_too_large",
      `transaction is ${size} bytes; the limit is ${options.maxTxBytes}`,
      {
        expected: options.maxTxBytes,
        actual: size,
      },
    );
  }
  return { canonical, signature: input.signature, chainId: options.chainId };
}

/**
 * The transaction in its block form once its signature was checked (`check`, from
 * checkSignedHash on the job prepareSignedTx made); throws TxRejectedError for a bad signature.
 */
export function txFromCheck(input: SignedTxInput, check: SignedHashResult, chainId: number): Tx {
  if (!check.ok) {
    const messages = {
      invalid_signature: "signature does not verify (malformed, high-s or unrecoverable)",
      hash_mismatch: "the hash inside the signature is not the hash of this transaction body",
      wrong_chain_id: `signature is not for chain id ${chainId}`,
    } as const;
    throw new TxRejectedError(check.reason, messages[check.reason]);
  }
  const body = input.transaction;
  const tx: Tx = {
    hash: check.hash,
    address: check.signer,
    signature: input.signature.toLowerCase(),
    timestamp: body.timestamp,
    nonce: body.nonce,
    operation: { type: "SET_VALUE", ref: body.operation.ref, value: body.operation.value },
  };
  if (body.parent_tx_hash !== undefined) tx.parent_tx_hash = body.parent_tx_hash;
  return tx;
}

/**
 * Stateless checks of a submitted transaction: shape, size, embedded hash, chain id, low-s and
 * signer recovery, on the calling thread. Returns the transaction in its block form; throws
 * TxRejectedError.
 */
export function verifySignedTx(input: SignedTxInput, options: TxVerifyOptions): Tx {
  return txFromCheck(input, checkSignedHash(prepareSignedTx(input, options)), options.chainId);
}

/** The signed body of a block-form transaction (used to re-verify blocks from peers). */
export function txBody(tx: Tx): TxBody {
  const body: TxBody = { nonce: tx.nonce, timestamp: tx.timestamp, operation: tx.operation };
  if (tx.parent_tx_hash !== undefined) body.parent_tx_hash = tx.parent_tx_hash;
  return body;
}
