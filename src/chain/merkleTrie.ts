import {
  decodeRecord,
  detached,
  encodeBranch,
  encodeExtension,
  encodeLeaf,
  recordOf,
  rlpLength,
} from "./trieCodec.ts";
import {
  BRANCH,
  type BranchNode,
  type Child,
  childAt,
  childCount,
  concatNibbles,
  EXTENSION,
  extension,
  hashOfRef,
  idOfRef,
  isNode,
  LEAF,
  leaf,
  nibblesOf,
  ownRefs,
  branch as newBranch,
  readId,
  STORED_REF_BYTES,
  type StoredRef,
  setChild,
  setStoredChild,
  storedRef,
  type TrieNode,
} from "./trieNode.ts";
import { runSteps, runStepsPaused } from "./timeSlices.ts";

/** Committed trie nodes by id; the store implements it. */
export interface NodeSource {
  /** The record of node `id` (see trieCodec.recordOf), or undefined if it is not stored. */
  nodeById(id: number): Uint8Array | undefined;
}

/** A committed root: its hash (the state root) and the id of its node. */
export interface RootRef {
  hash: Uint8Array;
  id: number;
}

export interface MerkleTrieOptions {
  /** Hashes node encodings (keccak256). */
  hash: (data: Uint8Array) => Uint8Array;
  /**
   * Nodes that start at a nibble depth below this stay decoded in memory between blocks; deeper
   * ones are dropped after each commit and read again from the store when a block touches them.
   * 5 keeps the 1 + 16 + 256 + 4,096 + 65,536 branches above a million keys (about 60 MiB):
   * almost every write passes through them, and below them one key rarely meets another's path.
   */
  residentDepth?: number;
}

/** What a block leaves to store: the records of its new nodes by id, and its root. */
export interface NodeWrites {
  records: Map<number, Uint8Array>;
  /** Undefined for the empty trie (nothing stored). */
  root: RootRef | undefined;
  /**
   * Ids of stored nodes the committed root reaches and this root no longer does: what pruning
   * may delete once no kept state needs the committed root (docs/decisions/011-pruning.md).
   */
  retired: number[];
}

/** What insert and remove return when the subtree did not change. */
const UNCHANGED = Symbol("unchanged");
type Unchanged = typeof UNCHANGED;

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
};

/**
 * An Ethereum Merkle-Patricia trie over 32-byte keys that hashes once per block, not once per key.
 *
 * Writes change nodes in memory only, copying the committed ones they touch (copy-on-write), so
 * the committed root stays intact until `markCommitted` and `discard` is just a pointer reset.
 * `root()` encodes and hashes each changed node once, bottom up, and `newNodes()` gives ids to
 * exactly the new nodes reachable from the root, children before parents: nodes that a later
 * write in the same block replaced are never hashed, kept or written.
 *
 * Roots are those of @ethereumjs/mpt for the same key/value set (tested against it).
 */
export class MerkleTrie {
  private readonly source: NodeSource;
  private readonly hash: (data: Uint8Array) => Uint8Array;
  private readonly residentDepth: number;
  private readonly emptyRoot: Uint8Array;
  private root_: Child;
  private committed: Child;
  /** Generation of nodes made since the last commit (see TrieNode.gen); stored nodes are 0. */
  private gen = 1;
  /** The id the next stored node gets, as of the committed root. */
  private nextId: number;
  /** What the last `newNodes()` gave; cleared by any change. */
  private writes: NodeWrites | undefined;
  /**
   * Stored nodes this generation replaced or dropped. Copy-on-write means a stored node leaves
   * the trie only where a write copies it (own) or drops it (a removed leaf, a split or merged
   * path): each of those places calls retire, and no other can unlink a stored node.
   */
  private retired: number[] = [];

  /**
   * Opens the trie at a committed root (none: empty). `nextId` is one past the largest id in
   * the store: this trie's nodes are numbered from there.
   */
  constructor(source: NodeSource, options: MerkleTrieOptions, root: RootRef | undefined, nextId: number) {
    this.source = source;
    this.hash = options.hash;
    this.residentDepth = options.residentDepth ?? 5;
    this.emptyRoot = this.hash(Uint8Array.of(0x80)); // keccak256(rlp(""))
    this.root_ = root === undefined ? null : storedRef(root.hash, root.id);
    this.committed = this.root_;
    this.nextId = nextId;
  }

  /** Sets `key` (32 bytes) to `value` (non-empty). */
  put(key: Uint8Array, value: Uint8Array): void {
    if (value.length === 0) throw new Error("trie: an empty value is a deletion");
    const root = this.insert(this.root_, nibblesOf(key), 0, value);
    if (root !== UNCHANGED) this.changed(root);
  }

