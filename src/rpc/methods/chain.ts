import { Type } from "@sinclair/typebox";
import type { SignedTxInput, StoredBlock } from "../../chain/index.ts";
import { invalidParams, invalidRequest, limitExceeded, pruned } from "../errors.ts";
import {
  blockToJson,
  confirmedTxToJson,
  headerToJson,
  pendingEntryToJson,
  pendingTxToJson,
} from "../format.ts";
import { BlockAnswerCache } from "../blockAnswerCache.ts";
import { RawJson } from "../rawJson.ts";
import { addressHistoryPage } from "../addressHistory.ts";
import {
  BATCH_ERRORS,
  HISTORY_ERRORS,
  PRUNED_ERRORS,
  RANGE_ERRORS,
  TX_REJECTED_ERRORS,
} from "../errorDocs.ts";
import type { Handlers, MethodTable } from "../method.ts";
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
  TransactionsPage,
} from "../resultSchemas.ts";
import {
  Address,
  BlockNumber,
  Hash,
  HistoryCursor,
  HistoryLimit,
  Index,
  NoParams,
  Params,
  SignedTransaction,
} from "../schemas.ts";
import type { RpcContext } from "../types.ts";

const FullTxs = Type.Optional(Type.Boolean({ description: "full transaction objects when true" }));
const Range = Params({ from: BlockNumber, to: BlockNumber });
const AddressParams = Params({ address: Address });

/** The `chain_` namespace: blocks, transactions, submission and account state. */
export const CHAIN_METHODS = {
  chain_getRecentBlock: {
    params: NoParams,
    summary: "The most recent block, with full transactions.",
    result: "Block",
    resultSchema: BlockWithTransactions,
  },
  chain_getRecentBlockNumber: {
    params: NoParams,
    summary: "Number of the most recent block.",
    result: "Number",
    resultSchema: Count,
  },
  chain_getBlockByNumber: {
    params: Params({ number: BlockNumber, getFullTransactions: FullTxs }),
    summary: "The block with this number, or null.",
    result: "Block | null",
    resultSchema: Nullable(Block),
    errors: PRUNED_ERRORS,
  },
  chain_getBlockByHash: {
    params: Params({ hash: Hash, getFullTransactions: FullTxs }),
    summary: "The block with this hash, or null.",
    result: "Block | null",
    resultSchema: Nullable(Block),
  },
  chain_getBlocks: {
    params: Range,
    summary: "Blocks from..to inclusive (clipped to the head), with full transactions.",
    result: "Block[]",
    resultSchema: Type.Array(BlockWithTransactions),
    errors: [...RANGE_ERRORS, ...PRUNED_ERRORS],
  },
  chain_getBlockHeaders: {
    params: Range,
    summary: "Block headers from..to inclusive (clipped to the head).",
    result: "BlockHeader[]",
    resultSchema: Type.Array(BlockHeader),
    errors: [...RANGE_ERRORS, ...PRUNED_ERRORS],
  },
  chain_getBlockTransactionCountByNumber: {
    params: Params({ number: BlockNumber }),
    summary: "Number of transactions in the block, or null.",
    result: "Number | null",
    resultSchema: Nullable(Count),
    errors: PRUNED_ERRORS,
  },
  chain_getBlockTransactionCountByHash: {
    params: Params({ hash: Hash }),
    summary: "Number of transactions in the block, or null.",
    result: "Number | null",
    resultSchema: Nullable(Count),
  },
  chain_getProposerByHash: {
    params: Params({ hash: Hash }),
    summary: "Address of the block's proposer, or null.",
    result: "String | null",
    resultSchema: Nullable(ChecksumAddress),
  },
  chain_getProposerByNumber: {
    params: Params({ number: BlockNumber }),
    summary: "Address of the block's proposer, or null.",
    result: "String | null",
    resultSchema: Nullable(ChecksumAddress),
    errors: PRUNED_ERRORS,
  },
  chain_getValidatorsByHash: {
    params: Params({ hash: Hash }),
    summary: "Addresses whose votes finalized the block (sorted), or null.",
    result: "String[] | null",
    resultSchema: Nullable(Type.Array(ChecksumAddress)),
  },
  chain_getValidatorsByNumber: {
    params: Params({ number: BlockNumber }),
    summary: "Addresses whose votes finalized the block (sorted), or null.",
    result: "String[] | null",
    resultSchema: Nullable(Type.Array(ChecksumAddress)),
    errors: PRUNED_ERRORS,
  },
  chain_getPendingTransactions: {
    params: NoParams,
    summary: "Transactions admitted but not yet in a block, in arrival order (status PENDING, no operation).",
    result: "PendingTransaction[]",
    resultSchema: Type.Array(PendingTransaction),
  },
  chain_getTransactionByBlockNumberAndIndex: {
    params: Params({ block_number: BlockNumber, index: Index }),
    summary: "The transaction at this position, with block_hash, block_number, index and result; or null.",
    result: "Transaction | null",
    resultSchema: Nullable(ConfirmedTransaction),
    errors: PRUNED_ERRORS,
  },
  chain_getTransactionByBlockHashAndIndex: {
    params: Params({ block_hash: Hash, index: Index }),
    summary: "The transaction at this position, with block_hash, block_number, index and result; or null.",
    result: "Transaction | null",
    resultSchema: Nullable(ConfirmedTransaction),
  },
  chain_getTransactionByHash: {
    params: Params({ hash: Hash }),
    summary:
      "A committed transaction (with its block, index and result) or a pending one (status PENDING); or null.",
    result: "Transaction | null",
    resultSchema: Type.Union([ConfirmedTransaction, PendingTransactionWithOperation, Type.Null()]),
  },
  chain_getTransactionsByAddress: {
    params: Params({
      address: Address,
      from_block: Type.Optional({
        ...BlockNumber,
        description: "lowest block listed (default: the first kept)",
      }),
      to_block: Type.Optional({
        ...BlockNumber,
        description: "highest block listed (default and at most: the head)",
      }),
      limit: Type.Optional(HistoryLimit),
      cursor: Type.Optional(HistoryCursor),
    }),
    summary:
      "Committed transactions the address sent or received a successful transfer by, newest first, a page at a time; pass next_cursor back as cursor for the next page.",
    result: "{transactions: Transaction[], next_cursor: String | null}",
    resultSchema: TransactionsPage,
    errors: HISTORY_ERRORS,
  },
  chain_sendSignedTransaction: {
    params: SignedTransaction,
    summary:
      "Checks and admits a signed transaction; returns its hash. Rejections are -32003 with data.reason.",
    result: "String",
    resultSchema: Hash32,
    errors: TX_REJECTED_ERRORS,
  },
  chain_sendSignedTransactionBatch: {
    params: Params({ tx_list: Type.Array(SignedTransaction, { minItems: 1 }) }),
    summary:
      "Admits all or none; returns the hashes in input order. A rejection names the first failing index.",
    result: "String[]",
    resultSchema: Type.Array(Hash32),
    errors: BATCH_ERRORS,
  },
  chain_getBalance: {
    params: AddressParams,
    summary: "Balance of the account (0 for an unknown one).",
    result: "Number",
    resultSchema: Amount,
  },
  chain_getConsensusStakeAmount: {
    params: AddressParams,
    summary: "Current consensus stake of the account.",
    result: "Number",
    resultSchema: Amount,
  },
  chain_getNonce: {
    params: AddressParams,
    summary: "Committed ordered transactions of the address: the nonce its next one must carry.",
    result: "Number",
    resultSchema: Count,
  },
  chain_isValidator: {
    params: AddressParams,
    summary: "Whether the address is in the current validator set.",
    result: "Boolean",
    resultSchema: Type.Boolean(),
  },
} satisfies MethodTable;

