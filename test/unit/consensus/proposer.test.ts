import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Validator } from "../../../src/chain/index.ts";
import { ProposerSchedule } from "../../../src/consensus/index.ts";

const A = "0x000000000000000000000000000000000000000A";
const B = "0x000000000000000000000000000000000000000b";
const C = "0x000000000000000000000000000000000000000C";

function counts(schedule: ProposerSchedule, heights: number, round = 0): Map<string, number> {
  const seen = new Map<string, number>();
  for (let h = 1; h <= heights; h++) {
    const p = schedule.proposer(h, round);
    seen.set(p, (seen.get(p) ?? 0) + 1);
  }
  return seen;
}

describe("ProposerSchedule", () => {
  it("rotates evenly among equal stakes", () => {
    const set: Validator[] = [A, B, C].map((address) => ({ address, stake: 10 }));
    const seen = counts(new ProposerSchedule(() => set), 300);
    assert.deepEqual([...seen.values()], [100, 100, 100]);
  });

  it("proposes in proportion to stake", () => {
    const set: Validator[] = [
      { address: A, stake: 1 },
      { address: B, stake: 2 },
      { address: C, stake: 7 },
    ];
    const seen = counts(new ProposerSchedule(() => set), 1000);
    assert.equal(seen.get(A), 100);
    assert.equal(seen.get(B), 200);
    assert.equal(seen.get(C), 700);
  });

  it("is deterministic, also when asked out of order or by a fresh schedule", () => {
    const set: Validator[] = [
      { address: A, stake: 3 },
      { address: B, stake: 5 },
      { address: C, stake: 11 },
    ];
    const first = new ProposerSchedule(() => set);
    const forward = Array.from({ length: 50 }, (_, i) => first.proposer(i + 1, i % 3));
    const second = new ProposerSchedule(() => set);
    const backward = Array.from({ length: 50 }, (_, i) => second.proposer(50 - i, (49 - i) % 3)).reverse();
    assert.deepEqual(backward, forward);
  });

  it("gives later rounds of a height other proposers", () => {
    const set: Validator[] = [A, B, C].map((address) => ({ address, stake: 10 }));
    const schedule = new ProposerSchedule(() => set);
    const rounds = new Set([0, 1, 2].map((r) => schedule.proposer(5, r)));
    assert.equal(rounds.size, 3);
  });

  it("puts a newcomer at the back, then in its share", () => {
    const before: Validator[] = [A, B].map((address) => ({ address, stake: 10 }));
    const afterJoin: Validator[] = [A, B, C].map((address) => ({ address, stake: 10 }));
    const schedule = new ProposerSchedule((h) => (h < 10 ? before : afterJoin));
    assert.notEqual(schedule.proposer(10, 0), C, "not first at the height it joins");
    const seen = new Map<string, number>();
    for (let h = 10; h < 310; h++) {
      const p = schedule.proposer(h, 0);
      seen.set(p, (seen.get(p) ?? 0) + 1);
    }
    assert.ok(Math.abs((seen.get(C) ?? 0) - 100) <= 2, `C proposes about a third: ${seen.get(C)}`);
  });
});
