import { invalidParams, pruned } from "./errors.ts";
import { confirmedTxToJson } from "./format.ts";
import { HISTORY_PAGE_DEFAULT } from "./schemas.ts";
import type { ChainPosition, RpcChainView } from "./types.ts";

/**
 * chain_getTransactionsByAddress: an account's committed transactions, newest first, a page at a
 * time. A page is one read of the history index (`limit + 1` entries: the extra one, if any, is
 * where the next page starts) and `limit` lookups by hash, whatever the account's size.
 */

export interface AddressHistoryParams {
  address: string;
  from_block?: number;
  to_block?: number;
  limit?: number;
  cursor?: string;
}

export interface AddressHistoryPage {
  transactions: Record<string, unknown>[];
  next_cursor: string | null;
}

const MAX_UINT32 = 0xffffffff;

/**
 * The cursor is the position of the next page's first transaction: block and index as two
 * big-endian uint32, in hex. Clients pass it back unchanged; any value of the params schema's
 * shape decodes to a position (the reads below clip it to the range asked for).
 */
function encodeCursor({ block, index }: ChainPosition): string {
  return `0x${block.toString(16).padStart(8, "0")}${index.toString(16).padStart(8, "0")}`;
}

function decodeCursor(cursor: string): ChainPosition {
  return {
    block: Number.parseInt(cursor.slice(2, 10), 16),
    index: Number.parseInt(cursor.slice(10, 18), 16),
  };
}

const below = (a: ChainPosition, b: ChainPosition): boolean =>
  a.block < b.block || (a.block === b.block && a.index < b.index);

export function addressHistoryPage(chain: RpcChainView, params: AddressHistoryParams): AddressHistoryPage {
  const { from_block: fromBlock, to_block: toBlock } = params;
  if (fromBlock !== undefined && toBlock !== undefined && fromBlock > toBlock) {
    throw invalidParams(`from_block (${fromBlock}) is greater than to_block (${toBlock})`);
  }
  const limit = params.limit ?? HISTORY_PAGE_DEFAULT;
  const top = Math.min(toBlock ?? Number.MAX_SAFE_INTEGER, chain.headNumber());
  const firstKept = chain.blocksFrom();
  if (fromBlock !== undefined) {
    // Block 0 is always kept (and holds no transactions): the range is whole unless it reaches a
    // pruned block from 1 on. Asked for explicitly, a pruned block is an error, never a short list.
    const lowest = Math.max(fromBlock, 1);
    if (lowest <= top && lowest < firstKept) throw pruned(`block ${lowest}`, firstKept);
  }
  // Without from_block the listing ends at the lowest kept block.
  const lowest = Math.max(fromBlock ?? 0, firstKept);
  let upTo: ChainPosition = { block: Math.min(top, MAX_UINT32), index: MAX_UINT32 };
  if (params.cursor !== undefined) {
    const resume = decodeCursor(params.cursor);
    if (below(resume, upTo)) upTo = resume;
  }
  if (top < lowest) return { transactions: [], next_cursor: null };

  const entries = chain.addressHistory(params.address, { fromBlock: lowest, upTo, limit: limit + 1 });
  const next = entries[limit];
  return {
    transactions: entries.slice(0, limit).map(({ block, index, hash }) => {
      const confirmed = chain.getConfirmedTx(hash);
      // The index and the transactions are written and pruned in the same write transactions.
      if (confirmed === undefined)
        throw new Error(`history entry ${block}:${index} names missing tx ${hash}`);
      return confirmedTxToJson(confirmed);
    }),
    next_cursor: next === undefined ? null : encodeCursor(next),
  };
}