/** What each `chain_` method does, over the node's chain and pool. */
export function chainHandlers({ chain, pool, limits }: RpcContext): Handlers<typeof CHAIN_METHODS> {
  /** Refuses a number below what the node keeps (block 0 is always kept). */
  const kept = (number: number): number => {
    const first = chain.blocksFrom();
    if (number > 0 && number < first) throw pruned(`block ${number}`, first);
    return number;
  };
  const byNumber = (number: number): StoredBlock | undefined => chain.getBlock(kept(number));
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
    // Block 0 is always kept: the range is whole unless a block from 1 on was pruned.
    const lowest = Math.max(from, 1);
    if (lowest <= last) kept(lowest);
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

  return {
    chain_getRecentBlock: () => blockAnswer(chain.headNumber(), true),
    chain_getRecentBlockNumber: () => chain.headNumber(),
    chain_getBlockByNumber: ({ number, getFullTransactions }) =>
      blockAnswer(kept(number), getFullTransactions === true),
    chain_getBlockByHash: ({ hash, getFullTransactions }) =>
      blockAnswer(chain.getBlockNumber(hash.toLowerCase()), getFullTransactions === true),
    chain_getBlocks: ({ from, to }) => {
      return RawJson.array(rangeNumbers(from, to).flatMap((n) => blockAnswer(n, true) ?? []));
    },
    chain_getBlockHeaders: ({ from, to }) => range(from, to).map(headerToJson),
    chain_getBlockTransactionCountByNumber: ({ number }) => byNumber(number)?.tx_hashes.length ?? null,
    chain_getBlockTransactionCountByHash: ({ hash }) => byHash(hash)?.tx_hashes.length ?? null,
    chain_getProposerByHash: ({ hash }) => byHash(hash)?.header.proposer ?? null,
    chain_getProposerByNumber: ({ number }) => byNumber(number)?.header.proposer ?? null,
    chain_getValidatorsByHash: ({ hash }) => byHash(hash)?.validators ?? null,
    chain_getValidatorsByNumber: ({ number }) => byNumber(number)?.validators ?? null,
    chain_getPendingTransactions: () => pool.pending().map(pendingEntryToJson),
    chain_getTransactionByBlockNumberAndIndex: ({ block_number, index }) =>
      txAt(byNumber(block_number), index),
    chain_getTransactionByBlockHashAndIndex: ({ block_hash, index }) => txAt(byHash(block_hash), index),
    chain_getTransactionByHash: ({ hash }) => {
      const key = hash.toLowerCase();
      const confirmed = chain.getConfirmedTx(key);
      if (confirmed !== undefined) return confirmedTxToJson(confirmed);
      const pending = pool.getPending(key);
      return pending === undefined ? null : pendingTxToJson(pending);
    },
    chain_getTransactionsByAddress: (params) => addressHistoryPage(chain, params),
    chain_sendSignedTransaction: (params) => pool.submit(params as SignedTxInput),
    chain_sendSignedTransactionBatch: ({ tx_list }) => {
      if (tx_list.length > limits.maxBatchItems) {
        // The same limit and error as an over-long JSON-RPC batch (DESIGN.md §2, §9).
        throw invalidRequest(
          `tx_list holds ${tx_list.length} entries; the limit is ${limits.maxBatchItems}`,
          "batch_too_large",
        );
      }
      return pool.submitBatch(tx_list as SignedTxInput[]);
    },
    chain_getBalance: ({ address }) => chain.balanceOf(address),
    chain_getConsensusStakeAmount: ({ address }) => chain.stakeOf(address),
    chain_getNonce: ({ address }) => chain.nonceOf(address),
    chain_isValidator: ({ address }) => chain.isValidator(address),
  };
}
