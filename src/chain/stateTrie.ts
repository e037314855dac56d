import { MerklePatriciaTrie } from "@ethereumjs/mpt";
import { type BatchDBOp, type DB, ValueEncoding } from "@ethereumjs/util";
import { bytesToHex, canonicalJson, hexToBytes, utf8Bytes } from "../crypto/index.ts";
import type { StateChanges } from "./state.ts";

/** Where committed trie nodes are read from (storage implements it). Keys are hex node hashes. */
export interface TrieNodeReader {
  getTrieNode(key: string): Uint8Array | undefined;
}

type NodeKey = string | Uint8Array | number;
const keyString = (key: NodeKey): string =>
  key instanceof Uint8Array ? bytesToHex(key).slice(2) : String(key);

/**
 * The trie's database: reads fall through to committed nodes; writes collect in memory until the
 * block commits them in its one LMDB write transaction. Nodes are never deleted (no pruning yet):
 * old roots stay readable, at the cost of disk.
 */
class PendingNodeDb implements DB<string, string | Uint8Array> {
  readonly pending = new Map<string, Uint8Array>();
  private readonly committed: TrieNodeReader;

  constructor(committed: TrieNodeReader) {
    this.committed = committed;
  }

  async get(key: NodeKey): Promise<Uint8Array | undefined> {
    const k = keyString(key);
    return this.pending.get(k) ?? this.committed.getTrieNode(k);
  }

  async put(key: NodeKey, value: string | Uint8Array): Promise<void> {
    this.pending.set(keyString(key), typeof value === "string" ? hexToBytes(value) : value);
  }

  async del(key: NodeKey): Promise<void> {
    this.pending.delete(keyString(key));
  }

  async batch(ops: BatchDBOp<string, string | Uint8Array>[]): Promise<void> {
    for (const op of ops) {
      if (op.type === "put") await this.put(op.key, op.value);
      else await this.del(op.key);
    }
  }

  shallowCopy(): DB<string, string | Uint8Array> {
    return this;
  }

  async open(): Promise<void> {}
}

/**
 * Merkle commitment to the state: a secure Merkle-Patricia trie (keccak-hashed keys) mapping each
 * leaf path to the canonical JSON of its value. Updates cost O(log n) node writes.
 */
export class StateTrie {
  private readonly db: PendingNodeDb;
  private readonly trie: MerklePatriciaTrie;
  private committedRoot: Uint8Array;

  constructor(nodes: TrieNodeReader, rootHex?: string) {
    this.db = new PendingNodeDb(nodes);
    this.trie = new MerklePatriciaTrie({
      db: this.db,
      useKeyHashing: true,
      valueEncoding: ValueEncoding.Bytes,
      ...(rootHex === undefined ? {} : { root: hexToBytes(rootHex) }),
    });
    this.committedRoot = this.trie.root();
  }

  rootHex(): string {
    return bytesToHex(this.trie.root());
  }

  /** Applies leaf changes on top of the committed root and returns the new root. */
  async apply(changes: StateChanges): Promise<string> {
    for (const [path, value] of changes) {
      const key = utf8Bytes(path);
      if (value === null) await this.trie.del(key);
      else await this.trie.put(key, utf8Bytes(canonicalJson(value)));
    }
    return this.rootHex();
  }

  /** Nodes written since the last commit, to persist with the block. */
  pendingNodes(): ReadonlyMap<string, Uint8Array> {
    return this.db.pending;
  }

  /** Called after the block (and its nodes) are durably stored. */
  markCommitted(): void {
    this.committedRoot = this.trie.root();
    this.db.pending.clear();
  }

  /** Drops uncommitted changes (a block that was built but not committed). */
  discard(): void {
    this.trie.root(this.committedRoot);
    this.db.pending.clear();
  }
}
