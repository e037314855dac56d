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
  /** address → stake, for every account with a non-zero stake (derived from state). */
  stakers: "stakers",
  /** first height (uint32) → Validator[]: the set in force from that height to the next entry. */
  validatorSets: "validator_sets",
} as const;

/** 2: stakers and validator_sets. */
export const SCHEMA_VERSION = 2;
