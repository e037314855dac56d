/**
 * Every LMDB database of a node's data directory: name → key → value.
 * Values are msgpack (lmdb-js default) unless marked binary.
 */
export const DATABASES = {
  /** "head" → number of the last committed block; "schema_version" → number. */
  meta: "meta",
  /** block number → StoredBlock. */
  blocks: "blocks",
  /** block hash → block number. */
  blockNumbers: "block_numbers",
  /** transaction hash → ConfirmedTx (the transaction, its block, index and result). */
  txs: "txs",
  /** state leaf path → JSON value. Ordered keys make "all leaves below /a/b" one range scan. */
  state: "state",
  /** trie node hash (hex, no 0x) → node bytes (binary). */
  trie: "trie",
  /** transaction hash → PoolRecord: the journal of admitted, not yet committed transactions. */
  pool: "pool",
} as const;

export const SCHEMA_VERSION = 1;
