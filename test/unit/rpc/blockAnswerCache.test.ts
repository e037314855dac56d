import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { BlockAnswerCache } from "../../../src/rpc/blockAnswerCache.ts";

describe("BlockAnswerCache", () => {
  it("builds an answer once per number and flag, and serializes it as JSON.stringify would", () => {
    const cache = new BlockAnswerCache();
    let builds = 0;
    const build = () => {
      builds++;
      return { number: 7, transactions: ["0xab"] };
    };
    const first = cache.get(7, false, build);
    const second = cache.get(7, false, build);
    assert.equal(first, second);
    assert.equal(builds, 1);
    assert.equal(first?.text(), JSON.stringify({ number: 7, transactions: ["0xab"] }));
    assert.equal(first?.size, Buffer.byteLength(first?.text() ?? ""));
    cache.get(7, true, build); // the other flag is another answer
    assert.equal(builds, 2);
  });

  it("never caches a missing block: a height answered null now gets its block later", () => {
    const cache = new BlockAnswerCache();
    assert.equal(
      cache.get(9, false, () => undefined),
      null,
    );
    assert.equal(cache.size, 0);
    assert.equal(cache.get(9, false, () => ({ number: 9 }))?.text(), '{"number":9}');
  });

  it("keeps at most maxEntries, dropping the least recently used", () => {
    const cache = new BlockAnswerCache(2, 1 << 20);
    let builds = 0;
    const build = (n: number) => () => {
      builds++;
      return { n };
    };
    cache.get(1, false, build(1));
    cache.get(2, false, build(2));
    cache.get(1, false, build(1)); // 1 is now the most recent
    cache.get(3, false, build(3)); // evicts 2
    assert.equal(cache.size, 2);
    assert.equal(builds, 3);
    cache.get(1, false, build(1));
    assert.equal(builds, 3, "1 was kept");
    cache.get(2, false, build(2));
    assert.equal(builds, 4, "2 was evicted and built again");
  });

  it("keeps the cached text within maxBytes, and does not cache one answer over a quarter of it", () => {
    const cache = new BlockAnswerCache(1_000, 400);
    for (let n = 0; n < 20; n++) cache.get(n, false, () => ({ pad: "x".repeat(80) }));
    assert.ok(cache.size <= 4, `size ${cache.size}`);
    const big = cache.get(100, false, () => ({ pad: "y".repeat(200) }));
    assert.ok(big !== null && big.size > 100);
    let rebuilt = false;
    cache.get(100, false, () => {
      rebuilt = true;
      return { pad: "" };
    });
    assert.ok(rebuilt, "an answer over maxBytes / 4 is served but not kept");
  });
});
