import { bytesToHex, canonicalJson, hexToBytes, keccak256, keccakText, utf8Bytes } from "../crypto/index.ts";
import { MerkleTrie, type RootRef } from "./merkleTrie.ts";
import type { StateChanges } from "./state.ts";
import { buildTrie, PackedEntries } from "./trieBuild.ts";
import type { JsonValue } from "./types.ts";

/**
 * Where committed trie nodes are read from (storage implements it). Nodes are numbered in the
 * order they were stored (docs/decisions/008-state-commitment.md).
 */
export interface TrieNodeReader {
  /** The record of node `id`: its RLP encoding, then the 6-byte ids of its hashed children. */
  getTrieNode(id: number): Uint8Array | undefined;
  /** The node id of a committed state root (hex with 0x), if it was stored. */
  getTrieRoot(rootHex: string): number | undefined;
  /** One past the largest stored node id (0 for an empty store). */
  nextTrieNodeId(): number;
}

/** What a block stores for the state trie: the new nodes by id, and its root's id. */
export interface TrieWrite {
  nodes: Iterable<readonly [number, Uint8Array]>;
  /** Absent for the empty trie, which stores nothing. */
  root?: { hash: string; id: number };
  /**
   * Ids of stored nodes that the parent's root reaches and this block's root does not: pruning
   * deletes them once the parent's state is no longer kept (docs/decisions/011-pruning.md).
   */
  retired: readonly number[];
  /** The committed root this write builds on (absent on the empty trie): what it retires, if it changed. */
  parent?: { hash: string; id: number };
}

/**
 * What the chain asks of the state's commitment, block by block: StateTrie on the chain's own
 * thread, or a trie on a thread of its own (node/trieThread.ts, docs/decisions/024). The calls
 * follow one another in the order the chain makes them; `pause`, where taken, is awaited between
 * pieces of work done on the caller's thread, and is not needed by work done elsewhere.
 */
export interface StateCommitment {
  /** Applies a block's leaf changes on top of the current root; resolves to the new root. */
  apply(changes: StateChanges, pause?: () => Promise<void>): Promise<string>;
  /** What the block must store with itself (after `apply`). */
  pendingWrite(): TrieWrite;
  /** `pendingWrite()`'s walk over the new nodes, in pieces (before it, on a sliced chain). */
  numberNewNodes(pause: () => Promise<void>): Promise<void>;
  /** The block is stored (or, with `underWay`, handed to the store): the trie moves on to it. */
  markCommitted(underWay?: boolean): void;
  /** `markCommitted(underWay)`, in pieces. */
  markCommittedInSlices(underWay: boolean, pause: () => Promise<void>): Promise<void>;
  /** The write markCommitted(true) was told of is durable. */
  written(): void;
  /** Drops the changes applied since the last commit. */
  discard(): void;
  /** Where present: true once this trie cannot be used (its thread was lost); the chain opens another. */
  failed?(): boolean;
}

/**
 * Merkle commitment to the state: a secure Merkle-Patricia trie (keccak-hashed keys) mapping each
 * leaf path to the canonical JSON of its value: the trie and root of @ethereumjs/mpt with
 * `useKeyHashing`. A block's changes are applied in memory and hashed once; only the nodes
 * reachable from its root are handed to the store.
 */
export class StateTrie implements StateCommitment {
  private readonly trie: MerkleTrie;
  /** The root as stored (hex and node id); undefined for the empty trie. */
  private committedRoot: { hash: string; id: number } | undefined;
  /**
   * The nodes of the writes still under way (markCommitted's `underWay`), by id: one block's
   * (Chain.commitAside), or a range's blocks until the range's write commits (Chain.commitTogether
   * with a trie on another thread).
   */
  private unwritten: ReadonlyMap<number, Uint8Array>[] = [];

  /**
   * Opens the trie at a committed root (hex with 0x; none or the empty root: empty). `options`
   * are the MerkleTrie's (tests keep fewer levels decoded, to reach the store sooner).
   */
  constructor(nodes: TrieNodeReader, rootHex?: string, options: { residentDepth?: number } = {}) {
    const empty = rootHex === undefined || rootHex === EMPTY_ROOT;
    const rootId = empty ? undefined : nodes.getTrieRoot(rootHex);
    if (!empty && rootId === undefined) throw new Error(`state root ${rootHex} is not in the store`);
    if (rootId !== undefined && rootHex !== undefined) this.committedRoot = { hash: rootHex, id: rootId };
    this.trie = new MerkleTrie(
      { nodeById: (id) => this.unwrittenNode(id) ?? nodes.getTrieNode(id) },
      { hash: keccak256, ...options },
      rootId === undefined || rootHex === undefined ? undefined : { hash: hexToBytes(rootHex), id: rootId },
      nodes.nextTrieNodeId(),
    );
  }