  /** Removes `key`; removing an absent key changes nothing. */
  del(key: Uint8Array): void {
    const root = this.remove(this.root_, nibblesOf(key), 0);
    if (root !== UNCHANGED) this.changed(root);
  }

  /** The root hash: every node changed since the last call is encoded and hashed once, here. */
  root(): Uint8Array {
    const top = this.root_;
    if (top === null) return this.emptyRoot;
    if (!isNode(top)) return hashOfRef(top);
    const ref = this.refOf(top);
    // The root is always stored by hash, even when its encoding is short enough to embed.
    return ref.length === 32 ? ref : this.hash(ref);
  }

  /**
   * Encodes and hashes the changed subtrees below the root one at a time, awaiting `pause`
   * between them, so that `root()` then only hashes the root itself: a block's hashing in
   * pieces of a sixteenth (TimeSlices). Nothing else may change the trie meanwhile.
   */
  async hashBelowRoot(pause: () => Promise<void>): Promise<void> {
    const top = this.root_;
    if (!isNode(top) || top.type !== BRANCH) return;
    for (const child of top.nodes) {
      if (child === undefined || !isNode(child) || child.ref !== undefined) continue;
      this.refOf(child);
      await pause();
    }
  }

  /**
   * What the store must write for the current root: the new nodes reachable from it, numbered
   * from the committed `nextId`, children first (a record holds its children's ids).
   */
  newNodes(): NodeWrites {
    this.writes ??= runSteps(this.numbering());
    return this.writes;
  }

  /**
   * `newNodes()` in pieces of a sixteenth, awaiting `pause` between the root's subtrees (a block of
   * 5,000 transfers numbers ~20,000 nodes, ~20 ms in one piece). Nothing else may change the trie
   * meanwhile.
   */
  async newNodesInSlices(pause: () => Promise<void>): Promise<NodeWrites> {
    this.writes ??= await runStepsPaused(this.numbering(), pause);
    return this.writes;
  }

  /** The writes of `newNodes()` are stored: the current root becomes the committed one. */
  markCommitted(): void {
    runSteps(this.committing());
  }

  /** `markCommitted()`, its release of decoded nodes in pieces (see newNodesInSlices). */
  markCommittedInSlices(pause: () => Promise<void>): Promise<void> {
    return runStepsPaused(this.committing(), pause);
  }

  /** newNodes' work, yielding after each of the root's subtrees. */
  private *numbering(): Generator<void, NodeWrites, void> {
    const hash = this.root();
    const top = this.root_;
    const records = new Map<number, Uint8Array>();
    let root: RootRef | undefined;
    if (top !== null && !isNode(top)) root = { hash, id: idOfRef(top) };
    if (isNode(top)) {
      let next = this.nextId;
      const numberSelf = (node: TrieNode, isRoot: boolean): void => {
        const encoded = node.ref?.length === 32 ? node.encoded : isRoot ? node.ref : undefined;
        if (encoded === undefined) return; // embedded in its parent
        node.id = next++;
        records.set(node.id, recordOf(node, encoded));
      };
      const number = (node: TrieNode, isRoot: boolean): void => {
        if (node.gen !== this.gen) return; // a stored node: everything below it is stored too
        if (node.type === BRANCH) {
          for (const child of node.nodes) if (child !== undefined) number(child, false);
        } else if (node.type === EXTENSION && isNode(node.child)) number(node.child, false);
        numberSelf(node, isRoot);
      };
      if (top.type === BRANCH && top.gen === this.gen) {
        // The order `number(top, true)` would take: each subtree, then the root.
        for (const child of top.nodes) {
          if (child === undefined) continue;
          number(child, false);
          yield;
        }
        numberSelf(top, true);
      } else number(top, true);
      root = { hash, id: top.id };
    }
    return { records, root, retired: this.retired };
  }

  /** markCommitted's work, yielding after the release of each of the root's subtrees. */
  private *committing(): Generator<void, void, void> {
    const writes = this.newNodes();
    const top = this.root_;
    if (isNode(top) && top.type === BRANCH && top.gen === this.gen) {
      // What release(top, 0) does, a subtree at a time.
      top.encoded = undefined;
      for (let i = 0; i < 16; i++) if (this.releaseChild(top, i, 1)) yield;
      ownRefs(top);
    } else if (isNode(top)) this.release(top, 0);
    this.nextId += writes.records.size;
    this.committed = top;
    this.gen += 1;
    this.writes = undefined;
    this.retired = [];
  }

