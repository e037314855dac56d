import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { BuildBudget } from "../../../src/consensus/buildBudget.ts";

describe("BuildBudget", () => {
  it("starts small, then fits the measured rate into the budget", () => {
    const budget = new BuildBudget({ budgetMs: 1000, initialTxs: 500 });
    assert.equal(budget.limit(), 500, "nothing timed yet");
    budget.record(1000, 500); // 2 tx/ms
    assert.equal(budget.limit(), 2000);
  });

  it("follows a slower machine down, but never below the minimum", () => {
    const budget = new BuildBudget({ budgetMs: 1000, minTxs: 100 });
    budget.record(1000, 250); // 4 tx/ms
    for (let i = 0; i < 30; i++) budget.record(1000, 20_000); // 0.05 tx/ms
    assert.equal(budget.limit(), 100, "0.05 tx/ms × 1000 ms = 50, raised to the minimum");
  });

  it("weighs the newest measurement without forgetting the past at once", () => {
    const budget = new BuildBudget({ budgetMs: 1000 });
    budget.record(1000, 1000); // 1 tx/ms
    budget.record(2000, 1000); // 2 tx/ms
    // 0.7 × 1 + 0.3 × 2 = 1.3 tx/ms; floored, and 1.3 is not exact in binary.
    assert.ok([1299, 1300].includes(budget.limit()), `${budget.limit()}`);
  });

  it("ignores executions too small or too fast to time", () => {
    const budget = new BuildBudget({ budgetMs: 1000, initialTxs: 500 });
    budget.record(10, 1);
    budget.record(1000, 0);
    assert.equal(budget.limit(), 500);
  });
});
