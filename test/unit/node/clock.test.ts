import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { nodeClock } from "../../../src/node/clock.ts";

describe("nodeClock (CHAIN_NODE_CLOCK_SKEW_MS)", () => {
  it("is the real clock when the variable is unset, empty or zero", () => {
    for (const env of [{}, { CHAIN_NODE_CLOCK_SKEW_MS: "" }, { CHAIN_NODE_CLOCK_SKEW_MS: "0" }]) {
      assert.equal(nodeClock(env), Date.now, JSON.stringify(env));
    }
  });

  it("offsets the clock by a positive or negative skew", () => {
    for (const skew of [30_000, -30_000]) {
      const clock = nodeClock({ CHAIN_NODE_CLOCK_SKEW_MS: String(skew) });
      const before = Date.now();
      const now = clock();
      const after = Date.now();
      assert.ok(now >= before + skew && now <= after + skew, `skew ${skew}`);
    }
  });

  it("refuses a value that is not an integer", () => {
    for (const raw of ["1.5", "abc", "10s", "1e3", "99999999999999999999"]) {
      assert.throws(() => nodeClock({ CHAIN_NODE_CLOCK_SKEW_MS: raw }), /CHAIN_NODE_CLOCK_SKEW_MS/, raw);
    }
  });
});
