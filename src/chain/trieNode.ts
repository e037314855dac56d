/**
 * The in-memory nodes of the state's Merkle-Patricia trie (Ethereum's, Yellow Paper appendix D).
 *
 * A node in the store is found by its id, not its hash (docs/decisions/008-state-commitment.md):
 * a block's new nodes get consecutive ids, so LMDB appends them instead of rewriting pages all over
 * a hash-ordered table. A reference to a stored child therefore carries both: the hash that goes
 * into the parent's encoding and the id that finds the child on disk.
 */

export const LEAF = 0;
export const EXTENSION = 1;
export const BRANCH = 2;

/** Bytes of a stored reference: keccak256 of the node (32) then its id (6, big-endian). */
export const STORED_REF_BYTES = 38;
/** Ids are 48-bit: 2.8 × 10^14 nodes, far beyond any disk. */
const MAX_ID = 2 ** 48;

/** A committed node known only by its hash and id (see storedRef). */
export type StoredRef = Uint8Array;

/** A child: a node in memory, a committed node on disk only, or empty. */
export type Child = TrieNode | StoredRef | null;

interface NodeBase {
  /**
   * The trie generation that made the node. Nodes of the current generation are private to the
   * block being built and may change in place; older ones are shared with the committed root and
   * are copied before any change. Nodes read from the store are generation 0.
   */
  gen: number;
  /** keccak256 of the encoding (32 bytes), or the encoding itself when shorter; unset while dirty. */
  ref: Uint8Array | undefined;
  /** The encoding, kept for a hashed node of the current generation until it is stored. */
  encoded: Uint8Array | undefined;
  /** The node's id in the store; -1 until it has one (new, or embedded in its parent). */
  id: number;
}

export interface LeafNode extends NodeBase {
  type: typeof LEAF;
  /** The rest of the key, one nibble per byte. */
  path: Uint8Array;
  value: Uint8Array;
}

export interface ExtensionNode extends NodeBase {
  type: typeof EXTENSION;
  path: Uint8Array;
  child: Child;
}

/**
 * Children on disk are kept in one `refs` array (38 bytes each) rather than as 16 objects, so a
 * decoded branch costs three allocations: that is what lets the top five levels of a
 * million-key trie stay in memory.
 */
export interface BranchNode extends NodeBase {
  type: typeof BRANCH;
  /** Children in memory, by nibble (always 16 slots). */
  nodes: (TrieNode | undefined)[];
  /** Bit i set: child i is on disk only, its stored reference at refs[38·i, 38·i + 38). */
  stored: number;
  /** 16 stored references once any child is on disk only; NO_REFS before. */
  refs: Uint8Array;
}

export type TrieNode = LeafNode | ExtensionNode | BranchNode;

const NO_REFS: Uint8Array = new Uint8Array(0);

/**
 * Cuts byte arrays from slabs of `slabBytes`: one ArrayBuffer per slab rather than one per array.
 * Each ArrayBuffer lives outside V8's heap, costs about a microsecond to make, and its external
 * memory brings the next GC sooner. A view keeps its whole slab alive, so only arrays that die with
 * their block may be cut this way. Arrays over a sixteenth of a slab get buffers of their own.
 */
export function slabAllocator(slabBytes: number): (size: number) => Uint8Array {
  let slab = new Uint8Array(slabBytes);
  let used = 0;
  return (size) => {
    if (size > slabBytes / 16) return new Uint8Array(size);
    if (used + size > slabBytes) {
      slab = new Uint8Array(slabBytes);
      used = 0;
    }
    const out = slab.subarray(used, used + size);
    used += size;
    return out;
  };
}

const REFS_BYTES = 16 * STORED_REF_BYTES;

/**
 * A branch's `refs`, 64 to a slab (38 KiB). A block below the resident depth decodes or splits a
 * branch for almost every write: tens of thousands a block at a million accounts, whose 608
 * bytes each were an ArrayBuffer of their own. A branch that stays decoded between blocks takes
 * refs of its own (ownRefs, from MerkleTrie's release), so no slab outlives its block.
 */
const newRefs = slabAllocator(64 * REFS_BYTES);

/** Gives `node` refs of its own if they are a view into a slab (it is kept beyond its block). */
export function ownRefs(node: BranchNode): void {
  if (node.refs.byteLength !== node.refs.buffer.byteLength) node.refs = node.refs.slice();
}

export const isNode = (child: Child): child is TrieNode => child !== null && !(child instanceof Uint8Array);

