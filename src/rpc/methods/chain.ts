import { Type } from "@sinclair/typebox";
import type { SignedTxInput, StoredBlock } from "../../chain/index.ts";
import { invalidParams, invalidRequest, limitExceeded } from "../errors.ts";
import {
  blockToJson,
  confirmedTxToJson,
  headerToJson,
  pendingEntryToJson,
  pendingTxToJson,
} from "../format.ts";
import { BlockAnswerCache } from "../blockAnswerCache.ts";
import { RawJson } from "../rawJson.ts";
import { BATCH_TOO_LARGE_ERROR, RANGE_ERRORS, TX_REJECTED_ERRORS } from "../errorDocs.ts";
import { type MethodDefinition, method } from "../method.ts";
import {
  Amount,
  Block,
  BlockHeader,
  BlockWithTransactions,
  ChecksumAddress,
  ConfirmedTransaction,
  Count,
  Hash32,
  Nullable,
  PendingTransaction,
  PendingTransactionWithOperation,
} from "../resultSchemas.ts";
import { Address, BlockNumber, Hash, Index, NoParams, Params, SignedTransaction } from "../schemas.ts";
import type { RpcContext } from "../types.ts";

/** Handlers of the `chain_` namespace. A name here is the method name without `chain_`. */
export function chainMethods({ chain, pool, limits }: RpcContext): Record<string, MethodDefinition> {
  const byNumber = (number: number): StoredBlock | undefined => chain.getBlock(number);
  const byHash = (hash: string): StoredBlock | undefined => {
    const number = chain.getBlockNumber(hash.toLowerCase());
    return number === undefined ? undefined : chain.getBlock(number);
  };
  const answers = new BlockAnswerCache();
  /** The block's answer, serialized once per block and flag (blocks never change once committed). */
  const blockAnswer = (number: number | undefined, full: boolean): RawJson | null =>
    number === undefined
      ? null
      : answers.get(number, full, () => {
          const block = byNumber(number);
          return block && blockToJson(block, full, (hash) => chain.getConfirmedTx(hash));
        });

  /** Numbers from..to, clipped to the head; `from > to` and over-long ranges are refused. */
  const rangeNumbers = (from: number, to: number): number[] => {
    if (from > to) throw invalidParams(`from (${from}) is greater than to (${to})`);
    if (to - from + 1 > limits.maxBlockRange) {
      throw limitExceeded(`at most ${limits.maxBlockRange} blocks per call`, "range_too_large", {
        limit: limits.maxBlockRange,
      });
    }
    const last = Math.min(to, chain.headNumber());
    const numbers: number[] = [];
    for (let n = from; n <= last; n++) numbers.push(n);
    return numbers;
  };

  /** Blocks from..to, clipped to the head. */
  const range = (from: number, to: number): StoredBlock[] =>
    rangeNumbers(from, to).flatMap((n) => chain.getBlock(n) ?? []);

  const txAt = (block: StoredBlock | undefined, index: number) => {
    const hash = block?.tx_hashes[index];
    const confirmed = hash === undefined ? undefined : chain.getConfirmedTx(hash);
    return confirmed === undefined ? null : confirmedTxToJson(confirmed);
  };

  const FullTxs = Type.Optional(Type.Boolean({ description: "full transaction objects when true" }));
  const Range = Params({ from: BlockNumber, to: BlockNumber });
  const AddressParams = Params({ address: Address });

  return {
    getRecentBlock: method({
      params: NoParams,
      summary: "The most recent block, with full transactions.",
      result: "Block",
      resultSchema: BlockWithTransactions,
      handler: () => blockAnswer(chain.headNumber(), true),
    }),
    getRecentBlockNumber: method({
      params: NoParams,
      summary: "Number of the most recent block.",
      result: "Number",
      resultSchema: Count,
      handler: () => chain.headNumber(),
    }),
    getBlockByNumber: method({
      params: Params({ number: BlockNumber, getFullTransactions: FullTxs }),
      summary: "The block with this number, or null.",
      result: "Block | null",
      resultSchema: Nullable(Block),
      handler: ({ number, getFullTransactions }) => blockAnswer(number, getFullTransactions === true),
    }),
    getBlockByHash: method({
      params: Params({ hash: Hash, getFullTransactions: FullTxs }),
      summary: "The block with this hash, or null.",
      result: "Block | null",
      resultSchema: Nullable(Block),
      handler: ({ hash, getFullTransactions }) =>
        blockAnswer(chain.getBlockNumber(hash.toLowerCase()), getFullTransactions === true),
    }),
    getBlocks: method({
      params: Range,
      summary: "Blocks from..to inclusive (clipped to the head), with full transactions.",
      result: "Block[]",
      resultSchema: Type.Array(BlockWithTransactions),
      errors: RANGE_ERRORS,
      handler: ({ from, to }) => {
        return RawJson.array(rangeNumbers(from, to).flatMap((n) => blockAnswer(n, true) ?? []));
      },
    }),
    getBlockHeaders: method({
      params: Range,
      summary: "Block headers from..to inclusive (clipped to the head).",
      result: "BlockHeader[]",
      resultSchema: Type.Array(BlockHeader),
      errors: RANGE_ERRORS,
      handler: ({ from, to }) => range(from, to).map(headerToJson),
    }),
    getBlockTransactionCountByNumber: method({
      params: Params({ number: BlockNumber }),
      summary: "Number of transactions in the block, or null.",
      result: "Number | null",
      resultSchema: Nullable(Count),
      handler: ({ number }) => byNumber(number)?.tx_hashes.length ?? null,
    }),
    getBlockTransactionCountByHash: method({
      params: Params({ hash: Hash }),
      summary: "Number of transactions in the block, or null.",
      result: "Number | null",
      resultSchema: Nullable(Count),
      handler: ({ hash }) => byHash(hash)?.tx_hashes.length ?? null,
    }),
    getProposerByHash: method({
      params: Params({ hash: Hash }),
      summary: "Address of the block's proposer, or null.",
      result: "String | null",
      resultSchema: Nullable(ChecksumAddress),
      handler: ({ hash }) => byHash(hash)?.header.proposer ?? null,
    }),
    getProposerByNumber: method({
      params: Params({ number: BlockNumber }),
      summary: "Address of the block's proposer, or null.",
      result: "String | null",
      resultSchema: Nullable(ChecksumAddress),
      handler: ({ number }) => byNumber(number)?.header.proposer ?? null,
    }),
    getValidatorsByHash: method({
      params: Params({ hash: Hash }),
      summary: "Addresses whose votes finalized the block (sorted), or null.",
      result: "String[] | null",
      resultSchema: Nullable(Type.Array(ChecksumAddress)),
      handler: ({ hash }) => byHash(hash)?.validators ?? null,
    }),
    getValidatorsByNumber: method({
      params: Params({ number: BlockNumber }),
      summary: "Addresses whose votes finalized the block (sorted), or null.",
      result: "String[] | null",
      resultSchema: Nullable(Type.Array(ChecksumAddress)),
      handler: ({ number }) => byNumber(number)?.validators ?? null,
    }),
    getPendingTransactions: method({
      params: NoParams,
      summary:
        "Transactions admitted but not yet in a block, in arrival order (status PENDING, no operation).",
      result: "PendingTransaction[]",
      resultSchema: Type.Array(PendingTransaction),
      handler: () => pool.pending().map(pendingEntryToJson),
    }),
    getTransactionByBlockNumberAndIndex: method({
      params: Params({ block_number: BlockNumber, index: Index }),
      summary: "The transaction at this position, with block_hash, block_number, index and result; or null.",
      result: "Transaction | null",
      resultSchema: Nullable(ConfirmedTransaction),
      handler: ({ block_number, index }) => txAt(byNumber(block_number), index),
    }),
    getTransactionByBlockHashAndIndex: method({
      params: Params({ block_hash: Hash, index: Index }),
      summary: "The transaction at this position, with block_hash, block_number, index and result; or null.",
      result: "Transaction | null",
      resultSchema: Nullable(ConfirmedTransaction),
      handler: ({ block_hash, index }) => txAt(byHash(block_hash), index),
    }),
    getTransactionByHash: method({
      params: Params({ hash: Hash }),
      summary:
        "A committed transaction (with its block, index and result) or a pending one (status PENDING); or null.",
      result: "Transaction | null",
      resultSchema: Type.Union([ConfirmedTransaction, PendingTransactionWithOperation, Type.Null()]),
      handler: ({ hash }) => {
        const key = hash.toLowerCase();
        const confirmed = chain.getConfirmedTx(key);
        if (confirmed !== undefined) return confirmedTxToJson(confirmed);
        const pending = pool.getPending(key);
        return pending === undefined ? null : pendingTxToJson(pending);
      },
    }),
    sendSignedTransaction: method({
      params: SignedTransaction,
      summary:
        "Checks and admits a signed transaction; returns its hash. Rejections are -32003 with data.reason.",
      result: "String",
      resultSchema: Hash32,
      errors: TX_REJECTED_ERRORS,
      handler: (params) => pool.submit(params as SignedTxInput),
    }),
    sendSignedTransactionBatch: method({
      params: Params({ tx_list: Type.Array(SignedTransaction, { minItems: 1 }) }),
      summary:
        "Admits all or none; returns the hashes in input order. A rejection names the first failing index.",
      result: "String[]",
      resultSchema: Type.Array(Hash32),
      errors: [BATCH_TOO_LARGE_ERROR, ...TX_REJECTED_ERRORS],
      handler: ({ tx_list }) => {
        if (tx_list.length > limits.maxBatchItems) {
          // The same limit and error as an over-long JSON-RPC batch (DESIGN.md §2, §9).
          throw invalidRequest(
            `tx_list holds ${tx_list.length} entries; the limit is ${limits.maxBatchItems}`,
            "batch_too_large",
          );
        }
        return pool.submitBatch(tx_list as SignedTxInput[]);
      },
    }),
    getBalance: method({
      params: AddressParams,
      summary: "Balance of the account (0 for an unknown one).",
      result: "Number",
      resultSchema: Amount,
      handler: ({ address }) => chain.balanceOf(address),
    }),
    getConsensusStakeAmount: method({
      params: AddressParams,
      summary: "Current consensus stake of the account.",
      result: "Number",
      resultSchema: Amount,
      handler: ({ address }) => chain.stakeOf(address),
    }),
    getNonce: method({
      params: AddressParams,
      summary: "Committed ordered transactions of the address: the nonce its next one must carry.",
      result: "Number",
      resultSchema: Count,
      handler: ({ address }) => chain.nonceOf(address),
    }),
    isValidator: method({
      params: AddressParams,
      summary: "Whether the address is in the current validator set.",
      result: "Boolean",
      resultSchema: Type.Boolean(),
      handler: ({ address }) => chain.isValidator(address),
    }),
  };
}
