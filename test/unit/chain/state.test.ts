import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  balanceOf,
  type JsonValue,
  nonceOf,
  StateOverlay,
  type StateReader,
  stakeOf,
} from "../../../src/chain/index.ts";

/** Committed state as a Map of leaves. */
class MapState implements StateReader {
  readonly leaves: Map<string, JsonValue>;

  constructor(entries: Record<string, JsonValue> = {}) {
    this.leaves = new Map(Object.entries(entries));
  }

  getLeaf(path: string): JsonValue | undefined {
    return this.leaves.get(path);
  }

  *leafPathsBelow(path: string): Iterable<string> {
    for (const key of this.leaves.keys()) if (key.startsWith(`${path}/`)) yield key;
  }
}

/** Every leaf visible through the overlay, as a plain object sorted by path. */
function visibleLeaves(overlay: StateOverlay, base: MapState): Record<string, JsonValue> {
  const paths = new Set<string>([...base.leaves.keys(), ...overlay.changes().keys()]);
  const out: Record<string, JsonValue> = {};
  for (const path of [...paths].sort()) {
    const value = overlay.getLeaf(path);
    if (value !== undefined) out[path] = value;
  }
  return out;
}

describe("StateOverlay", () => {
  it("reads the base where nothing was written and the overlay over it", () => {
    const base = new MapState({ "/a/b": 1, "/a/c": 2 });
    const overlay = new StateOverlay(base);
    overlay.setLeaf("/a/b", 10);
    assert.equal(overlay.getLeaf("/a/b"), 10, "written leaf shadows the base");
    assert.equal(overlay.getLeaf("/a/c"), 2, "unwritten leaf reads through to the base");
    assert.equal(overlay.getLeaf("/a/d"), undefined, "missing leaf is undefined");
    assert.equal(base.getLeaf("/a/b"), 1, "the base is not modified");
  });

  it("spreads a written object into leaves", () => {
    const base = new MapState();
    const overlay = new StateOverlay(base);
    overlay.setValue("/u/x", { a: 1, b: { c: "s", d: [1, { e: 2 }] }, f: null, g: {} });
    assert.deepEqual(visibleLeaves(overlay, base), {
      "/u/x/a": 1,
      "/u/x/b/c": "s",
      "/u/x/b/d": [1, { e: 2 }],
    });
    assert.equal(overlay.getLeaf("/u/x"), undefined, "an object is not a leaf");
    assert.deepEqual([...overlay.leafPathsBelow("/u/x/b")].sort(), ["/u/x/b/c", "/u/x/b/d"]);
  });

  it("replaces a whole subtree when an object is written over it", () => {
    const base = new MapState({ "/u/x/a": 1, "/u/x/b/c": 2, "/u/xy": 3 });
    const overlay = new StateOverlay(base);
    overlay.setValue("/u/x", { b: { d: 4 } });
    assert.deepEqual(
      visibleLeaves(overlay, base),
      { "/u/x/b/d": 4, "/u/xy": 3 },
      "old leaves gone, sibling /u/xy kept",
    );
  });

  it("deletes the subtree's leaves when a scalar is written over it", () => {
    const base = new MapState({ "/u/x/a": 1, "/u/x/b/c": 2, "/u/y": 3 });
    const overlay = new StateOverlay(base);
    overlay.setValue("/u/x", 7);
    assert.deepEqual(visibleLeaves(overlay, base), { "/u/x": 7, "/u/y": 3 });
    assert.deepEqual([...overlay.leafPathsBelow("/u/x")], [], "nothing is left below the new leaf");
  });

  it("removes an ancestor leaf when writing below it", () => {
    const base = new MapState({ "/u/x": 7, "/u/y": 1 });
    const overlay = new StateOverlay(base);
    overlay.setValue("/u/x/a/b", 1);
    assert.deepEqual(visibleLeaves(overlay, base), { "/u/x/a/b": 1, "/u/y": 1 });
    assert.equal(overlay.getLeaf("/u/x"), undefined, "the former leaf /u/x is gone");
  });

  it("removes an ancestor leaf written earlier in the same overlay", () => {
    const base = new MapState();
    const overlay = new StateOverlay(base);
    overlay.setValue("/u/x", "leaf");
    overlay.setValue("/u/x/y", 2);
    assert.deepEqual(visibleLeaves(overlay, base), { "/u/x/y": 2 });
  });

  it("deletes with null (a leaf or a subtree)", () => {
    const base = new MapState({ "/u/x/a": 1, "/u/x/b": 2, "/u/y": 3 });
    const overlay = new StateOverlay(base);
    overlay.setValue("/u/x", null);
    overlay.setValue("/u/y", null);
    assert.deepEqual(visibleLeaves(overlay, base), {});
    assert.deepEqual(
      Object.fromEntries(overlay.changes()),
      { "/u/x/a": null, "/u/x/b": null, "/u/x": null, "/u/y": null },
      "deletions are recorded as null changes",
    );
  });

  it("deletes with an empty object", () => {
    const base = new MapState({ "/u/x/a": 1 });
    const overlay = new StateOverlay(base);
    overlay.setValue("/u/x", {});
    assert.deepEqual(visibleLeaves(overlay, base), {});
  });

  it("leafPathsBelow merges base and overlay without deleted or duplicate paths", () => {
    const base = new MapState({ "/u/x/a": 1, "/u/x/b": 2, "/u/xz": 9 });
    const overlay = new StateOverlay(base);
    overlay.setLeaf("/u/x/a", 10);
    overlay.setValue("/u/x/b", null);
    overlay.setLeaf("/u/x/c", 3);
    assert.deepEqual([...overlay.leafPathsBelow("/u/x")].sort(), ["/u/x/a", "/u/x/c"]);
  });

  it("rewriting a subtree twice in one overlay leaves only the last value", () => {
    const base = new MapState({ "/u/x/old": 1 });
    const overlay = new StateOverlay(base);
    overlay.setValue("/u/x", { a: 1, b: 2 });
    overlay.setValue("/u/x", { c: 3 });
    assert.deepEqual(visibleLeaves(overlay, base), { "/u/x/c": 3 });
  });

  it("reads balances, nonces and stakes as 0 when absent", () => {
    const address = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
    const overlay = new StateOverlay(new MapState({ [`/account/${address}/balance`]: 5 }));
    assert.equal(balanceOf(overlay, address), 5);
    assert.equal(nonceOf(overlay, address), 0);
    assert.equal(stakeOf(overlay, address), 0);
  });
});