  /** Back to the committed root; changes since the last commit are dropped. */
  discard(): void {
    this.root_ = this.committed;
    this.gen += 1;
    this.writes = undefined;
    this.retired = [];
  }

  /** `node` leaves the trie: if it is a stored one, the block's write lists it as retired. */
  private retire(node: TrieNode): void {
    if (node.gen !== this.gen && node.id >= 0) this.retired.push(node.id);
  }

  private changed(root: Child): void {
    this.root_ = root;
    this.writes = undefined;
  }

  /** A node this generation may change: the node itself if it is private, else a copy. */
  private own<T extends TrieNode>(node: T): T {
    if (node.gen === this.gen) {
      node.ref = undefined;
      node.encoded = undefined;
      node.id = -1;
      return node;
    }
    this.retire(node);
    let copy: TrieNode;
    if (node.type === LEAF) copy = leaf(this.gen, node.path, node.value);
    else if (node.type === EXTENSION) copy = extension(this.gen, node.path, node.child);
    // The copy shares `refs` with the original: see setChild for why that is safe.
    else copy = newBranch(this.gen, node.nodes.slice(), node.stored, node.refs);
    return copy as T;
  }

  private resolve(child: Child): TrieNode | null {
    if (child === null || isNode(child)) return child;
    return this.load(idOfRef(child), hashOfRef(child).slice());
  }

  /**
   * Branch child `i`, a stored one read from the store: resolve(childAt(node, i)) without the two
   * views of `refs` it would make (a block below the resident depth does this for every write).
   */
  private childNode(node: BranchNode, i: number): TrieNode | null {
    const inMemory = node.nodes[i];
    if (inMemory !== undefined) return inMemory;
    if (((node.stored >> i) & 1) === 0) return null;
    const at = i * STORED_REF_BYTES;
    return this.load(readId(node.refs, at + 32), node.refs.slice(at, at + 32));
  }

  private load(id: number, hash: Uint8Array): TrieNode {
    const record = this.source.nodeById(id);
    if (record === undefined) throw new Error(`trie node ${id} is missing from the store`);
    return decodeRecord(record, hash, id);
  }

  /**
   * The subtree at `child` with `key` set, or UNCHANGED when the value was already there. (Identity
   * cannot tell: a private node changes in place and comes back as the same object.)
   */
  private insert(child: Child, key: Uint8Array, depth: number, value: Uint8Array): Child | Unchanged {
    const node = this.resolve(child);
    if (node === null) return leaf(this.gen, key.subarray(depth), value);
    switch (node.type) {
      case LEAF: {
        const common = commonPrefix(node.path, key, depth);
        if (common === node.path.length) {
          if (sameBytes(node.value, value)) return UNCHANGED;
          const changed = this.own(node);
          changed.value = value;
          return changed;
        }
        this.retire(node);
        const moved = leaf(this.gen, node.path.subarray(common + 1), node.value);
        return this.split(node.path, common, moved, key, depth, value);
      }
      case EXTENSION: {
        const common = commonPrefix(node.path, key, depth);
        if (common === node.path.length) {
          const below = this.insert(node.child, key, depth + common, value);
          if (below === UNCHANGED) return UNCHANGED;
          const changed = this.own(node);
          changed.child = below;
          return changed;
        }
        this.retire(node);
        const rest = node.path.subarray(common + 1);
        const moved = rest.length === 0 ? node.child : extension(this.gen, rest, node.child);
        return this.split(node.path, common, moved, key, depth, value);
      }
      case BRANCH: {
        const slot = key[depth] as number;
        const below = this.insert(this.childNode(node, slot), key, depth + 1, value);
        if (below === UNCHANGED) return UNCHANGED;
        const changed = this.own(node);
        setChild(changed, slot, below);
        return changed;
      }
    }
  }

  /**
   * A new branch where `path` (of a leaf or extension at `depth`) and `key` part after `common`
   * nibbles: `existing` (what followed path[common]) and a new leaf for `key` below it, under an
   * extension for the shared nibbles if there are any.
   */
  private split(
    path: Uint8Array,
    common: number,
    existing: Child,
    key: Uint8Array,
    depth: number,
    value: Uint8Array,
  ): TrieNode {
    const fork = newBranch(this.gen);
    setChild(fork, path[common] as number, existing);
    const at = depth + common;
    setChild(fork, key[at] as number, leaf(this.gen, key.subarray(at + 1), value));
    return common === 0 ? fork : extension(this.gen, path.subarray(0, common), fork);
  }

