import type { Database, Key, RootDatabase } from "lmdb";

/**
 * Every LMDB database of a node's data directory: name → key → value.
 * Values are msgpack (lmdb-js default) unless marked binary.
 */
export const DATABASES = {
  /**
   * "head" → number of the last committed block; "schema_version" → number; "states_from" and
   * "blocks_from" → the lowest kept state and block above 0: what pruning (storage/pruning.ts) or
   * a snapshot's restore (the snapshot's height) left; "deletions_from" → the first height whose
   * deletions `state_deleted` records (a store made before it existed starts it at its next block);
   * "history_rebuild_next" → the next block the schema-6 upgrade indexes, only while it is unfinished.
   */
  meta: "meta",
  /** block number → StoredBlock. */
  blocks: "blocks",
  /** block hash → block number. */
  blockNumbers: "block_numbers",
  /** transaction hash → ConfirmedTx (the transaction, its block, index and result). */
  txs: "txs",
  /** state leaf path → JSON value. Ordered keys make "all leaves below /a/b" one range scan. */
  state: "state",
  /**
   * trie node id → its record (binary): RLP encoding, then its hashed children's 6-byte ids. Ids
   * grow with every block, so a block's nodes are appended, not scattered by hash.
   */
  trie: "trie",
  /** state root (hex with 0x) → the node id of that root. */
  trieRoots: "trie_roots",
  /**
   * height d (uint32) → what block d retired from the trie: the ids of nodes only states below d
   * reach, and the parent's root entry. Written only while states are pruned (storage/pruning.ts).
   */
  trieRetired: "trie_retired",
  /**
   * arrival seq → Tx: the journal of admitted, not yet committed transactions. Keyed by the
   * pool's arrival number, so a journal write appends at the end of the table (keyed by hash,
   * each entry rewrote a random page: 4× the CPU per entry, docs/performance.md) and a restart
   * reads the pool back in arrival order. The store keeps hash → seq in memory for removals.
   */
  journal: "journal",
  /**
   * address (20 bytes) ‖ block number (uint32 BE) ‖ index in the block (uint32 BE) → transaction
   * hash (32 bytes), both binary: every committed transaction under its sender and, for a
   * successful transfer, its recipient (historyIndex.ts). One account's entries are contiguous
   * and in chain order, so a page of its history is one range read.
   */
  txByAddress: "tx_by_address",
  /** Schema 3's journal (transaction hash → PoolRecord), moved into `journal` on open. */
  legacyPool: "pool",
  /**
   * state leaf path → the height of the block that last deleted it. With the head's leaves in
   * `state`, these are every path a kept state may hold, so a subtree can be listed at a past
   * height (chain/stateReads.ts). Pruned with the states that could still hold the path.
   */
  stateDeleted: "state_deleted",
  /** address → stake, for every account with a non-zero stake (derived from state). */
  stakers: "stakers",
  /** first height (uint32) → Validator[]: the set in force from that height to the next entry. */
  validatorSets: "validator_sets",
} as const;

/**
 * 2: stakers and validator_sets. 3: trie nodes by id (docs/decisions/008-state-commitment.md).
 * 4: the pool journal keyed by arrival seq (a schema-3 directory is migrated when opened).
 * 5: trie_retired, and the pruning markers in meta (a schema-3 or 4 directory is migrated).
 * 6: tx_by_address, rebuilt from the stored blocks when an older directory is opened (resumed from
 * `meta.history_rebuild_next` if that was interrupted; storage/historyUpgrade.ts).
 */
export const SCHEMA_VERSION = 6;

/** Options of the environment: the store and its block writer thread (blockWriter.ts) open it alike. */
export const ENVIRONMENT_OPTIONS = {
  compression: false,
  // lmdb-js allows 12 named databases by default; DATABASES lists 13 (and growing).
  maxDbs: 32,
} as const;

/**
 * How each database is opened, beyond lmdb-js's defaults (ordered-binary keys, msgpack values):
 * the store and its block writer thread open them alike, so both encode keys and values the same.
 */
export const TABLE_OPTIONS = {
  meta: {},
  blocks: { keyEncoding: "uint32" },
  blockNumbers: {},
  txs: {},
  state: {},
  trie: { encoding: "binary" },
  trieRoots: {},
  trieRetired: { keyEncoding: "uint32" },
  journal: {},
  txByAddress: { keyEncoding: "binary", encoding: "binary" },
  legacyPool: {},
  stateDeleted: {},
  stakers: {},
  validatorSets: { keyEncoding: "uint32" },
} as const satisfies Record<
  keyof typeof DATABASES,
  { keyEncoding?: "uint32" | "binary"; encoding?: "binary" }
>;

export type TableName = keyof typeof DATABASES;

/** Opens one of DATABASES with its TABLE_OPTIONS. */
export function openTable<V, K extends Key>(root: RootDatabase, table: TableName): Database<V, K> {
  return root.openDB<V, K>({ name: DATABASES[table], ...TABLE_OPTIONS[table] });
}
