import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  type JsonValue,
  type StateChanges,
  StateTrie,
  type TrieNodeReader,
} from "../../../src/chain/index.ts";

/** Committed trie nodes in memory. */
class MapNodes implements TrieNodeReader {
  readonly nodes = new Map<string, Uint8Array>();

  getTrieNode(key: string): Uint8Array | undefined {
    return this.nodes.get(key);
  }
}

/** keccak256(rlp("")): the root of the empty Merkle-Patricia trie. */
const EMPTY_ROOT = "0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421";

function changes(entries: [string, JsonValue | null][]): StateChanges {
  return new Map(entries);
}

/** Applies `entries` to a fresh trie and returns its root. */
async function rootOf(entries: [string, JsonValue | null][]): Promise<string> {
  return new StateTrie(new MapNodes()).apply(changes(entries));
}

/** Persists what the trie wrote, as a block commit does, then marks it committed. */
function commit(trie: StateTrie, store: MapNodes): void {
  for (const [key, node] of trie.pendingNodes()) store.nodes.set(key, node);
  trie.markCommitted();
}

describe("StateTrie", () => {
  it("starts at the empty-trie root", () => {
    assert.equal(new StateTrie(new MapNodes()).rootHex(), EMPTY_ROOT);
  });

  it("gives the same root for the same changes in a different insertion order", async () => {
    const entries: [string, JsonValue][] = [
      ["/account/0xA/balance", 100],
      ["/account/0xB/balance", 5],
      ["/users/0xA/app/x", { deep: [1, 2] }],
      ["/users/0xA/app/y", "text"],
      ["/chain/chain_id", 100],
    ];
    const forward = await rootOf(entries);
    const backward = await rootOf([...entries].reverse());
    assert.equal(backward, forward, "root is independent of insertion order");
    assert.notEqual(forward, EMPTY_ROOT);
  });

  it("depends on values, not only keys", async () => {
    assert.notEqual(await rootOf([["/a", 1]]), await rootOf([["/a", 2]]));
    assert.notEqual(await rootOf([["/a", 1]]), await rootOf([["/a", "1"]]), '1 and "1" differ');
  });

  it("restores the previous root when a key is deleted", async () => {
    const trie = new StateTrie(new MapNodes());
    const before = await trie.apply(
      changes([
        ["/a", 1],
        ["/b", 2],
      ]),
    );
    const withC = await trie.apply(changes([["/c", 3]]));
    assert.notEqual(withC, before);
    assert.equal(
      await trie.apply(changes([["/c", null]])),
      before,
      "deleting /c restores the root without it",
    );
    assert.equal(
      await trie.apply(
        changes([
          ["/a", null],
          ["/b", null],
        ]),
      ),
      EMPTY_ROOT,
      "deleting all gives the empty root",
    );
  });

  it("ignores the deletion of a key that is not there", async () => {
    const trie = new StateTrie(new MapNodes());
    const root = await trie.apply(changes([["/a", 1]]));
    assert.equal(await trie.apply(changes([["/zzz", null]])), root);
  });

  it("discard() restores the committed root and drops pending nodes", async () => {
    const store = new MapNodes();
    const trie = new StateTrie(store);
    const committed = await trie.apply(changes([["/a", 1]]));
    commit(trie, store);
    assert.equal(trie.pendingNodes().size, 0, "no pending nodes after commit");
    const changed = await trie.apply(
      changes([
        ["/a", 2],
        ["/b", 3],
      ]),
    );
    assert.notEqual(changed, committed);
    assert.ok(trie.pendingNodes().size > 0, "the uncommitted apply wrote nodes");
    trie.discard();
    assert.equal(trie.rootHex(), committed, "root back to the committed one");
    assert.equal(trie.pendingNodes().size, 0, "pending nodes dropped");
    assert.equal(
      await trie.apply(changes([["/b", 3]])),
      await rootOf([
        ["/a", 1],
        ["/b", 3],
      ]),
      "trie still usable",
    );
  });

  it("discard() on a trie never committed goes back to its opening root", async () => {
    const trie = new StateTrie(new MapNodes());
    await trie.apply(changes([["/a", 1]]));
    trie.discard();
    assert.equal(trie.rootHex(), EMPTY_ROOT);
  });

  it("reopens at a committed root from stored nodes and continues to the same root", async () => {
    const store = new MapNodes();
    const first = new StateTrie(store);
    const root1 = await first.apply(
      changes([
        ["/a", 1],
        ["/b", { c: 2 }],
        ["/d", "x"],
      ]),
    );
    commit(first, store);
    const reopened = new StateTrie(store, root1);
    assert.equal(reopened.rootHex(), root1, "opens at the stored root");
    const root2 = await reopened.apply(
      changes([
        ["/b", null],
        ["/e", 5],
      ]),
    );
    assert.equal(
      root2,
      await rootOf([
        ["/a", 1],
        ["/d", "x"],
        ["/e", 5],
      ]),
      "same as building it in one go",
    );
  });

  it("gives an order-independent root for random small maps (property)", async () => {
    const leaf = fc.oneof(fc.integer(), fc.string({ maxLength: 8 }), fc.boolean(), fc.constant(null));
    const value: fc.Arbitrary<JsonValue> = fc.oneof(leaf, fc.array(leaf, { maxLength: 3 }));
    const entries = fc.uniqueArray(fc.tuple(fc.stringMatching(/^\/[a-c]{1,3}(\/[a-c]{1,3}){0,2}$/), value), {
      maxLength: 12,
      selector: ([key]) => key,
    });
    await fc.assert(
      fc.asyncProperty(
        entries.chain((list) =>
          fc.tuple(fc.constant(list), fc.shuffledSubarray(list, { minLength: list.length })),
        ),
        async ([list, shuffled]) => {
          const nonNull = list.filter(([, v]) => v !== null) as [string, JsonValue][];
          const a = await rootOf(nonNull);
          const b = await rootOf(shuffled.filter(([, v]) => v !== null) as [string, JsonValue][]);
          assert.equal(b, a, "root of a reordering equals the root of the original order");
          // Inserting everything and then deleting the null-valued ones gives the same root too.
          const trie = new StateTrie(new MapNodes());
          await trie.apply(changes(list.map(([k, v]) => [k, v ?? "tmp"])));
          const pruned = await trie.apply(
            changes(list.filter(([, v]) => v === null).map(([k]) => [k, null])),
          );
          assert.equal(pruned, a, "deleting keys gives the root of the map without them");
        },
      ),
      { numRuns: 40 },
    );
  });
});
