import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ProposerSchedule } from "../../../src/consensus/index.ts";
import { hashOf, SCENARIO_TIMEOUTS as T, Scenario } from "../../helpers/consensusScenario.ts";

/**
 * The busy block time (ConsensusTimeouts.busyBlockMs, docs/decisions/016), on a manual clock: a
 * proposer whose pool holds transactions proposes busyBlockMs after the head's timestamp instead
 * of waiting out the whole block time; the others begin round 0 when that proposal arrives. An
 * idle chain keeps making one block per block time. Four validators of equal stake.
 */

/** A stub validator proposes height 1; we propose round 0 of height 2 (or not, per `weProposeTwo`). */
const picking =
  (weProposeTwo: boolean) =>
  (schedule: ProposerSchedule): string => {
    const first = schedule.proposer(1, 0);
    const second = schedule.proposer(2, 0);
    if (weProposeTwo) return second;
    const other = [0, 1, 2, 3, 4, 5, 6, 7]
      .map((r) => schedule.proposer(1, r))
      .find((a) => a !== first && a !== second);
    if (other === undefined)
      throw new Error("no validator proposes neither height 1 nor height 2 in round 0");
    return other;
  };

async function play(weProposeTwo: boolean, body: (s: Scenario) => Promise<void>) {
  const s = new Scenario({ us: picking(weProposeTwo) });
  try {
    await s.start();
    await body(s);
  } finally {
    await s.stop();
  }
}

/** Height 1 decided in round 0 from a stub proposer's block; returns when it committed. */
async function commitHeightOne(s: Scenario): Promise<number> {
  const block = s.block(1, "one");
  const hash = hashOf(block);
  const [a, b] = s.others().filter((o) => o.address !== s.us.address);
  await s.deliver(s.proposal(block, 0));
  await s.deliver(...s.votes([a!, b!], "prevote", 1, 0, hash));
  await s.deliver(...s.votes([a!, b!], "precommit", 1, 0, hash));
  assert.equal(s.committed.length, 1, "height 1 committed");
  assert.equal(s.engine.status().height, 2);
  return s.clock.now();
}

describe("busy block time: early proposals while transactions wait (manual clock)", () => {
  it("a proposer holding transactions proposes busyBlockMs after the head, not a block time after", () =>
    play(true, async (s) => {
      s.pending = true;
      await commitHeightOne(s);
      await s.advance(T.busyBlockMs - 1);
      assert.equal(s.ourProposals().length, 0, "not before the busy block time");
      await s.advance(1);
      assert.equal(s.ourProposals().length, 1, "proposed at the busy block time");
      assert.equal(s.ourProposals()[0]?.proposal.height, 2);
      assert.equal(s.ourVote("prevote", 0, 2), s.ourProposals()[0]?.proposal.block_hash, "and prevoted it");
    }));

  it("with an empty pool it waits out the whole block time (an idle chain: one block per block time)", () =>
    play(true, async (s) => {
      s.pending = false;
      await commitHeightOne(s);
      await s.advance(T.commitMs - 1);
      assert.equal(s.ourProposals().length, 0, "no early proposal without transactions");
      await s.advance(1);
      assert.equal(s.ourProposals().length, 1, "proposed at the block time");
    }));

  it("transactions arriving after the busy block time make a waiting proposer propose at once", () =>
    play(true, async (s) => {
      s.pending = false;
      await commitHeightOne(s);
      await s.advance(T.busyBlockMs + 100);
      s.engine.transactionsArrived();
      await s.settle();
      assert.equal(s.ourProposals().length, 0, "an arrival that left the pool empty changes nothing");
      s.pending = true;
      s.engine.transactionsArrived();
      await s.settle();
      assert.equal(s.ourProposals().length, 1, "proposed on the arrival, before the block time");
    }));

  it("transactions arriving before the busy block time wait for it", () =>
    play(true, async (s) => {
      s.pending = false;
      await commitHeightOne(s);
      await s.advance(T.busyBlockMs - 100);
      s.pending = true;
      s.engine.transactionsArrived();
      await s.settle();
      assert.equal(s.ourProposals().length, 0, "not before the busy block time");
      await s.advance(100);
      assert.equal(s.ourProposals().length, 1, "at the busy block time");
    }));

  it("a validator that is not the proposer begins round 0 when an early proposal arrives, and prevotes it", () =>
    play(false, async (s) => {
      s.pending = true; // our own pool holds transactions: not ours to propose, so nothing early
      const committedAt = await commitHeightOne(s);
      await s.advance(T.busyBlockMs);
      assert.equal(s.ourProposals().length, 0);
      assert.equal(s.ourVote("prevote", 0, 2), undefined, "nothing sent before the proposal");
      const block = s.block(2, "two");
      await s.deliver(s.proposal(block, 0));
      assert.equal(s.ourVote("prevote", 0, 2), hashOf(block), "prevoted at once");
      assert.ok(s.clock.now() - committedAt < T.commitMs, "before our own block time was up");
    }));

  it("a proposal of the next height that arrived before our commit is prevoted right after it", () =>
    play(false, async (s) => {
      // The proposer of height 2 committed height 1 first and proposed: its proposal reaches us
      // while we still wait for height 1's last precommit.
      const one = s.block(1, "one");
      const oneHash = hashOf(one);
      const [a, b] = s.others();
      await s.deliver(s.proposal(one, 0));
      await s.deliver(...s.votes([a!, b!], "prevote", 1, 0, oneHash));
      const two = s.block(2, "two");
      await s.deliver(s.proposal(two, 0));
      assert.equal(s.ourVote("prevote", 0, 2), undefined, "held while at height 1");
      await s.deliver(...s.votes([a!, b!], "precommit", 1, 0, oneHash));
      assert.equal(s.committed.length, 1);
      assert.equal(s.ourVote("prevote", 0, 2), hashOf(two), "prevoted right after the commit");
    }));

  it("an early proposal and its votes commit the next height well inside one block time", () =>
    play(false, async (s) => {
      const committedAt = await commitHeightOne(s);
      await s.advance(T.busyBlockMs);
      const block = s.block(2, "two");
      const hash = hashOf(block);
      const [a, b] = s.others();
      await s.deliver(s.proposal(block, 0));
      await s.deliver(...s.votes([a!, b!], "prevote", 2, 0, hash));
      assert.equal(s.ourVote("precommit", 0, 2), hash);
      await s.deliver(...s.votes([a!, b!], "precommit", 2, 0, hash));
      assert.equal(s.committed.length, 2);
      assert.equal(s.clock.now() - committedAt, T.busyBlockMs, "height 2 took the busy block time");
    }));
});
