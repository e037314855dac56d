import type { Database, RootDatabase } from "lmdb";
import type { ConfirmedTx, StoredBlock } from "../chain/index.ts";
import { failpoint } from "../faults/index.ts";
import type { HistoryIndex } from "./historyIndex.ts";
import { BLOCKS_FROM } from "./pruning.ts";
import { directWrites } from "./writeBatch.ts";

/**
 * meta key: the next block whose transactions the upgrade to schema 6 indexes by address. Present
 * only while that upgrade is unfinished: opening the store resumes it from there.
 */
const HISTORY_REBUILD_NEXT = "history_rebuild_next";

/**
 * Transactions indexed per write transaction of the upgrade (whole blocks: a write may go past it
 * by one block's worth). About 0.2 s of work per write here, so that the writer is never held for
 * long and a kill loses little.
 */
export const HISTORY_REBUILD_BATCH_TXS = 20_000;

/** What the upgrade reads and writes; all of one environment. */
export interface HistoryRebuildTables {
  root: RootDatabase;
  meta: Database<number, string>;
  blocks: Database<StoredBlock, number>;
  txs: Database<ConfirmedTx, string>;
  history: HistoryIndex;
}

/**
 * Starts the upgrade to schema 6: records where the rebuild of the history index begins (the
 * lowest block kept above 0; block 0 has no transactions) and the new schema version, together,
 * so that from now on only a node that knows the index opens the store.
 */
export function beginHistoryRebuild({ root, meta }: HistoryRebuildTables, schemaVersion: number): void {
  root.transactionSync(() => {
    meta.put(HISTORY_REBUILD_NEXT, meta.get(BLOCKS_FROM) ?? 1);
    meta.put("schema_version", schemaVersion);
  });
}

/**
 * Indexes the stored blocks' transactions from the recorded block up to the head, in write
 * transactions of about `batchTxs` transactions, each moving the marker with its entries: a
 * process killed in between resumes where the last write ended. Nothing commits blocks meanwhile
 * (the store is being opened). Returns the transactions indexed.
 */
export function continueHistoryRebuild(tables: HistoryRebuildTables, batchTxs: number): number {
  const { root, meta } = tables;
  const start = meta.get(HISTORY_REBUILD_NEXT);
  if (start === undefined) return 0;
  const head = meta.get("head") ?? 0;
  let next = start;
  let indexed = 0;
  do {
    root.transactionSync(() => {
      const batch = indexBlocks(tables, next, head, batchTxs);
      indexed += batch.txs;
      next = batch.next;
      if (next > head) meta.remove(HISTORY_REBUILD_NEXT);
      else meta.put(HISTORY_REBUILD_NEXT, next);
    });
    failpoint("upgrade.afterHistoryBatch");
  } while (next <= head);
  return indexed;
}

/** Indexes whole blocks from `from` until `batchTxs` transactions or the head; where it stopped. */
function indexBlocks(
  { blocks, txs, history }: HistoryRebuildTables,
  from: number,
  head: number,
  batchTxs: number,
): { next: number; txs: number } {
  let next = from;
  let count = 0;
  while (next <= head && count < batchTxs) {
    const block = blocks.get(next);
    for (const hash of block?.tx_hashes ?? []) {
      const confirmed = txs.get(hash);
      if (confirmed === undefined) throw new Error(`block ${next} lists missing tx ${hash}`);
      history.add(directWrites, [confirmed]);
      count++;
    }
    next++;
  }
  return { next, txs: count };
}
