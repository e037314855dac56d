/**
 * Encoding of trie nodes: the RLP that is hashed (byte for byte what @ethereumjs/mpt hashes, so
 * roots are Ethereum's), and the record the store keeps for a node: that RLP followed by the
 * 6-byte ids of its hashed children, in slot order.
 *
 * Keys are always 32 bytes (keccak256 of the state path), so no key is a prefix of another and a
 * branch never holds a value of its own; decoding refuses one.
 */
import {
  BRANCH,
  type BranchNode,
  branch,
  type Child,
  EXTENSION,
  type ExtensionNode,
  extension,
  idOfRef,
  isNode,
  type LeafNode,
  leaf,
  readId,
  STORED_REF_BYTES,
  setChild,
  setStoredChild,
  slabAllocator,
  storedRef,
  type TrieNode,
  writeId,
} from "./trieNode.ts";

const ID_BYTES = 6;

/** Hex-prefix encoding of a nibble path: flag 2 marks a leaf, +1 an odd length. */
function hexPrefix(path: Uint8Array, isLeaf: boolean): Uint8Array {
  const odd = path.length & 1;
  const out = new Uint8Array((path.length >> 1) + 1);
  out[0] = (((isLeaf ? 2 : 0) + odd) << 4) | (odd === 1 ? (path[0] as number) : 0);
  for (let i = odd, o = 1; i < path.length; i += 2, o++) {
    out[o] = ((path[i] as number) << 4) | (path[i + 1] as number);
  }
  return out;
}

function fromHexPrefix(bytes: Uint8Array, start: number, end: number): { path: Uint8Array; isLeaf: boolean } {
  if (end <= start) throw new Error("trie node: empty key");
  const flag = (bytes[start] as number) >> 4;
  if (flag > 3) throw new Error(`trie node: bad hex-prefix flag ${flag}`);
  const odd = flag & 1;
  const path = new Uint8Array((end - start - 1) * 2 + odd);
  let o = 0;
  if (odd === 1) path[o++] = (bytes[start] as number) & 15;
  for (let i = start + 1; i < end; i++) {
    path[o++] = (bytes[i] as number) >> 4;
    path[o++] = (bytes[i] as number) & 15;
  }
  return { path, isLeaf: flag >= 2 };
}

// ---- RLP: byte strings and lists of already-encoded items, as much as trie nodes need. ----

const lengthBytes = (length: number): number =>
  length < 0x100 ? 1 : length < 0x10000 ? 2 : length < 0x1000000 ? 3 : 4;

/** Size of the RLP header of a string or list whose payload is `length` bytes. */
const headerSize = (length: number): number => (length < 56 ? 1 : 1 + lengthBytes(length));

function writeHeader(out: Uint8Array, at: number, length: number, short: number): number {
  if (length < 56) {
    out[at] = short + length;
    return at + 1;
  }
  const n = lengthBytes(length);
  out[at] = short + 55 + n;
  for (let i = n; i >= 1; i--) out[at + i] = (length >>> ((n - i) * 8)) & 0xff;
  return at + n + 1;
}

/** Encoded size of a byte string (one byte below 0x80 is its own encoding). */
const stringSize = (bytes: Uint8Array): number =>
  bytes.length === 1 && (bytes[0] as number) < 0x80 ? 1 : headerSize(bytes.length) + bytes.length;

function writeString(out: Uint8Array, at: number, bytes: Uint8Array): number {
  if (bytes.length === 1 && (bytes[0] as number) < 0x80) {
    out[at] = bytes[0] as number;
    return at + 1;
  }
  const start = writeHeader(out, at, bytes.length, 0x80);
  out.set(bytes, start);
  return start + bytes.length;
}

/** How a parent embeds a child's `ref`: a hash as a 32-byte string, a short node as itself. */
const childSize = (ref: Uint8Array): number => (ref.length === 32 ? 33 : ref.length);

function writeChild(out: Uint8Array, at: number, ref: Uint8Array): number {
  if (ref.length === 32) {
    out[at] = 0xa0;
    out.set(ref, at + 1);
    return at + 33;
  }
  out.set(ref, at);
  return at + ref.length;
}

/**
 * An RLP list of `payload` bytes, with room after it for `ids` child ids: the encoding and the
 * store's record share one buffer (see recordOf).
 */
function listOf(payload: number, ids = 0): { out: Uint8Array; at: number } {
  const out = allocate(headerSize(payload) + payload + ids * ID_BYTES);
  return { out, at: writeHeader(out, 0, payload, 0xc0) };
}

// ---- Where encodings live: views into shared slabs, not an ArrayBuffer each. ----

