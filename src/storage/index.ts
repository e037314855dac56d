/**
 * storage: the LMDB data directory. Owns the on-disk layout (schema.ts) and atomic block commits.
 * Does not own what a block means (chain) or which transactions are pending (txpool).
 */
export { LmdbStore, type PoolRecord } from "./lmdbStore.ts";
export { DATABASES, SCHEMA_VERSION } from "./schema.ts";
