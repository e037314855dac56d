import { open } from "lmdb";
import { ENVIRONMENT_OPTIONS, openTable } from "./schema.ts";

/**
 * The store's committed trie nodes, read from another thread of the node's process (the trie
 * thread, node/trieThread.ts): lmdb-js opens one environment per path and process, so this shares
 * the store's and sees each write once it has committed and `renew` was called after it.
 */
export interface SharedTrieNodes {
  /** The record of node `id` (as LmdbStore.getTrieNode), or undefined. */
  getTrieNode(id: number): Uint8Array | undefined;
  /**
   * The next read sees every write committed before this call. (lmdb-js keeps a read transaction
   * until its next timer turn: a write committed meanwhile would not be seen.)
   */
  renew(): void;
  /** Closes this thread's handle on the environment (the other threads' stay open). */
  close(): Promise<void>;
}

/** Opens the trie table of the store at `path`, which another thread of this process has opened. */
export function openSharedTrieNodes(path: string): SharedTrieNodes {
  const root = open({ path, ...ENVIRONMENT_OPTIONS });
  const trie = openTable<Uint8Array, number>(root, "trie");
  return {
    getTrieNode: (id) => trie.get(id),
    renew: () => root.resetReadTxn(),
    close: () => root.close(),
  };
}
