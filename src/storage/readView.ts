import type { Transaction } from "lmdb";

/**
 * Options that pin a read to one LMDB read transaction, or undefined to read the latest commit.
 * While a block's write is in flight on the store's writer thread, the store reads through a view
 * of the commit before it (LmdbStore.commitBlock): the write becomes visible to new read
 * transactions before its promise resolves, and nothing may see the block before the chain's
 * head moves to it.
 */
export type ReadView = { transaction: Transaction } | undefined;