  rootHex(): string {
    return bytesToHex(this.trie.root());
  }

  /**
   * Applies leaf changes on top of the trie's current root and returns the new root. `pause`, when
   * given, is awaited between pieces of the work (TimeSlices); nothing else may change the trie
   * meanwhile. Without it the work runs in one piece, with no await on the way (a validator's block).
   */
  async apply(changes: StateChanges, pause?: () => Promise<void>): Promise<string> {
    let done = 0;
    for (const [path, value] of changes) {
      const key = keccakText(path);
      if (value === null) this.trie.del(key);
      else this.trie.put(key, utf8Bytes(canonicalJson(value)));
      if (pause !== undefined && ++done % 64 === 0) await pause();
    }
    if (pause !== undefined) await this.trie.hashBelowRoot(pause);
    return this.rootHex();
  }

  /** What the block must store with itself: the trie's new nodes and its root. */
  pendingWrite(): TrieWrite {
    const write = trieWrite(this.trie.newNodes());
    return this.committedRoot === undefined ? write : { ...write, parent: this.committedRoot };
  }

  /**
   * Called after the block (and its trie write) is durably stored, or with `underWay` once it is
   * handed to the store but not yet durable: the trie moves on to the block's root either way,
   * and until `written()` the nodes the store does not hold yet are read from the write itself
   * (the next block executes on top of this one meanwhile: Chain.commitAside).
   */
  markCommitted(underWay = false): void {
    this.movedOn(underWay);
    this.trie.markCommitted();
  }

  /**
   * `pendingWrite()` and `markCommitted()` with their walks over the block's new nodes cut into
   * pieces, awaiting `pause` between them (MerkleTrie.newNodesInSlices): nothing else may change
   * the trie meanwhile.
   */
  async numberNewNodes(pause: () => Promise<void>): Promise<void> {
    await this.trie.newNodesInSlices(pause);
  }

  /** `markCommitted(underWay)`, its release of the block's decoded nodes in pieces. */
  async markCommittedInSlices(underWay: boolean, pause: () => Promise<void>): Promise<void> {
    this.movedOn(underWay);
    await this.trie.markCommittedInSlices(pause);
  }

  /**
   * The trie's committed root becomes the current one; with `underWay`, its nodes are read from
   * the write until `written()`.
   */
  private movedOn(underWay: boolean): void {
    const writes = this.trie.newNodes();
    this.committedRoot = trieWrite(writes).root;
    if (underWay) this.unwritten.push(writes.records);
    else this.unwritten = [];
  }

  private unwrittenNode(id: number): Uint8Array | undefined {
    for (const records of this.unwritten) {
      const record = records.get(id);
      if (record !== undefined) return record;
    }
    return undefined;
  }

  /** The writes markCommitted(true) was told of are durable: the store holds their nodes. */
  written(): void {
    this.unwritten = [];
  }

  /** Drops uncommitted changes (a block that was built but not committed). */
  discard(): void {
    this.trie.discard();
  }
}

/**
 * The trie of a whole state built in one pass (genesis): the same root and nodes as applying the
 * leaves to an empty StateTrie, without holding the whole trie in memory. Ids start at `nextId`;
 * without `keepNodes` only the root is wanted and the write holds no nodes.
 */
export function buildStateTrie(
  leaves: ReadonlyMap<string, JsonValue>,
  nextId: number,
  keepNodes = true,
): { rootHex: string; write: TrieWrite } {
  const entries = new PackedEntries();
  for (const [path, value] of leaves) entries.add(keccakText(path), canonicalJson(value));
  const built = buildTrie(entries, keccak256, nextId, keepNodes);
  return { rootHex: bytesToHex(built.rootHash), write: trieWrite(built) };
}

const trieWrite = ({
  records,
  root,
  retired = [],
}: {
  records: Iterable<readonly [number, Uint8Array]>;
  root: RootRef | undefined;
  retired?: readonly number[];
}): TrieWrite =>
  root === undefined
    ? { nodes: records, retired }
    : { nodes: records, root: { hash: bytesToHex(root.hash), id: root.id }, retired };

/** keccak256(rlp("")): the root of the empty trie. */
export const EMPTY_ROOT = "0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421";
