import { bytesToHex, canonicalJson, hexToBytes, keccak256, keccakHex } from "../crypto/index.ts";
import type { ExecutedBlock } from "./chain.ts";
import type { BlockHeader, Commit, ConfirmedTx, StoredBlock, Tx, TxResult } from "./types.ts";

/** Address used as the proposer of block 0, which no validator proposed (as in Ethereum). */
export const GENESIS_PROPOSER = "0x0000000000000000000000000000000000000000";

/** `0x` + keccak256 of the header's canonical JSON. */
export function hashHeader(header: BlockHeader): string {
  return keccakHex(canonicalJson(header));
}

/** keccak256 over the concatenated 32-byte transaction hashes, in block order. */
export function transactionsHash(txHashes: readonly string[]): string {
  const joined = new Uint8Array(txHashes.length * 32);
  txHashes.forEach((hash, i) => {
    joined.set(hexToBytes(hash), i * 32);
  });
  return bytesToHex(keccak256(joined));
}

/**
 * Block size: byte length of the canonical JSON of its transactions (block form) list, which is
 * `[`, the transactions' canonical JSON joined by commas, and `]`: so it is summed from their sizes.
 */
export function blockSize(txs: readonly Tx[]): number {
  let size = 2 + Math.max(0, txs.length - 1);
  for (const tx of txs) size += txSize(tx);
  return size;
}

/**
 * Sizes already measured, by transaction object. A transaction is measured when the pool selects
 * it and again when its block is executed (and by each proposal check); its canonical JSON is
 * about 10 µs to write, a lookup here 0.05. A transaction is never changed after it is made (its
 * hash and signature cover the same body), so a size stays true for its object's life.
 */
const measuredSizes = new WeakMap<Tx, number>();

/** Byte length one transaction adds to `blockSize` (plus one comma between entries). */
export function txSize(tx: Tx): number {
  let size = measuredSizes.get(tx);
  if (size === undefined) {
    size = Buffer.byteLength(canonicalJson(tx), "utf8");
    measuredSizes.set(tx, size);
  }
  return size;
}

/** Hash of a commit certificate, carried by the next block's header; "" when there is none. */
export function commitHash(commit: Commit | null): string {
  return commit === null ? "" : keccakHex(canonicalJson(commit));
}

/** The block `executed` makes with its certificate, and its transactions with their places and results. */
export function storedBlockOf(
  executed: ExecutedBlock,
  commit: Commit,
  signers: string[],
): { block: StoredBlock; txs: ConfirmedTx[] } {
  const block: StoredBlock = {
    header: executed.header,
    hash: executed.hash,
    tx_hashes: executed.txs.map((tx) => tx.hash),
    validators: signers,
    commit,
  };
  const txs = executed.txs.map<ConfirmedTx>((tx, index) => ({
    tx,
    block_number: executed.header.number,
    block_hash: executed.hash,
    index,
    result: executed.results[index] as TxResult,
  }));
  return { block, txs };
}
