import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { MerkleTrie } from "../../../src/chain/merkleTrie.ts";
import { BRANCH, type Child, EXTENSION, isNode, type TrieNode } from "../../../src/chain/trieNode.ts";
import { committedWithTwoLevelsResident, NodeMap, store } from "../../helpers/trieNodeMap.ts";

/**
 * A branch's child references are cut from slabs shared by 64 branches (trieNode.ts newRefs). A
 * branch that stays decoded between blocks must own its references: a view would keep its whole
 * slab alive for as long as the trie.
 */

/** Checks every decoded branch of `trie`; returns how many refer to stored children. */
function assertResidentBranchesOwnTheirRefs(trie: MerkleTrie): number {
  let withStoredChildren = 0;
  const visit = (node: TrieNode): void => {
    if (node.type === EXTENSION) {
      if (isNode(node.child)) visit(node.child);
      return;
    }
    if (node.type !== BRANCH) return;
    if (node.stored !== 0) withStoredChildren++;
    assert.equal(node.refs.byteLength, node.refs.buffer.byteLength, "a resident branch owns its references");
    for (const child of node.nodes) if (child !== undefined) visit(child);
  };
  const root = (trie as unknown as { root_: Child }).root_;
  assert.ok(isNode(root));
  visit(root);
  return withStoredChildren;
}

/** A 32-byte key whose first byte is `first` (so its first two nibbles are chosen), the rest `fill`. */
const keyStarting = (first: number, fill: number): Uint8Array => {
  const key = new Uint8Array(32).fill(fill);
  key[0] = first;
  return key;
};

describe("MerkleTrie's branch references in slabs", () => {
  it("keeps no decoded branch on a view into a slab after a commit", () => {
    const { nodes, trie, key } = committedWithTwoLevelsResident();
    for (let i = 0; i < 300; i++) trie.put(key(i * 7), Uint8Array.of(4, i & 255));
    store(trie, nodes);
    const count = assertResidentBranchesOwnTheirRefs(trie);
    assert.ok(count >= 16, `the resident branches refer to stored children (${count})`);
  });

  it("gives references of its own to a branch read from the store and kept under a new extension", () => {
    // Keys 0x10…, 0x11… and 0x20…: a root branch with a branch at slot 1 and a leaf at slot 2.
    const nodes = new NodeMap();
    const first = nodes.open(undefined, { residentDepth: 2 });
    for (const [byte, fill] of [
      [0x10, 1],
      [0x11, 2],
      [0x20, 3],
    ] as const)
      first.put(keyStarting(byte, fill), Uint8Array.of(fill));
    store(first, nodes);
    // Opened again (as after a restart), nothing is decoded yet. Deleting 0x20… leaves the root
    // one child: the branch at slot 1, read from the store, goes under a new extension as it is.
    const reopened = nodes.open(first.root(), { residentDepth: 2 });
    reopened.del(keyStarting(0x20, 3));
    store(reopened, nodes);
    assert.equal(
      assertResidentBranchesOwnTheirRefs(reopened),
      1,
      "that branch refers to its two stored leaves",
    );
  });
});