describe("StateOverlay.leafPathsBelow with its index of written paths", () => {
  /** The definition: base leaves below `path` not written over, and written leaves below it still set. */
  function scanned(overlay: StateOverlay, base: MapState, path: string): string[] {
    const prefix = `${path}/`;
    const writes = overlay.changes();
    const fromBase = [...base.leaves.keys()].filter((p) => p.startsWith(prefix) && !writes.has(p));
    const written = [...writes].filter(([p, v]) => v !== null && p.startsWith(prefix)).map(([p]) => p);
    return [...fromBase, ...written];
  }

  const segment = fc.constantFrom("a", "b", "ab", "c");
  const pathArb = fc.array(segment, { minLength: 1, maxLength: 4 }).map((parts) => `/${parts.join("/")}`);
  const valueArb: fc.Arbitrary<JsonValue> = fc.oneof(
    fc.integer(),
    fc.constant(null),
    fc.dictionary(segment, fc.oneof(fc.integer(), fc.dictionary(segment, fc.integer(), { maxKeys: 2 })), {
      maxKeys: 3,
    }),
  );
  const opArb = fc.record({
    kind: fc.constantFrom("leaf", "value", "query"),
    path: pathArb,
    value: valueArb,
  });

  it("lists what a scan of every write lists, in the same order, whatever was written before and after the first query", () => {
    fc.assert(
      fc.property(
        fc.array(opArb, { maxLength: 40 }),
        fc.dictionary(pathArb, fc.integer(), { maxKeys: 6 }),
        (ops, seed) => {
          // A base whose leaves are not ancestors of each other (as a real state's are).
          const leaves: Record<string, JsonValue> = {};
          for (const [path, value] of Object.entries(seed)) {
            if (Object.keys(leaves).some((p) => p.startsWith(`${path}/`) || path.startsWith(`${p}/`)))
              continue;
            leaves[path] = value;
          }
          const base = new MapState(leaves);
          const overlay = new StateOverlay(base);
          for (const op of ops) {
            if (op.kind === "leaf" && op.value !== null && typeof op.value !== "object")
              overlay.setLeaf(op.path, op.value);
            else if (op.kind === "value") overlay.setValue(op.path, op.value);
            for (const query of [op.path, op.path.slice(0, op.path.lastIndexOf("/")), ""]) {
              assert.deepEqual(
                [...overlay.leafPathsBelow(query)],
                scanned(overlay, base, query),
                `below "${query}"`,
              );
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