/**
 * A block makes ~70,000 encodings of 30–600 bytes. As separate Uint8Arrays each one was a
 * zero-filled malloc with its own ArrayBuffer (allocation 7 % and much of GC's 14 % of a block's
 * profile), and a million-account genesis's encodings left the process ~400 MiB larger for good
 * (what it allocates at its peak stays resident). Views into 256 KiB slabs cost a small heap object
 * each, and a slab is freed whole once no view of it is left: so a view that outlives its block
 * (an embedded node's ref) must be copied, not kept (`detached`).
 */
const allocate = slabAllocator(256 * 1024);

/** A copy of a view that is kept beyond its block (so it does not hold a whole slab). */
export const detached = (view: Uint8Array): Uint8Array => view.slice();

function checkEnd(out: Uint8Array, end: number, ids = 0): Uint8Array {
  if (end + ids * ID_BYTES !== out.length) throw new Error("trie node: encoded length mismatch");
  return out;
}

/** Length of the RLP list at the start of `bytes` (an encoding, without a record's ids). */
export function rlpLength(bytes: Uint8Array): number {
  return readItem(bytes, 0, bytes.length);
}

/** RLP of a leaf: [hexPrefix(path, leaf), value]. */
export function encodeLeaf(node: LeafNode): Uint8Array {
  const key = hexPrefix(node.path, true);
  const { out, at } = listOf(stringSize(key) + stringSize(node.value));
  return checkEnd(out, writeString(out, writeString(out, at, key), node.value));
}

/** RLP of an extension, given its child's `ref`, then room for the child's id if it is hashed. */
export function encodeExtension(node: ExtensionNode, childRef: Uint8Array): Uint8Array {
  const key = hexPrefix(node.path, false);
  const ids = childRef.length === 32 ? 1 : 0;
  const { out, at } = listOf(stringSize(key) + childSize(childRef), ids);
  return checkEnd(out, writeChild(out, writeString(out, at, key), childRef), ids);
}

/**
 * RLP of a branch whose in-memory children all have their `ref` (the value slot is always empty),
 * then room for the ids of its hashed children.
 */
export function encodeBranch(node: BranchNode): Uint8Array {
  let payload = 1;
  let ids = 0;
  for (let i = 0; i < 16; i++) {
    const child = node.nodes[i];
    const size = child !== undefined ? childSize(child.ref as Uint8Array) : (node.stored >> i) & 1 ? 33 : 1;
    payload += size;
    if (size === 33) ids++;
  }
  const { out, at } = listOf(payload, ids);
  let o = at;
  const refs = node.refs;
  for (let i = 0; i < 16; i++) {
    const child = node.nodes[i];
    if (child !== undefined) {
      o = writeChild(out, o, child.ref as Uint8Array);
    } else if ((node.stored >> i) & 1) {
      out[o++] = 0xa0;
      for (let b = i * STORED_REF_BYTES, end = b + 32; b < end; b++) out[o++] = refs[b] as number;
    } else {
      out[o++] = 0x80;
    }
  }
  out[o++] = 0x80;
  return checkEnd(out, o, ids);
}

/** The id of a child its parent refers to by hash, or -1 for an empty or embedded one. */
function hashedChildId(child: Child): number {
  if (child === null) return -1;
  if (!isNode(child)) return idOfRef(child);
  if (child.ref?.length !== 32) return -1;
  if (child.id < 0) throw new Error("trie: a hashed child has no id yet");
  return child.id;
}

/**
 * The store's record of a node: its RLP followed by the ids of its hashed children, in the order
 * their hashes appear. `encoded` is what encodeBranch/encodeExtension/encodeLeaf made, whose room
 * after the RLP is filled here, in place. Every hashed child must have its id.
 */
export function recordOf(node: TrieNode, encoded: Uint8Array): Uint8Array {
  // No closure here: this runs for every stored node, and under tsx each closure made is also named.
  let at = rlpLength(encoded);
  if (node.type === EXTENSION) at = putId(encoded, at, hashedChildId(node.child));
  else if (node.type === BRANCH) {
    for (let i = 0; i < 16; i++) {
      const inMemory = node.nodes[i];
      if (inMemory !== undefined) at = putId(encoded, at, hashedChildId(inMemory));
      else if ((node.stored >> i) & 1) at = putId(encoded, at, readId(node.refs, i * STORED_REF_BYTES + 32));
    }
  }
  if (at !== encoded.length) throw new Error("trie node: child ids do not fill the record");
  return encoded;
}

/** Writes child id `id` (none when negative) at `at` of a record; returns where the next one goes. */
function putId(record: Uint8Array, at: number, id: number): number {
  if (id < 0) return at;
  if (at + ID_BYTES > record.length) throw new Error("trie node: no room for a child id");
  writeId(record, at, id);
  return at + ID_BYTES;
}

// ---- Decoding. One RLP item at a time, into these (no object per item). ----

let itemStart = 0;
let itemEnd = 0;
let itemIsList = false;

