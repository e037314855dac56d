import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MerklePatriciaTrie } from "@ethereumjs/mpt";
import { type BatchDBOp, type DB, ValueEncoding } from "@ethereumjs/util";
import fc from "fast-check";
import { MerkleTrie } from "../../../src/chain/merkleTrie.ts";
import { buildTrie, PackedEntries } from "../../../src/chain/trieBuild.ts";
import { decodeRecord } from "../../../src/chain/trieCodec.ts";
import { type Child, childAt, idOfRef, isNode, type TrieNode } from "../../../src/chain/trieNode.ts";
import { keccak256 } from "../../../src/crypto/index.ts";
import { committedWithTwoLevelsResident, hex, NodeMap, store } from "../../helpers/trieNodeMap.ts";

/** A plain in-memory DB for the reference trie (@ethereumjs/mpt, the library the trie replaced). */
class RefDb implements DB<string, Uint8Array> {
  readonly map = new Map<string, Uint8Array>();
  async get(key: string): Promise<Uint8Array | undefined> {
    return this.map.get(key);
  }
  async put(key: string, value: Uint8Array): Promise<void> {
    this.map.set(key, value);
  }
  async del(key: string): Promise<void> {
    this.map.delete(key);
  }
  async batch(ops: BatchDBOp<string, Uint8Array>[]): Promise<void> {
    for (const op of ops) {
      if (op.type === "put") this.map.set(op.key, op.value);
      else this.map.delete(op.key);
    }
  }
  shallowCopy(): DB<string, Uint8Array> {
    return this;
  }
  async open(): Promise<void> {}
}

const reference = (db: DB<string, Uint8Array> = new RefDb(), root?: Uint8Array) =>
  new MerklePatriciaTrie({
    db,
    useKeyHashing: false,
    valueEncoding: ValueEncoding.Bytes,
    ...(root === undefined ? {} : { root }),
  });

/** The RLP part of a record (what is hashed), without the children's ids. */
function rlpOf(record: Uint8Array): Uint8Array {
  const first = record[0] as number;
  const length =
    first < 0xf8
      ? 1 + first - 0xc0
      : 1 + (first - 0xf7) + Number.parseInt(hex(record.subarray(1, 1 + first - 0xf7)), 16);
  return record.subarray(0, length);
}

/** Every node id reachable from `rootId`, checking each node's hash against its parent's reference. */
function reachable(nodes: NodeMap, rootHash: Uint8Array, rootId: number): Set<number> {
  const seen = new Set<number>();
  const visit = (id: number, hash: Uint8Array): void => {
    if (seen.has(id)) return;
    const record = nodes.records.get(id);
    assert.ok(record !== undefined, `node ${id} reachable from the root is stored`);
    assert.equal(hex(keccak256(rlpOf(record))), hex(hash), `node ${id} hashes to its reference`);
    seen.add(id);
    const walk = (node: TrieNode): void => {
      const children: Child[] =
        node.type === 2
          ? Array.from({ length: 16 }, (_, i) => childAt(node, i))
          : node.type === 1
            ? [node.child]
            : [];
      for (const child of children) {
        if (child === null) continue;
        if (isNode(child)) walk(child);
        else visit(idOfRef(child), child.subarray(0, 32));
      }
    };
    walk(decodeRecord(record, hash, id));
  };
  visit(rootId, rootHash);
  return seen;
}

/**
 * Keys built to share long prefixes (so leaves sit deep, nodes get shorter than 32 bytes and are
 * embedded in their parents), and values from one byte to past the 55-byte RLP boundary.
 */
const keyArb = fc
  .tuple(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 31 }), fc.integer({ min: 0, max: 255 }))
  .map(([base, at, byte]) => {
    const key = new Uint8Array(32).fill(base * 17);
    key[at] = byte;
    return key;
  });
const valueArb = fc.oneof(
  fc.uint8Array({ minLength: 1, maxLength: 2 }),
  fc.uint8Array({ minLength: 1, maxLength: 70 }),
);
/** A put (value), a deletion (null), or "root": a root computed mid-block. */
type Op = [Uint8Array, Uint8Array | null] | "root";

