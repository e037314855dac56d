import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { canonicalJson } from "../../../src/crypto/index.ts";

/** A copy of `value` with every object's keys inserted in a different order (seeded shuffle). */
function reorderKeys(value: unknown, seed: number): unknown {
  let state = seed >>> 0 || 1;
  const next = (): number => {
    // xorshift32: enough to scramble key order deterministically.
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state;
  };
  const walk = (item: unknown): unknown => {
    if (item === null || typeof item !== "object") return item;
    if (Array.isArray(item)) return item.map(walk);
    const entries = Object.entries(item);
    for (let i = entries.length - 1; i > 0; i--) {
      const j = next() % (i + 1);
      [entries[i], entries[j]] = [entries[j] as [string, unknown], entries[i] as [string, unknown]];
    }
    const out: Record<string, unknown> = {};
    // defineProperty keeps a "__proto__" key an own member, as JSON.parse makes it.
    for (const [key, member] of entries) {
      Object.defineProperty(out, key, {
        value: walk(member),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  };
  return walk(value);
}

describe("canonicalJson", () => {
  it("sorts keys at every level and writes no whitespace", () => {
    const value = { b: 1, a: { d: [3, { z: 1, y: 2 }], c: "x" } };
    assert.equal(canonicalJson(value), '{"a":{"c":"x","d":[3,{"y":2,"z":1}]},"b":1}');
  });

  it("keeps arrays in their order", () => {
    assert.equal(canonicalJson([3, 1, 2, "b", "a"]), '[3,1,2,"b","a"]');
  });

  it("drops undefined members at every level", () => {
    assert.equal(canonicalJson({ a: undefined, b: { c: undefined, d: 1 } }), '{"b":{"d":1}}');
  });

  it("writes undefined inside an array as null, like JSON.stringify", () => {
    assert.equal(canonicalJson([1, undefined, 2]), "[1,null,2]");
  });

  it("writes scalars exactly as JSON.stringify", () => {
    for (const value of [null, true, false, 0, -1, 1.5, 1e21, 1e-7, "", 'q"uote', "\u2028", "é", "\u0001"]) {
      assert.equal(canonicalJson(value), JSON.stringify(value), `scalar ${JSON.stringify(value)}`);
    }
  });

  it("escapes keys as JSON strings", () => {
    assert.equal(canonicalJson({ 'k"ey': 1, "a\nb": 2 }), '{"a\\nb":2,"k\\"ey":1}');
  });

  it("writes every key exactly as JSON.stringify does (property)", () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string(), fc.string({ unit: "binary" }), fc.constantFrom("$a.b:c-d_9", "")),
        (key) => {
          assert.equal(canonicalJson({ [key]: 1 }), `{${JSON.stringify(key)}:1}`);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("sorts keys by UTF-16 code units (as fast-json-stable-stringify does)", () => {
    assert.equal(
      canonicalJson({ b: 1, B: 2, a: 3, _: 4, "10": 5, "9": 6 }),
      '{"10":5,"9":6,"B":2,"_":4,"a":3,"b":1}',
    );
  });

  it("parses back to a value deep-equal to the input (property)", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        // JSON has no -0: compare with what JSON itself round-trips to.
        const expected = JSON.parse(JSON.stringify(value)) as unknown;
        assert.deepStrictEqual(
          JSON.parse(canonicalJson(value)),
          expected,
          "canonical JSON parses back to the value",
        );
      }),
      { numRuns: 300 },
    );
  });

  it("is invariant under key reordering (property)", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.integer(), (value, seed) => {
        assert.equal(
          canonicalJson(reorderKeys(value, seed)),
          canonicalJson(value),
          "same text for reordered keys",
        );
      }),
      { numRuns: 300 },
    );
  });

  it("is already canonical after one parse/write round (property)", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const once = canonicalJson(value);
        assert.equal(canonicalJson(JSON.parse(once)), once, "canonical text is a fixed point");
      }),
      { numRuns: 200 },
    );
  });
});