  /** The subtree at `child` without `key`, or UNCHANGED when `key` is not in it. */
  private remove(child: Child, key: Uint8Array, depth: number): Child | Unchanged {
    const node = this.resolve(child);
    if (node === null) return UNCHANGED;
    switch (node.type) {
      case LEAF:
        if (commonPrefix(node.path, key, depth) !== node.path.length) return UNCHANGED;
        this.retire(node);
        return null;
      case EXTENSION: {
        if (commonPrefix(node.path, key, depth) !== node.path.length) return UNCHANGED;
        const below = this.remove(node.child, key, depth + node.path.length);
        if (below === UNCHANGED) return UNCHANGED;
        this.retire(node);
        // A branch below an extension keeps at least one child, so `below` is never empty; it
        // may have collapsed into a leaf or extension, which then absorbs this path.
        return this.prefixed(node.path, this.resolve(below) as TrieNode);
      }
      case BRANCH: {
        const slot = key[depth] as number;
        const below = this.remove(this.childNode(node, slot), key, depth + 1);
        if (below === UNCHANGED) return UNCHANGED;
        const changed = this.own(node);
        setChild(changed, slot, below);
        if (childCount(changed) >= 2) return changed;
        // One child left: a branch may not have one, so it folds into that child.
        let only = 0;
        while (childAt(changed, only) === null) only++;
        const last = this.childNode(changed, only) as TrieNode;
        return this.prefixed(Uint8Array.of(only), last);
      }
    }
  }

  /** `node` reached through `path` first: leaf and extension paths absorb it. */
  private prefixed(path: Uint8Array, node: TrieNode): TrieNode {
    if (node.type === BRANCH) {
      // Kept as it is, and it may stay decoded: one just read from the store has its references
      // in a slab, and release does not visit a node of an older generation.
      ownRefs(node);
      return extension(this.gen, path, node);
    }
    const changed = this.own(node);
    changed.path = concatNibbles(path, node.path);
    return changed;
  }

  /** How `node` is referred to by its parent; encodes and hashes it if it changed. */
  private refOf(node: TrieNode): Uint8Array {
    if (node.ref !== undefined) return node.ref;
    let encoded: Uint8Array;
    if (node.type === LEAF) encoded = encodeLeaf(node);
    else if (node.type === EXTENSION) {
      const child = node.child as TrieNode | StoredRef;
      encoded = encodeExtension(node, isNode(child) ? this.refOf(child) : hashOfRef(child));
    } else {
      for (const child of node.nodes) if (child !== undefined) this.refOf(child);
      encoded = encodeBranch(node);
    }
    // `encoded` may end with room for the children's ids (trieCodec.recordOf): hash the RLP only.
    const rlp = encoded.subarray(0, rlpLength(encoded));
    if (rlp.length < 32) {
      node.ref = detached(rlp); // no hashed children fit in it, so there is no room to drop
    } else {
      node.ref = this.hash(rlp);
      node.encoded = encoded;
    }
    return node.ref;
  }

  /**
   * After a commit: keeps decoded only the nodes above `residentDepth`; deeper stored nodes go
   * back to being references, so memory stays bounded however much a block reads. Only this
   * block's nodes are visited: older resident nodes were released when they were made, and nodes
   * read but left unchanged were never attached to the trie.
   */
  private release(node: TrieNode, depth: number): void {
    if (node.gen !== this.gen) return;
    node.encoded = undefined;
    if (node.type === LEAF) return;
    if (node.type === EXTENSION) {
      node.child = this.released(node.child, depth + node.path.length);
      return;
    }
    for (let i = 0; i < 16; i++) this.releaseChild(node, i, depth + 1);
    ownRefs(node);
  }

  /** Releases branch `node`'s child `i` (at `depth`); false if it has none there. */
  private releaseChild(node: BranchNode, i: number, depth: number): boolean {
    const child = node.nodes[i];
    if (child === undefined) return false;
    if (this.dropsDecoded(child, depth)) setStoredChild(node, i, child.ref as Uint8Array, 0, child.id);
    else this.release(child, depth);
    return true;
  }

  private released(child: Child, depth: number): Child {
    if (!isNode(child)) return child;
    if (this.dropsDecoded(child, depth)) return storedRef(child.ref as Uint8Array, child.id);
    this.release(child, depth);
    return child;
  }

  /** Whether a released `node` at `depth` goes back to being a stored reference. */
  private dropsDecoded(node: TrieNode, depth: number): boolean {
    return depth >= this.residentDepth && node.ref?.length === 32;
  }
}

/** Length of the common prefix of `path` and `key` from `depth`. */
function commonPrefix(path: Uint8Array, key: Uint8Array, depth: number): number {
  let i = 0;
  while (i < path.length && path[i] === key[depth + i]) i++;
  return i;
}