/** Reads the item at `at` into itemStart/itemEnd (its payload) and itemIsList; returns its end. */
function readItem(bytes: Uint8Array, at: number, limit: number): number {
  const first = bytes[at];
  if (first === undefined || at >= limit) throw new Error("trie node: truncated RLP");
  let length: number;
  if (first < 0x80) {
    itemStart = at;
    length = 1;
    itemIsList = false;
  } else if (first < 0xb8) {
    itemStart = at + 1;
    length = first - 0x80;
    itemIsList = false;
  } else if (first < 0xc0) {
    itemStart = at + 1 + first - 0xb7;
    length = readLength(bytes, at + 1, first - 0xb7);
    itemIsList = false;
  } else if (first < 0xf8) {
    itemStart = at + 1;
    length = first - 0xc0;
    itemIsList = true;
  } else {
    itemStart = at + 1 + first - 0xf7;
    length = readLength(bytes, at + 1, first - 0xf7);
    itemIsList = true;
  }
  itemEnd = itemStart + length;
  if (itemEnd > limit) throw new Error("trie node: truncated RLP");
  return itemEnd;
}

function readLength(bytes: Uint8Array, at: number, n: number): number {
  let length = 0;
  for (let i = 0; i < n; i++) length = length * 256 + (bytes[at + i] as number);
  return length;
}

/** Reads ids from the record's tail, in order. */
interface IdCursor {
  at: number;
  readonly end: number;
}

function nextId(bytes: Uint8Array, ids: IdCursor | undefined): number {
  if (ids === undefined || ids.at + ID_BYTES > ids.end) throw new Error("trie node: record lacks a child id");
  const id = readId(bytes, ids.at);
  ids.at += ID_BYTES;
  return id;
}

/**
 * Decodes the node whose RLP starts at `at` (a stored record, or a node embedded in one).
 * Embedded nodes have no hashed children, so they read no ids.
 */
function decodeAt(bytes: Uint8Array, at: number, ids: IdCursor | undefined): TrieNode {
  readItem(bytes, at, bytes.length);
  if (!itemIsList) throw new Error("trie node: not an RLP list");
  const payloadEnd = itemEnd;
  let o = itemStart;
  // Count the items first: 17 is a branch, 2 a leaf or extension.
  let count = 0;
  for (let p = o; p < payloadEnd; count++) p = readItem(bytes, p, payloadEnd);
  if (count === 17) {
    const node = branch(0);
    for (let i = 0; i < 16; i++) {
      const itemAt = o;
      o = readItem(bytes, o, payloadEnd);
      if (itemIsList) {
        const inline = decodeAt(bytes, itemAt, undefined);
        inline.ref = bytes.subarray(itemAt, o);
        setChild(node, i, inline);
      } else if (itemEnd - itemStart === 32) {
        setStoredChild(node, i, bytes, itemStart, nextId(bytes, ids));
      } else if (itemEnd !== itemStart) {
        throw new Error(`trie node: a child reference of ${itemEnd - itemStart} bytes`);
      }
    }
    readItem(bytes, o, payloadEnd);
    if (itemEnd !== itemStart || itemIsList) throw new Error("trie node: a branch with a value");
    return node;
  }
  if (count !== 2) throw new Error(`trie node: a list of ${count} items`);
  o = readItem(bytes, o, payloadEnd);
  if (itemIsList) throw new Error("trie node: a list as key");
  const { path, isLeaf } = fromHexPrefix(bytes, itemStart, itemEnd);
  const secondAt = o;
  const secondEnd = readItem(bytes, o, payloadEnd);
  if (isLeaf) {
    if (itemIsList) throw new Error("trie node: a list as leaf value");
    return leaf(0, path, bytes.subarray(itemStart, itemEnd));
  }
  if (itemIsList) {
    const inline = decodeAt(bytes, secondAt, undefined);
    inline.ref = bytes.subarray(secondAt, secondEnd);
    return extension(0, path, inline);
  }
  if (itemEnd - itemStart !== 32) throw new Error("trie node: an extension without a hashed child");
  return extension(0, path, storedRef(bytes.subarray(itemStart, itemEnd), nextId(bytes, ids)));
}

/** Decodes a stored record into a clean node of generation 0 with its hash and id. */
export function decodeRecord(record: Uint8Array, hash: Uint8Array, id: number): TrieNode {
  const rlpEnd = readItem(record, 0, record.length);
  const ids: IdCursor = { at: rlpEnd, end: record.length };
  const node = decodeAt(record, 0, ids);
  if (ids.at !== ids.end) throw new Error("trie node: record has ids left over");
  // Only a root is stored with an encoding under 32 bytes; as a ref it stays that encoding (which
  // MerkleTrie.root() hashes), so that nothing could ever embed it by hash.
  node.ref = rlpEnd < 32 ? record.subarray(0, rlpEnd) : hash;
  node.id = id;
  return node;
}
