import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MerklePatriciaTrie } from "@ethereumjs/mpt";
import { MapDB, ValueEncoding } from "@ethereumjs/util";
import fc from "fast-check";
import {
  type JsonValue,
  type StateChanges,
  StateTrie,
  type TrieNodeReader,
} from "../../../src/chain/index.ts";
import { bytesToHex, canonicalJson, utf8Bytes } from "../../../src/crypto/index.ts";

/** Committed trie nodes and roots in memory, as a store keeps them. */
class MapNodes implements TrieNodeReader {
  readonly nodes = new Map<number, Uint8Array>();
  readonly roots = new Map<string, number>();

  getTrieNode(id: number): Uint8Array | undefined {
    return this.nodes.get(id);
  }

  getTrieRoot(rootHex: string): number | undefined {
    return this.roots.get(rootHex);
  }

  nextTrieNodeId(): number {
    return this.nodes.size;
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
  const { nodes, root } = trie.pendingWrite();
  for (const [id, node] of nodes) store.nodes.set(id, node);
  if (root !== undefined) store.roots.set(root.hash, root.id);
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
    assert.equal([...trie.pendingWrite().nodes].length, 0, "no pending nodes after commit");
    const changed = await trie.apply(
      changes([
        ["/a", 2],
        ["/b", 3],
      ]),
    );
    assert.notEqual(changed, committed);
    assert.ok([...trie.pendingWrite().nodes].length > 0, "the uncommitted apply wrote nodes");
    trie.discard();
    assert.equal(trie.rootHex(), committed, "root back to the committed one");
    assert.equal([...trie.pendingWrite().nodes].length, 0, "pending nodes dropped");
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

  it("markCommitted(true): the next block reads the nodes of a write still under way from that write", async () => {
    // Resident depth 0: after a commit every node below the root is read from the store again,
    // so the second block needs the first's nodes before the store holds them.
    const store = new MapNodes();
    const trie = new StateTrie(store, undefined, { residentDepth: 0 });
    const block1 = changes(Array.from({ length: 40 }, (_, i) => [`/k${i}`, i]));
    const block2 = changes(Array.from({ length: 40 }, (_, i) => [`/k${i}`, i % 3 === 0 ? null : i + 100]));
    await trie.apply(block1);
    const underWay = trie.pendingWrite();
    trie.markCommitted(true);
    const root2 = await trie.apply(block2);
    assert.equal(root2, await rootOf([...block1, ...block2]), "the root of both blocks' changes");
    // The first write lands, then the second: a trie opened on the store reaches the same root.
    for (const [id, node] of underWay.nodes) store.nodes.set(id, node);
    trie.written();
    commit(trie, store);
    assert.equal(new StateTrie(store, root2).rootHex(), root2);

    // Without the write's nodes the same second block is missing them: the case is reached.
    const bare = new StateTrie(new MapNodes(), undefined, { residentDepth: 0 });
    await bare.apply(block1);
    bare.markCommitted();
    await assert.rejects(bare.apply(block2), /missing from the store/);
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

  it("gives the same root whether changes come in one batch, one by one, or over several blocks (property)", async () => {
    await fc.assert(
      fc.asyncProperty(changeSetArb, fc.array(fc.nat(), { maxLength: 4 }), async (list, cuts) => {
        const batch = await new StateTrie(new MapNodes()).apply(changes(list));
        const single = new StateTrie(new MapNodes());
        for (const entry of list) await single.apply(changes([entry]));
        assert.equal(single.rootHex(), batch, "one apply per change");
        // Split into blocks at `cuts`; each block is committed, and the trie reopened from the
        // store after every other one (a restart).
        const store = new MapNodes();
        let trie = new StateTrie(store);
        const bounds = [...new Set(cuts.map((c) => c % (list.length + 1)))].sort((a, b) => a - b);
        let from = 0;
        for (const [n, to] of [...bounds, list.length].entries()) {
          const root = await trie.apply(changes(list.slice(from, to)));
          commit(trie, store);
          if (n % 2 === 1) trie = new StateTrie(store, root);
          from = to;
        }
        assert.equal(trie.rootHex(), batch, "blocks of changes, committed and reopened");
      }),
      { numRuns: 150 },
    );
  });

  it("has the roots of @ethereumjs/mpt's secure trie, block after block (property)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(changeSetArb, { minLength: 1, maxLength: 4 }), async (blocks) => {
        const reference = new MerklePatriciaTrie({
          db: new MapDB<string, Uint8Array>(),
          useKeyHashing: true,
          valueEncoding: ValueEncoding.Bytes,
        });
        const store = new MapNodes();
        const trie = new StateTrie(store);
        for (const [height, list] of blocks.entries()) {
          // One map per block, as Chain.execute hands over: the last write to a path wins.
          const block = changes(list);
          for (const [path, value] of block) {
            if (value === null) await reference.del(utf8Bytes(path));
            else await reference.put(utf8Bytes(path), utf8Bytes(canonicalJson(value)));
          }
          // Paused at every step (Chain.execute pauses when its time slice is used up).
          const root = await trie.apply(block, () => new Promise((resolve) => setImmediate(resolve)));
          assert.equal(root, bytesToHex(reference.root()), `block ${height}`);
          commit(trie, store);
        }
      }),
      { numRuns: 80 },
    );
  });
});

/** Random state writes and deletions over a small set of paths (so deletions hit), in order. */
const changeSetArb: fc.Arbitrary<[string, JsonValue | null][]> = fc.array(
  fc.tuple(
    fc.constantFrom(
      "/account/0xA/balance",
      "/account/0xA/nonce",
      "/account/0xB/balance",
      "/users/0xA/x",
      "/t/1",
      "/t/2",
      "/t/3",
    ),
    fc.option(
      fc.oneof(fc.integer(), fc.string({ maxLength: 60 }), fc.array(fc.integer(), { maxLength: 3 })),
      {
        freq: 3,
      },
    ),
  ),
  { maxLength: 30 },
);
