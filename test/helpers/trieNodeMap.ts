import assert from "node:assert/strict";
import {
  MerkleTrie,
  type MerkleTrieOptions,
  type NodeSource,
  type RootRef,
} from "../../src/chain/merkleTrie.ts";
import { keccak256 } from "../../src/crypto/index.ts";

/** MerkleTrie's tests' store: committed trie records in memory, and how a block stores them. */

export const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString("hex");

/** Committed records by id and roots by hash, as the store keeps them. */
export class NodeMap implements NodeSource {
  readonly records = new Map<number, Uint8Array>();
  readonly roots = new Map<string, number>();
  reads = 0;

  nodeById(id: number): Uint8Array | undefined {
    this.reads += 1;
    return this.records.get(id);
  }

  /** One past the largest id, as the store reads it (pruning deletes ids below it). */
  nextId(): number {
    return Math.max(-1, ...this.records.keys()) + 1;
  }

  /** Opens a trie on these records at `root` (a committed root hash; none: empty). */
  open(root?: Uint8Array, options: Partial<MerkleTrieOptions> = {}): MerkleTrie {
    const id = root === undefined ? undefined : this.roots.get(hex(root));
    const at: RootRef | undefined = root === undefined || id === undefined ? undefined : { hash: root, id };
    return new MerkleTrie(this, { hash: keccak256, ...options }, at, this.nextId());
  }
}

/** Stores what the trie wrote, as a block commit does, and marks it committed; returns the ids. */
export function store(trie: MerkleTrie, nodes: NodeMap): number[] {
  const { records, root } = trie.newNodes();
  for (const [id, record] of records) {
    assert.ok(!nodes.records.has(id), `id ${id} is new`);
    nodes.records.set(id, record);
  }
  if (root !== undefined) nodes.roots.set(hex(root.hash), root.id);
  trie.markCommitted();
  return [...records.keys()];
}

/** A trie of 2,000 keys, committed, that keeps two levels decoded between blocks. */
export function committedWithTwoLevelsResident(): {
  nodes: NodeMap;
  trie: MerkleTrie;
  key: (i: number) => Uint8Array;
} {
  const nodes = new NodeMap();
  const trie = nodes.open(undefined, { residentDepth: 2 });
  const key = (i: number) => keccak256(Uint8Array.of(i >> 8, i & 255));
  for (let i = 0; i < 2000; i++) trie.put(key(i), Uint8Array.of(1, 2, 3));
  store(trie, nodes);
  return { nodes, trie, key };
}
