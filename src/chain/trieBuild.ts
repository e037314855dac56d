import type { RootRef } from "./merkleTrie.ts";
import { detached, encodeBranch, encodeExtension, encodeLeaf, recordOf, rlpLength } from "./trieCodec.ts";
import {
  branch,
  type Child,
  extension,
  leaf,
  nibblesOf,
  setChild,
  storedRef,
  type TrieNode,
} from "./trieNode.ts";

/**
 * Entries packed into a few large arrays: a million small Uint8Arrays would cost more memory
 * than the whole trie they make.
 */
export class PackedEntries {
  /** Key i at keys[32·i, 32·i + 32). */
  keys: Uint8Array = new Uint8Array(32 * 1024);
  /** Value i at values[ends[i - 1], ends[i]). */
  values: Buffer = Buffer.alloc(64 * 1024);
  ends = new Uint32Array(1024);
  count = 0;

  /** Adds a 32-byte key and a non-empty value (a string is stored as its UTF-8). */
  add(key: Uint8Array, value: Uint8Array | string): void {
    if (key.length !== 32 || value.length === 0) throw new Error("trie: keys are 32 bytes, values non-empty");
    const start = this.count === 0 ? 0 : (this.ends[this.count - 1] as number);
    const bytes = typeof value === "string" ? Buffer.byteLength(value, "utf8") : value.length;
    if (32 * (this.count + 1) > this.keys.length) this.keys = grow(this.keys, 32 * (this.count + 1));
    if (start + bytes > this.values.length) {
      const grown = grow(this.values, start + bytes);
      this.values = Buffer.from(grown.buffer, grown.byteOffset, grown.length);
    }
    if (this.count + 1 > this.ends.length) this.ends = growU32(this.ends);
    this.keys.set(key, 32 * this.count);
    if (typeof value === "string") this.values.write(value, start, "utf8");
    else this.values.set(value, start);
    this.ends[this.count] = start + bytes;
    this.count += 1;
  }

  valueAt(i: number): Uint8Array {
    return this.values.subarray(i === 0 ? 0 : this.ends[i - 1], this.ends[i]);
  }
}

/**
 * Records numbered consecutively from `firstId`, copied into 64 MiB chunks. A genesis of a million
 * accounts makes 1.3 million records; as separate arrays (or views) they took ~300 MiB of heap on
 * top of their bytes, and the process kept that memory after they were freed (V8 keeps freed heap
 * pages resident). Chunks this large are mapped and unmapped whole by malloc.
 */
export class PackedRecords implements Iterable<readonly [number, Uint8Array]> {
  static readonly CHUNK_BYTES = 64 * 1024 * 1024;
  readonly firstId: number;
  private readonly chunks: Uint8Array[] = [];
  private used = PackedRecords.CHUNK_BYTES;
  /** Record i is in chunks[chunkOf[i]] at [startOf[i], startOf[i] + lengthOf[i]). */
  private chunkOf = new Uint32Array(1024);
  private startOf = new Uint32Array(1024);
  private lengthOf = new Uint32Array(1024);
  count = 0;

  constructor(firstId: number) {
    this.firstId = firstId;
  }

  /** Adds the record of id firstId + count. */
  add(record: Uint8Array): void {
    if (record.length > PackedRecords.CHUNK_BYTES) throw new Error("trie: a record larger than a chunk");
    if (this.used + record.length > PackedRecords.CHUNK_BYTES) {
      this.chunks.push(new Uint8Array(PackedRecords.CHUNK_BYTES));
      this.used = 0;
    }
    if (this.count === this.chunkOf.length) {
      this.chunkOf = growU32(this.chunkOf);
      this.startOf = growU32(this.startOf);
      this.lengthOf = growU32(this.lengthOf);
    }
    (this.chunks[this.chunks.length - 1] as Uint8Array).set(record, this.used);
    this.chunkOf[this.count] = this.chunks.length - 1;
    this.startOf[this.count] = this.used;
    this.lengthOf[this.count] = record.length;
    this.used += record.length;
    this.count += 1;
  }

  *[Symbol.iterator](): Iterator<readonly [number, Uint8Array]> {
    for (let i = 0; i < this.count; i++) {
      const start = this.startOf[i] as number;
      const chunk = this.chunks[this.chunkOf[i] as number] as Uint8Array;
      yield [this.firstId + i, chunk.subarray(start, start + (this.lengthOf[i] as number))];
    }
  }
}

