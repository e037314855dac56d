/**
 * storage: the LMDB data directory. Owns the on-disk layout (schema.ts), atomic block commits,
 * the history index of transactions by account (historyIndex.ts, rebuilt on upgrade by
 * historyUpgrade.ts), the pool journal (poolJournal.ts), pruning of old states and blocks
 * (pruning.ts), and read-only access beside a running node for export and backup
 * (readOnlyStore.ts).
 * Does not own what a block means (chain) or which transactions are pending (txpool).
 */
export { LmdbStore } from "./lmdbStore.ts";
export { openSnapshotSource, type StoreSnapshotView } from "./snapshotTables.ts";
export { JOURNAL_FILE, LmdbPoolJournal, type PoolRecord } from "./poolJournal.ts";
export { defaultRetention, MIN_RETAIN, type RetentionOptions } from "./pruning.ts";
export { ReadOnlyStore, type StoreSnapshot } from "./readOnlyStore.ts";
export { DATABASES, SCHEMA_VERSION } from "./schema.ts";
export { openSharedTrieNodes, type SharedTrieNodes } from "./sharedTrieNodes.ts";
export { type PackedSpans, packSpans, spanAt } from "./packedSpans.ts";
