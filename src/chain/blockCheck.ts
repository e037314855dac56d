import { verifyCommit } from "./commit.ts";
import { TxRejectedError } from "./errors.ts";
import { nonceOf, type StateReader } from "./state.ts";
import type { SignedHashJob, SignedHashResult } from "../crypto/index.ts";
import { prepareSignedTx, type TxVerifyOptions, txBody, verifySignedTx } from "./transaction.ts";
import type { BlockHeader, Commit, StoredBlock, Tx, Validator } from "./types.ts";

/**
 * How far an unordered transaction's timestamp may be from its block's timestamp. A consensus
 * rule (every node must judge a block alike), so a constant and not the pool's configurable
 * admission window, which must not exceed it. Replays inside it are refused by hash.
 */
export const UNORDERED_TX_WINDOW_MS = 60 * 60 * 1000;

/** A block as a proposer offers it: the header, its transactions and the parent's commit. */
export interface ProposedBlock {
  header: BlockHeader;
  txs: Tx[];
  /** The certificate of the parent block (null for block 1, whose parent is genesis). */
  last_commit: Commit | null;
}

export class InvalidBlockError extends Error {
  override readonly name = "InvalidBlockError";
}

export interface BlockCheckContext {
  chainId: number;
  maxTxBytes: number;
  maxBlockTxs: number;
  maxBlockBytes: number;
  parent: StoredBlock;
  /** Validators of the parent's height (they sign last_commit) and of the block's height. */
  parentValidators: readonly Validator[];
  validators: readonly Validator[];
  state: StateReader;
  isCommitted(hash: string): boolean;
  /** True when this exact signed transaction was verified before (the pool holds it). */
  alreadyVerified?(tx: Tx): boolean;
}

/**
 * Checks what execution cannot: that a block from another node links to our head, carries a
 * valid certificate of its parent, and holds only transactions that verify, are new, and respect
 * nonce order and the unordered window. Execution then decides the state root. Returns the
 * signers of last_commit. Throws InvalidBlockError.
 */
export function checkProposedBlock(block: ProposedBlock, context: BlockCheckContext): string[] {
  const { header, txs } = block;
  const { parent } = context;
  const fail = (message: string): never => {
    throw new InvalidBlockError(`block ${header.number}: ${message}`);
  };
  if (header.number !== parent.header.number + 1) fail(`does not follow head ${parent.header.number}`);
  if (header.parent_hash !== parent.hash) fail("parent_hash is not the head's hash");
  if (!(header.timestamp > parent.header.timestamp)) fail("timestamp is not after the parent's");
  if (!context.validators.some((v) => v.address === header.proposer)) fail("proposer is not a validator");
  if (txs.length > context.maxBlockTxs) fail(`holds ${txs.length} transactions`);
  // header.size itself is checked by execution (it recomputes the header and its hash).
  if (header.size > context.maxBlockBytes) fail(`is ${header.size} bytes`);
  const signers = checkLastCommit(block.last_commit, context, fail);
  checkTransactions(txs, header.timestamp, context, fail);
  return signers;
}

function checkLastCommit(
  commit: Commit | null,
  context: BlockCheckContext,
  fail: (message: string) => never,
): string[] {
  const { parent } = context;
  if (parent.header.number === 0) {
    if (commit !== null) fail("block 1 carries a commit of genesis");
    return [];
  }
  if (commit === null) return fail("last_commit is missing");
  if (commit.height !== parent.header.number || commit.block_hash !== parent.hash) {
    fail("last_commit is not for the parent block");
  }
  const check = verifyCommit(commit, context.chainId, context.parentValidators);
  if (!check.ok) return fail(`last_commit: ${check.message}`);
  return check.signers;
}

function checkTransactions(
  txs: readonly Tx[],
  blockTime: number,
  context: BlockCheckContext,
  fail: (message: string) => never,
): void {
  const seen = new Set<string>();
  const nextNonce = new Map<string, number>();
  for (const tx of txs) {
    if (seen.has(tx.hash)) fail(`transaction ${tx.hash} appears twice`);
    seen.add(tx.hash);
    if (context.isCommitted(tx.hash)) fail(`transaction ${tx.hash} is already committed`);
    if (context.alreadyVerified?.(tx) !== true) verifyAsSubmitted(tx, context, fail);
    if (tx.nonce >= 0) {
      const expected = nextNonce.get(tx.address) ?? nonceOf(context.state, tx.address);
      if (tx.nonce !== expected) fail(`transaction ${tx.hash} has nonce ${tx.nonce}, expected ${expected}`);
      nextNonce.set(tx.address, expected + 1);
    } else if (Math.abs(tx.timestamp - blockTime) > UNORDERED_TX_WINDOW_MS) {
      fail(`unordered transaction ${tx.hash} is outside the window of the block's time`);
    }
  }
}

/** The same stateless checks admission runs; the result must be the very transaction given. */
function verifyAsSubmitted(tx: Tx, context: BlockCheckContext, fail: (message: string) => never): void {
  const verified = (() => {
    try {
      return verifySignedTx({ signature: tx.signature, transaction: txBody(tx) }, context);
    } catch (error) {
      if (error instanceof TxRejectedError) return fail(`transaction ${tx.hash}: ${error.message}`);
      throw error;
    }
  })();
  if (!sameSignedTx(verified, tx)) fail(`transaction ${tx.hash} does not match its signature`);
}

/** A block's transaction is the one its signature makes: same hash, signer and (lower-case) signature. */
function sameSignedTx(verified: Pick<Tx, "hash" | "address" | "signature">, tx: Tx): boolean {
  return verified.hash === tx.hash && verified.address === tx.address && verified.signature === tx.signature;
}

/**
 * The signature job of a block's transaction (undefined if its shape or size already refuses it),
 * for checking ahead of the block check on other threads.
 */
export function signatureJobOf(tx: Tx, options: TxVerifyOptions): SignedHashJob | undefined {
  try {
    return prepareSignedTx({ signature: tx.signature, transaction: txBody(tx) }, options);
  } catch (error) {
    if (error instanceof TxRejectedError) return undefined;
    throw error;
  }
}

/**
 * Whether `check` (checkSignedHash of signatureJobOf(tx)) proves `tx` exactly as the block check
 * would: a transaction it proves may be given to `alreadyVerified`.
 */
export function signatureProves(tx: Tx, check: SignedHashResult): boolean {
  return (
    check.ok &&
    sameSignedTx({ hash: check.hash, address: check.signer, signature: tx.signature.toLowerCase() }, tx)
  );
}

/**
 * The transactions of `txs` (in order) that a block at `blockTime` on this state may hold: not
 * committed, ordered ones in exact nonce sequence, unordered ones within the window. A proposer
 * filters its pool with this, so a transaction made stale by another node's block never makes
 * its proposal invalid.
 */
export function includableTxs(
  txs: readonly Tx[],
  state: StateReader,
  isCommitted: (hash: string) => boolean,
  blockTime: number,
): Tx[] {
  const nextNonce = new Map<string, number>();
  const seen = new Set<string>();
  return txs.filter((tx) => {
    if (seen.has(tx.hash) || isCommitted(tx.hash)) return false;
    if (tx.nonce >= 0) {
      const expected = nextNonce.get(tx.address) ?? nonceOf(state, tx.address);
      if (tx.nonce !== expected) return false;
      nextNonce.set(tx.address, expected + 1);
    } else if (Math.abs(tx.timestamp - blockTime) > UNORDERED_TX_WINDOW_MS) {
      return false;
    }
    seen.add(tx.hash);
    return true;
  });
}