function growU32(array: Uint32Array<ArrayBuffer>): Uint32Array<ArrayBuffer> {
  const grown = new Uint32Array(array.length * 2);
  grown.set(array);
  return grown;
}

function grow(bytes: Uint8Array, atLeast: number): Uint8Array {
  const out = new Uint8Array(Math.max(atLeast, bytes.length * 2));
  out.set(bytes);
  return out;
}

/**
 * Builds a whole trie in one pass (genesis), with the same root and records that MerkleTrie
 * gives for the same entries, numbered from `nextId` children first: keys are sorted, each
 * subtree is built from its contiguous run of keys, and a node is encoded, hashed and recorded as
 * soon as it is complete. Only the path being built is in memory, so a million-account genesis
 * costs its records, not a million-node tree. Without `keepRecords` only the root is computed
 * (nodes are still numbered, so the root's id is the same).
 */
export function buildTrie(
  entries: PackedEntries,
  hash: (data: Uint8Array) => Uint8Array,
  nextId: number,
  keepRecords = true,
): { records: PackedRecords; root: RootRef | undefined; rootHash: Uint8Array } {
  const keys = Buffer.from(entries.keys.buffer, entries.keys.byteOffset, 32 * entries.count);
  const order = new Uint32Array(entries.count);
  for (let i = 0; i < order.length; i++) order[i] = i;
  // Buffer#compare on ranges of one buffer: no view is made per comparison.
  order.sort((a, b) => keys.compare(keys, 32 * b, 32 * b + 32, 32 * a, 32 * a + 32));
  for (let i = 1; i < order.length; i++) {
    const a = 32 * (order[i - 1] as number);
    const b = 32 * (order[i] as number);
    if (keys.compare(keys, a, a + 32, b, b + 32) === 0) throw new Error("trie: a key appears twice");
  }
  /** Nibble `depth` of the i-th key in sorted order. */
  const nibble = (i: number, depth: number): number => {
    const byte = keys[32 * (order[i] as number) + (depth >> 1)] as number;
    return depth & 1 ? byte & 15 : byte >> 4;
  };
  const records = new PackedRecords(nextId);
  let next = nextId;

  /** Encodes a complete node; a hashed one is recorded and comes back as its stored reference. */
  const finish = (node: TrieNode, isRoot: boolean): Child => {
    const encoded =
      node.type === 0
        ? encodeLeaf(node)
        : node.type === 1
          ? encodeExtension(node, refOf(node.child))
          : encodeBranch(node);
    const rlp = encoded.subarray(0, rlpLength(encoded)); // without the room for child ids
    if (rlp.length < 32 && !isRoot) {
      node.ref = detached(rlp); // embedded in its parent
      return node;
    }
    const nodeHash = hash(rlp);
    const id = next++;
    if (keepRecords) records.add(recordOf(node, encoded));
    return storedRef(nodeHash, id);
  };

  /** The subtree of sorted keys [lo, hi), which agree on their first `depth` nibbles. */
  const build = (lo: number, hi: number, depth: number, isRoot: boolean): Child => {
    if (hi - lo === 1) {
      const at = order[lo] as number;
      const path = nibblesOf(keys.subarray(32 * at, 32 * at + 32)).subarray(depth);
      return finish(leaf(0, path, entries.valueAt(at)), isRoot);
    }
    let common = 0;
    while (nibble(lo, depth + common) === nibble(hi - 1, depth + common)) common++;
    const at = depth + common;
    const fork = branch(0);
    for (let start = lo; start < hi; ) {
      const slot = nibble(start, at);
      let end = start + 1;
      while (end < hi && nibble(end, at) === slot) end++;
      setChild(fork, slot, build(start, end, at + 1, false));
      start = end;
    }
    if (common === 0) return finish(fork, isRoot);
    const path = new Uint8Array(common);
    for (let d = 0; d < common; d++) path[d] = nibble(lo, depth + d);
    return finish(extension(0, path, finish(fork, false)), isRoot);
  };

  if (entries.count === 0) return { records, root: undefined, rootHash: hash(Uint8Array.of(0x80)) };
  const top = build(0, entries.count, 0, true) as Uint8Array;
  const rootHash = top.subarray(0, 32);
  return { records, root: { hash: rootHash, id: next - 1 }, rootHash };
}

/** How a parent embeds a finished child: its hash, or its own encoding when embedded. */
function refOf(child: Child): Uint8Array {
  if (child === null) throw new Error("trie: an extension without a child");
  if (child instanceof Uint8Array) return child.subarray(0, 32);
  return child.ref as Uint8Array;
}
