import assert from "node:assert/strict";
import { decodeRecord } from "../../src/chain/trieCodec.ts";
import { type Child, childAt, idOfRef, isNode } from "../../src/chain/trieNode.ts";
import type { LmdbStore } from "../../src/storage/index.ts";

/**
 * Walks the whole stored trie of state root `root` and fails if its root entry or any node it
 * reaches is missing: what pruning must never do to a state it keeps. Returns the nodes visited.
 */
export function assertStateWhole(store: LmdbStore, root: string, context: string): number {
  const id = store.getTrieRoot(root);
  assert.ok(id !== undefined, `${context}: the root entry of ${root} is kept`);
  const pending = [id];
  let visited = 0;
  while (pending.length > 0) {
    const nodeId = pending.pop() as number;
    const record = store.getTrieNode(nodeId);
    assert.ok(record !== undefined, `${context}: node ${nodeId} it reaches is stored`);
    visited++;
    const visit = (child: Child): void => {
      if (child === null) return;
      if (!isNode(child)) pending.push(idOfRef(child));
      else if (child.type === 2) for (let i = 0; i < 16; i++) visit(childAt(child, i));
      else if (child.type === 1) visit(child.child);
    };
    // The hash argument only labels the decoded node; the walk needs its children.
    visit(decodeRecord(record, new Uint8Array(32), nodeId));
  }
  return visited;
}