// Every node is made by these factories, so that all nodes of a type share one hidden class.
export const leaf = (gen: number, path: Uint8Array, value: Uint8Array): LeafNode => ({
  type: LEAF,
  gen,
  ref: undefined,
  encoded: undefined,
  id: -1,
  path,
  value,
});

export const extension = (gen: number, path: Uint8Array, child: Child): ExtensionNode => ({
  type: EXTENSION,
  gen,
  ref: undefined,
  encoded: undefined,
  id: -1,
  path,
  child,
});

export const branch = (
  gen: number,
  nodes: (TrieNode | undefined)[] = new Array<TrieNode | undefined>(16).fill(undefined),
  stored = 0,
  refs: Uint8Array = NO_REFS,
): BranchNode => ({ type: BRANCH, gen, ref: undefined, encoded: undefined, id: -1, nodes, stored, refs });

/** The reference to a committed node: its hash and id. */
export function storedRef(hash: Uint8Array, id: number): StoredRef {
  checkId(id);
  const out = new Uint8Array(STORED_REF_BYTES);
  out.set(hash);
  writeId(out, 32, id);
  return out;
}

function checkId(id: number): void {
  if (!Number.isSafeInteger(id) || id < 0 || id >= MAX_ID)
    throw new Error(`trie: node id ${id} out of range`);
}

export const hashOfRef = (ref: StoredRef): Uint8Array => ref.subarray(0, 32);
export const idOfRef = (ref: StoredRef): number => readId(ref, 32);

export function writeId(out: Uint8Array, at: number, id: number): void {
  const high = Math.floor(id / 2 ** 32);
  out[at] = high >>> 8;
  out[at + 1] = high & 255;
  const low = id >>> 0;
  out[at + 2] = low >>> 24;
  out[at + 3] = (low >>> 16) & 255;
  out[at + 4] = (low >>> 8) & 255;
  out[at + 5] = low & 255;
}

export function readId(bytes: Uint8Array, at: number): number {
  const high = ((bytes[at] as number) << 8) | (bytes[at + 1] as number);
  const low =
    (((bytes[at + 2] as number) << 24) |
      ((bytes[at + 3] as number) << 16) |
      ((bytes[at + 4] as number) << 8) |
      (bytes[at + 5] as number)) >>>
    0;
  return high * 2 ** 32 + low;
}

/** Child `i` of a branch. A stored one comes back as a view into the branch's `refs`. */
export function childAt(node: BranchNode, i: number): Child {
  const inMemory = node.nodes[i];
  if (inMemory !== undefined) return inMemory;
  return (node.stored >> i) & 1 ? node.refs.subarray(i * STORED_REF_BYTES, (i + 1) * STORED_REF_BYTES) : null;
}

/**
 * Sets child `i`. A stored reference is copied into `refs`, which may be shared with the branch
 * this one was copied from (MerkleTrie.own): only a new branch (split, decode) or a committed one
 * (release) is ever given a stored child, never a copy within a block.
 */
export function setChild(node: BranchNode, i: number, child: Child): void {
  if (child === null || isNode(child)) {
    node.nodes[i] = child ?? undefined;
    node.stored &= ~(1 << i);
    return;
  }
  setStoredChild(node, i, child, 0, idOfRef(child));
}

/**
 * Sets child `i` to the stored node whose hash is `hash[hashAt, hashAt + 32)`, written straight
 * into `refs` (decoding and releasing a branch set up to 16 at once: no reference made per child).
 */
export function setStoredChild(
  node: BranchNode,
  i: number,
  hash: Uint8Array,
  hashAt: number,
  id: number,
): void {
  checkId(id);
  if (node.refs === NO_REFS) node.refs = newRefs(REFS_BYTES);
  const at = i * STORED_REF_BYTES;
  node.refs.set(hashAt === 0 && hash.length === 32 ? hash : hash.subarray(hashAt, hashAt + 32), at);
  writeId(node.refs, at + 32, id);
  node.nodes[i] = undefined;
  node.stored |= 1 << i;
}

/** How many children a branch has. */
export function childCount(node: BranchNode): number {
  let count = 0;
  for (let i = 0; i < 16; i++) if (node.nodes[i] !== undefined || (node.stored >> i) & 1) count++;
  return count;
}

/** The 64 nibbles of a 32-byte key. */
export function nibblesOf(key: Uint8Array): Uint8Array {
  const out = new Uint8Array(key.length * 2);
  for (let i = 0; i < key.length; i++) {
    const byte = key[i] as number;
    out[2 * i] = byte >> 4;
    out[2 * i + 1] = byte & 15;
  }
  return out;
}

/** `a` followed by `b` (nibble paths joined when a branch collapses). */
export function concatNibbles(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
