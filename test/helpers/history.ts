import assert from "node:assert/strict";
import { isAddress, toChecksumAddress } from "../../src/crypto/index.ts";
import { assertConfirmedTx, type ConfirmedTxJson } from "./shapes.ts";

/**
 * Helpers of the history tests (chain_getTransactionsByAddress): every page of a listing, and the
 * list it must equal, computed from the blocks (chain_getBlocks, and each candidate's result by
 * hash) without the history index.
 */

/** One JSON-RPC call that must succeed (TestNode.result, or helpers/process.ts `rpc` bound to a URL). */
export type CallFn = <T>(method: string, params?: unknown) => Promise<T>;

export interface HistoryPage {
  transactions: ConfirmedTxJson[];
  next_cursor: string | null;
}

const METHOD = "chain_getTransactionsByAddress";

/**
 * Follows next_cursor from the first page to the last (at most `maxPages`), checking each page's
 * shape and size; returns the pages and their transactions in order.
 */
export async function readAllPages(
  call: CallFn,
  params: Record<string, unknown>,
  maxPages = 10_000,
): Promise<{ pages: HistoryPage[]; txs: ConfirmedTxJson[] }> {
  const pages: HistoryPage[] = [];
  let cursor: string | undefined;
  do {
    assert.ok(pages.length < maxPages, `${METHOD} ${JSON.stringify(params)}: more than ${maxPages} pages`);
    const page = await call<HistoryPage>(METHOD, cursor === undefined ? params : { ...params, cursor });
    const where = `${METHOD} ${JSON.stringify(params)} page ${pages.length}`;
    page.transactions.forEach((tx, i) => {
      assertConfirmedTx(tx, `${where} [${i}]`);
    });
    if (typeof params.limit === "number" && page.next_cursor !== null) {
      assert.equal(page.transactions.length, params.limit, `${where}: a page before the last is full`);
    }
    pages.push(page);
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined);
  return { pages, txs: pages.flatMap((page) => page.transactions) };
}

interface BlockTx {
  hash: string;
  address: string;
  operation: { ref: string };
}

/** The recipient a `/transfer/<from>/<to>/<key>/value` path names, checksummed; else undefined. */
function transferRecipient(ref: string): string | undefined {
  const segments = ref.split("/");
  const to = segments[3];
  return segments[1] === "transfer" && to !== undefined && isAddress(to) ? toChecksumAddress(to) : undefined;
}

/**
 * The hashes of `address`'s committed transactions in blocks `from..to` (default: 1..head),
 * newest first: those it sent, and the transfers to it whose result is success.
 */
export async function historyFromBlocks(
  call: CallFn,
  address: string,
  from = 1,
  to?: number,
): Promise<string[]> {
  const last = to ?? (await call<number>("chain_getRecentBlockNumber"));
  const hashes: string[] = [];
  for (let start = from; start <= last; start += 100) {
    const blocks = await call<{ number: number; transactions: BlockTx[] }[]>("chain_getBlocks", {
      from: start,
      to: Math.min(last, start + 99),
    });
    for (const block of blocks) {
      for (const tx of block.transactions) {
        if (tx.address === address) hashes.push(tx.hash);
        else if (transferRecipient(tx.operation.ref) === address) {
          const confirmed = await call<ConfirmedTxJson>("chain_getTransactionByHash", { hash: tx.hash });
          if (confirmed.result.code === 0) hashes.push(tx.hash);
        }
      }
    }
  }
  return hashes.reverse();
}
