import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { hashOf, SCENARIO_TIMEOUTS as T, Scenario } from "../../helpers/consensusScenario.ts";

/**
 * ConsensusHost.stepTook, played on a manual clock (test/helpers/consensusScenario.ts): how long
 * each part of a height took, as the node's `consensus_step_duration_seconds` shows it. Four
 * validators of equal stake; "we" propose none of the rounds played.
 */

async function play(body: (s: Scenario) => Promise<void>): Promise<void> {
  const s = new Scenario({
    us: (schedule) => {
      const taken = new Set([0, 1].map((round) => schedule.proposer(1, round)));
      const free = [0, 1, 2, 3, 4, 5].map((r) => schedule.proposer(1, r)).find((a) => !taken.has(a));
      if (free === undefined) throw new Error("every validator proposes round 0 or 1");
      return free;
    },
  });
  try {
    await s.start();
    await body(s);
  } finally {
    await s.stop();
  }
}

describe("consensus step times (ConsensusHost.stepTook) on a manual clock", () => {
  it("tells each part of a decided height as it ends: propose, prevote, precommit, commit, then new_height", () =>
    play(async (s) => {
      const [a, b] = s.others();
      const begun = s.steps.length;
      await s.advance(120);
      const block = s.block(1, "A");
      const hash = hashOf(block);
      await s.deliver(s.proposal(block, 0));
      await s.advance(70);
      await s.deliver(...s.votes([a!, b!], "prevote", 1, 0, hash));
      await s.advance(40);
      // The commit is held while the clock moves on: its part is the time until it is stored.
      const stored = s.holdCommits();
      for (const vote of s.votes([a!, b!], "precommit", 1, 0, hash)) s.engine.receive(vote);
      await new Promise((resolve) => setImmediate(resolve));
      await s.clock.advance(25, async () => undefined);
      stored();
      await s.settle();
      assert.equal(s.committed.length, 1);
      assert.deepEqual(s.steps.slice(begun), [
        { step: "propose", ms: 120 },
        { step: "prevote", ms: 70 },
        { step: "precommit", ms: 40 },
        { step: "commit", ms: 25 },
      ]);
      // Height 2 waits out the block time from the head's timestamp: its new_height part.
      await s.advance(T.commitMs);
      const next = s.steps.slice(begun + 4);
      assert.equal(next[0]?.step, "new_height");
      assert.ok((next[0]?.ms ?? -1) >= 0 && (next[0]?.ms ?? 0) <= T.commitMs, `new_height ${next[0]?.ms} ms`);
    }));

  it("a round that times out ends its parts as the timeouts fire, and the next round's propose begins", () =>
    play(async (s) => {
      const begun = s.steps.length;
      // No proposal: the propose timeout, a nil prevote; then everyone's nil prevotes and precommits.
      await s.runUntil("our nil prevote", () => s.ourVote("prevote", 0) === "");
      await s.deliver(...s.votes(s.others(), "prevote", 1, 0, ""));
      assert.equal(s.ourVote("precommit", 0), "", "nil precommit on a nil polka");
      await s.deliver(...s.votes(s.others(), "precommit", 1, 0, ""));
      await s.runUntil("round 1", () => s.engine.status().round === 1);
      assert.deepEqual(
        s.steps.slice(begun).map((step) => step.step),
        ["propose", "prevote", "precommit"],
      );
      const [propose, prevote, precommit] = s.steps.slice(begun);
      assert.equal(propose?.ms, T.proposeMs, "the propose timeout ended round 0's propose");
      assert.equal(prevote?.ms, 0, "the nil polka came with the prevote: no wait");
      assert.equal(precommit?.ms, T.voteMs, "timeoutPrecommit(0) ended round 0");
      assert.equal(s.committed.length, 0);
    }));
});
