/**
 * storage: the LMDB data directory. Owns the on-disk layout (schema.ts), atomic block commits
 * and the pool journal (poolJournal.ts).
 * Does not own what a block means (chain) or which transactions are pending (txpool).
 */
export { LmdbStore, type StoreSnapshotView } from "./lmdbStore.ts";
export { LmdbPoolJournal, type PoolRecord } from "./poolJournal.ts";
export { DATABASES, SCHEMA_VERSION } from "./schema.ts";