/** Blocks of puts and deletions over a small pool of keys, so that deletions mostly hit. */
const blocksArb: fc.Arbitrary<Op[][]> = fc
  .uniqueArray(keyArb, { minLength: 1, maxLength: 12, selector: hex })
  .chain((pool) =>
    fc.array(
      fc.array(
        fc.oneof(
          {
            weight: 12,
            arbitrary: fc.tuple(
              fc.constantFrom(...pool),
              fc.option(valueArb, { freq: 2 }),
            ) as fc.Arbitrary<Op>,
          },
          // A root computed mid-block: later writes must still reach the block's root.
          { weight: 1, arbitrary: fc.constant<Op>("root") },
        ),
        { maxLength: 25 },
      ),
      { minLength: 1, maxLength: 5 },
    ),
  );

describe("MerkleTrie", () => {
  it("has the empty-trie root of @ethereumjs/mpt and stores nothing for it", () => {
    const trie = new NodeMap().open();
    assert.equal(hex(trie.root()), hex(reference().root()));
    const writes = trie.newNodes();
    assert.equal(writes.records.size, 0);
    assert.equal(writes.root, undefined);
  });

  it("gives the root of @ethereumjs/mpt block by block, and stores exactly the nodes its roots reach", async () => {
    // After each block: commit it, commit it and reopen the trie from the store (a restart), or
    // drop it (a block that was executed but not committed).
    const endArb = fc.array(fc.constantFrom("commit", "restart", "discard"), { minLength: 5, maxLength: 5 });
    await fc.assert(
      fc.asyncProperty(
        blocksArb,
        endArb,
        fc.integer({ min: 1, max: 5 }),
        async (blocks, ends, residentDepth) => {
          const nodes = new NodeMap();
          let trie = nodes.open(undefined, { residentDepth });
          const ref = reference();
          for (const [height, ops] of blocks.entries()) {
            ref.checkpoint();
            const committed = hex(ref.root());
            for (const op of ops) {
              if (op === "root") {
                assert.equal(hex(trie.root()), hex(ref.root()), `root within block ${height}`);
                continue;
              }
              const [key, value] = op;
              if (value === null) {
                trie.del(key);
                await ref.del(key);
              } else {
                trie.put(key, value);
                await ref.put(key, value);
              }
            }
            const root = trie.root();
            assert.equal(hex(root), hex(ref.root()), `root after block ${height}`);
            if (ends[height] === "discard") {
              trie.discard();
              await ref.revert();
              assert.equal(hex(trie.root()), committed, `discarding block ${height} restores the root`);
              continue;
            }
            await ref.commit();
            const before = new Set(nodes.records.keys());
            const written = store(trie, nodes);
            const rootId = nodes.roots.get(hex(root));
            if (rootId === undefined) {
              assert.equal(hex(root), hex(reference().root()), "only the empty root has no node");
            } else {
              const live = reachable(nodes, root, rootId);
              for (const id of written) assert.ok(live.has(id), `written node ${id} is reachable`);
              for (const id of live)
                assert.ok(before.has(id) || written.includes(id), `node ${id} is stored`);
            }
            if (ends[height] === "restart") trie = nodes.open(root, { residentDepth });
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it("lists as retired exactly the stored nodes the parent's root reaches and the new root does not (property)", () => {
    // Pruning deletes a block's retired nodes once the parent's state is no longer kept: deleting
    // one too many breaks a kept state, one too few leaks disk. Checked against a full walk of both
    // roots, after commits, restarts and dropped blocks; then every root of the last `keep`
    // blocks must stay whole while the retired nodes of older ones are deleted.
    const endArb = fc.array(fc.constantFrom("commit", "restart", "discard"), { minLength: 5, maxLength: 5 });
    fc.assert(
      fc.property(
        blocksArb,
        endArb,
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 3 }),
        (blocks, ends, residentDepth, keep) => {
          const nodes = new NodeMap();
          let trie = nodes.open(undefined, { residentDepth });
          const liveOf = (root: Uint8Array): Set<number> => {
            const id = nodes.roots.get(hex(root));
            return id === undefined ? new Set() : reachable(nodes, root, id);
          };
          let parentRoot = trie.root();
          const kept: { root: Uint8Array; retired: number[] }[] = [];
          for (const [height, ops] of blocks.entries()) {
            for (const op of ops) {
              if (op === "root") trie.root();
              else if (op[1] === null) trie.del(op[0]);
              else trie.put(op[0], op[1]);
            }
            if (ends[height] === "discard") {
              trie.discard();
              assert.deepEqual(trie.newNodes().retired, [], "a dropped block retires nothing");
              continue;
            }
            const root = trie.root();
            const { retired } = trie.newNodes();
            const before = liveOf(parentRoot);
            store(trie, nodes);
            const after = liveOf(root);
            const expected = [...before].filter((id) => !after.has(id)).sort((a, b) => a - b);
            assert.deepEqual(
              [...retired].sort((a, b) => a - b),
              expected,
              `block ${height} retires`,
            );
            kept.push({ root, retired: [...retired] });
            // Prune: the block that left the window retired nodes only roots before it reached.
            while (kept.length > keep) {
              kept.shift();
              for (const id of (kept[0] as { retired: number[] }).retired) nodes.records.delete(id);
            }
            for (const { root: keptRoot } of kept) liveOf(keptRoot); // asserts every node is stored
            parentRoot = root;
            if (ends[height] === "restart") trie = nodes.open(root, { residentDepth });
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it("stores standard trie nodes: their encodings, keyed by hash, are a trie @ethereumjs/mpt reads", async () => {
    const nodes = new NodeMap();
    const trie = nodes.open();
    const entries = Array.from({ length: 300 }, (_, i) => [
      keccak256(Uint8Array.of(i >> 8, i & 255)),
      Uint8Array.from(Buffer.from(`value ${i}`)),
    ]) as [Uint8Array, Uint8Array][];
    for (const [key, value] of entries) trie.put(key, value);
    store(trie, nodes);
    const db = new RefDb();
    for (const record of nodes.records.values()) {
      const rlp = rlpOf(record);
      db.map.set(hex(keccak256(rlp)), rlp);
    }
    const ref = reference(db, trie.root());
    for (const [key, value] of entries) assert.deepEqual(await ref.get(key), value);
  });

  it("numbers a block's nodes from the store's next id, children before parents", () => {
    const nodes = new NodeMap();
    const trie = nodes.open();
    for (let i = 0; i < 100; i++) trie.put(keccak256(Uint8Array.of(i)), Uint8Array.of(i + 1));
    const first = store(trie, nodes);
    assert.deepEqual(
      first,
      Array.from({ length: first.length }, (_, i) => i),
      "ids 0, 1, 2, …",
    );
    trie.put(keccak256(Uint8Array.of(7)), Uint8Array.of(200));
    const second = store(trie, nodes);
    assert.deepEqual(
      second,
      Array.from({ length: second.length }, (_, i) => first.length + i),
    );
    const rootId = nodes.roots.get(hex(trie.root()));
    assert.equal(rootId, Math.max(...second), "the root is numbered last");
  });

  it("discard() returns to the committed root; nodes of the dropped block are never stored", () => {
    const nodes = new NodeMap();
    const trie = nodes.open();
    const key = (i: number) => keccak256(Uint8Array.of(i));
    for (let i = 0; i < 50; i++) trie.put(key(i), Uint8Array.of(i + 1));
    store(trie, nodes);
    const committed = hex(trie.root());
    for (let i = 0; i < 50; i += 3) trie.put(key(i), Uint8Array.of(200));
    trie.del(key(1));
    assert.notEqual(hex(trie.root()), committed);
    assert.ok(trie.newNodes().records.size > 0);
    trie.discard();
    assert.equal(hex(trie.root()), committed);
    assert.equal(trie.newNodes().records.size, 0);
    // The next block is numbered as if the dropped one had never been.
    trie.put(key(3), Uint8Array.of(9));
    assert.equal(Math.min(...trie.newNodes().records.keys()), nodes.nextId());
  });

  it("stores a block's final nodes only, not those a later write in the block replaced", () => {
    const nodes = new NodeMap();
    const trie = nodes.open();
    const key = (i: number) => keccak256(Uint8Array.of(i));
    for (let i = 0; i < 200; i++) trie.put(key(i), Uint8Array.of(1));
    store(trie, nodes);
    // The same key rewritten many times in one block: one leaf and its path are stored, once.
    for (let v = 2; v < 100; v++) trie.put(key(7), Uint8Array.of(v));
    const written = store(trie, nodes);
    assert.ok(written.length <= 4, `a path of at most 4 nodes is written (was ${written.length})`);
    assert.equal(hex(nodes.open(trie.root()).root()), hex(trie.root()));
  });

  it("keeps only the top of the trie decoded between blocks", () => {
    const { nodes, trie, key } = committedWithTwoLevelsResident();
    nodes.reads = 0;
    trie.put(key(5), Uint8Array.of(9));
    assert.ok(nodes.reads >= 1, "a node below the resident depth is read from the store");
    assert.ok(nodes.reads <= 3, `only the path below depth 2 is read (read ${nodes.reads})`);
  });

  it("numbers and releases in slices exactly as in one piece (newNodesInSlices, markCommittedInSlices)", async () => {
    // Two tries on stores of their own take the same blocks: one commits in one piece, the other
    // in slices, pausing between the root's subtrees. Same records (ids and bytes), same roots,
    // and the same nodes left decoded (the same store reads for the next block's writes).
    const whole = new NodeMap();
    const sliced = new NodeMap();
    const a = whole.open(undefined, { residentDepth: 2 });
    const b = sliced.open(undefined, { residentDepth: 2 });
    const key = (i: number) => keccak256(Uint8Array.of(i >> 8, i & 255));
    let pauses = 0;
    const pause = async () => {
      pauses++;
    };
    for (let block = 0; block < 5; block++) {
      whole.reads = 0;
      sliced.reads = 0;
      for (let i = 0; i < 600; i++) {
        const k = key((i * 7 + block * 131) % 3000);
        const value = Uint8Array.of(block, i & 255, 1);
        if (i % 50 === 49) {
          a.del(k);
          b.del(k);
        } else {
          a.put(k, value);
          b.put(k, value);
        }
      }
      assert.equal(sliced.reads, whole.reads, `block ${block}: the same nodes were decoded`);
      if (block > 0) assert.ok(whole.reads > 0, "nodes below the resident depth were released");
      const before = pauses;
      const expected = a.newNodes();
      const got = await b.newNodesInSlices(pause);
      assert.ok(pauses > before, "numbering paused");
      assert.deepEqual([...got.records.keys()], [...expected.records.keys()]);
      for (const [id, record] of expected.records)
        assert.equal(hex(got.records.get(id) as Uint8Array), hex(record));
      assert.deepEqual(got.root?.id, expected.root?.id);
      assert.deepEqual(got.retired, expected.retired);
      for (const [id, record] of got.records) sliced.records.set(id, record);
      const pausedBefore = pauses;
      await b.markCommittedInSlices(pause);
      assert.ok(pauses > pausedBefore, "releasing paused");
      store(a, whole);
    }
  });

  it("buildTrie gives the root and the very records of putting the same entries one by one (property)", () => {
    // Up to 2,000 entries: enough to grow PackedEntries' arrays past their first size.
    const entriesArb = fc.uniqueArray(fc.tuple(keyArb, valueArb), {
      maxLength: 2000,
      selector: ([key]) => hex(key),
    });
    fc.assert(
      fc.property(entriesArb, fc.nat(1000), (entries, nextId) => {
        const packed = new PackedEntries();
        for (const [key, value] of entries) packed.add(key, value);
        const built = buildTrie(packed, keccak256, nextId);
        const trie = new MerkleTrie(new NodeMap(), { hash: keccak256 }, undefined, nextId);
        for (const [key, value] of entries) trie.put(key, value);
        const writes = trie.newNodes();
        assert.equal(hex(built.rootHash), hex(trie.root()));
        assert.deepEqual(built.root, writes.root);
        assert.deepEqual([...built.records], [...writes.records]);
      }),
      { numRuns: 60 },
    );
  });

  it("buildTrie handles more entries than PackedEntries starts with (5,000 keys, long values)", () => {
    const packed = new PackedEntries();
    const trie = new MerkleTrie(new NodeMap(), { hash: keccak256 }, undefined, 0);
    for (let i = 0; i < 5000; i++) {
      const key = keccak256(Uint8Array.of(i >> 8, i & 255, 7));
      const value = `${"v".repeat(i % 40)}${i}`;
      packed.add(key, value);
      trie.put(key, Uint8Array.from(Buffer.from(value)));
    }
    const built = buildTrie(packed, keccak256, 0);
    const writes = trie.newNodes();
    assert.equal(hex(built.rootHash), hex(trie.root()));
    assert.deepEqual([...built.records], [...writes.records]);
    assert.throws(() => {
      packed.add(keccak256(Uint8Array.of(0, 0, 7)), "again");
      buildTrie(packed, keccak256, 0);
    }, /appears twice/);
  });
});
