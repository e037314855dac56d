import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { verifyCommit } from "../../../src/chain/index.ts";
import type { ProposerSchedule } from "../../../src/consensus/index.ts";
import {
  hashOf,
  SCENARIO_CHAIN_ID,
  SCENARIO_TIMEOUTS as T,
  Scenario,
} from "../../helpers/consensusScenario.ts";

/**
 * The cases of Tendermint's Algorithm 1 (Buchman, Kwon, Milosevic 2018, "The latest gossip on BFT
 * consensus"), each played against one engine on a manual clock: the stub validators' messages are
 * written by the test, time moves only when the test moves it, and every assertion is about what
 * the engine signed, sent, committed or reported. Four validators of equal stake: any three are
 * more than 2/3, any two more than 1/3. Line numbers refer to the paper's Algorithm 1.
 */

/** The validator that proposes none of rounds 0..rounds-1 of height 1. */
const proposesNoneBelow =
  (rounds: number) =>
  (schedule: ProposerSchedule): string => {
    const proposers = new Set(Array.from({ length: rounds }, (_, r) => schedule.proposer(1, r)));
    const free = [0, 1, 2, 3, 4, 5]
      .map((r) => schedule.proposer(1, r))
      .find((address) => !proposers.has(address));
    if (free === undefined) throw new Error(`every validator proposes one of rounds 0..${rounds - 1}`);
    return free;
  };

/** Plays a scenario and always stops its engine. */
async function play(
  options: ConstructorParameters<typeof Scenario>[0],
  body: (s: Scenario) => Promise<void>,
) {
  const s = new Scenario(options);
  try {
    await s.start();
    await body(s);
  } finally {
    await s.stop();
  }
}

/** Round 0 up to our precommit for `block`: its proposal, then two other prevotes (a polka with ours). */
async function lockInRoundZero(s: Scenario, label = "A") {
  const block = s.block(1, label);
  const hash = hashOf(block);
  await s.deliver(s.proposal(block, 0));
  assert.equal(s.ourVote("prevote", 0), hash, "prevote for the round's valid proposal (line 24)");
  const [a, b] = s.others();
  await s.deliver(...s.votes([a!, b!], "prevote", 1, 0, hash));
  assert.equal(s.ourVote("precommit", 0), hash, "precommit on a polka: locked (lines 36-41)");
  return { block, hash };
}

/** Ends round `round` with nil precommits from the others: the precommit timeout moves us on. */
async function endRoundWithNilPrecommits(s: Scenario, round: number) {
  await s.deliver(...s.votes(s.others(), "precommit", 1, round, ""));
  const waited = await s.runUntil(`round ${round + 1}`, () => s.engine.status().round === round + 1);
  assert.equal(waited, T.voteMs + T.voteDeltaMs * round, "timeoutPrecommit(round) (lines 47, 65)");
}

describe("Tendermint scenarios on a manual clock (Algorithm 1)", () => {
  it("commits a proposal in round 0 with +2/3 precommits as the certificate (lines 22-54)", () =>
    play({ us: proposesNoneBelow(1) }, async (s) => {
      const { block, hash } = await lockInRoundZero(s);
      const [a, b] = s.others();
      await s.deliver(...s.votes([a!, b!], "precommit", 1, 0, hash));
      assert.equal(s.committed.length, 1);
      const [committed] = s.committed;
      assert.equal(hashOf(committed!.block), hash);
      assert.deepEqual(committed!.block, block);
      assert.equal(committed!.commit.round, 0);
      const check = verifyCommit(committed!.commit, SCENARIO_CHAIN_ID, s.validators);
      assert.ok(check.ok, "the certificate verifies");
      assert.equal(check.signers.length, 3);
      assert.equal(s.clock.now() - 1_700_000_000_000, 0, "no timeout was needed");
      // The next height starts after the block time, not before.
      await s.advance(T.commitMs - 1);
      assert.equal(s.engine.status().height, 2);
      assert.equal(s.built.length + s.ourProposals().length, 0, "height 2 waits out the block time");
      await s.advance(1);
      const ours = s.schedule.proposer(2, 0) === s.us.address;
      assert.equal(s.ourProposals().length, ours ? 1 : 0, "round 0 of height 2 began");
    }));

  it("a lone validator decides on its own votes at once, each height one block time apart (no vote timeout)", () =>
    // Its own prevote makes the polka and its own precommit the +2/3: the rules must be evaluated
    // again after its own votes, not only when a peer's vote or a timeout arrives (a lone validator
    // otherwise made one block per timeoutPrecommit).
    play({ stakes: [1_000] }, async (s) => {
      const started = s.clock.now();
      const elapsed = await s.runUntil("three heights", () => s.committed.length >= 3);
      assert.equal(s.committed.length, 3);
      for (const [i, { commit }] of s.committed.entries())
        assert.equal(commit.round, 0, `height ${i + 1}: round 0`);
      // Height 1 starts at once (start() let the block time pass); each later one a block time on.
      assert.equal(elapsed, 2 * T.commitMs, `took ${s.clock.now() - started} ms of simulated time`);
    }));

  it("locks on a polka and refuses to prevote another value in a later round (lines 22-27, 36-41)", () =>
    play({ us: proposesNoneBelow(2) }, async (s) => {
      const { hash } = await lockInRoundZero(s);
      await endRoundWithNilPrecommits(s, 0);
      const other = s.block(1, "B", s.schedule.proposer(1, 1));
      await s.deliver(s.proposal(other, 1));
      assert.equal(s.ourVote("prevote", 1), "", "locked on A: nil for B (line 27)");
      // Even a polka for B in round 1, after we prevoted nil, moves our lock only as line 36
      // says: we are in the prevote step, so we lock on B and precommit it.
      const [a, b, c] = s.others();
      await s.deliver(...s.votes([a!, b!, c!], "prevote", 1, 1, hashOf(other)));
      assert.equal(s.ourVote("precommit", 1), hashOf(other), "a later polka relocks (line 36)");
      assert.notEqual(hash, hashOf(other));
    }));

  it("unlocks on a proposal whose proof-of-lock round is at or above its lock (lines 28-33)", () =>
    play({ us: proposesNoneBelow(3) }, async (s) => {
      const { hash } = await lockInRoundZero(s);
      await endRoundWithNilPrecommits(s, 0);
      // Round 1: its proposer stays silent; we time out and prevote nil.
      const waited = await s.runUntil("our round-1 prevote", () => s.ourVote("prevote", 1) !== undefined);
      assert.equal(waited, T.proposeMs + T.proposeDeltaMs);
      assert.equal(s.ourVote("prevote", 1), "");
      // The others saw B proposed in round 1 and prevoted it: a polka we learn of only later.
      const other = s.block(1, "B", s.schedule.proposer(1, 1));
      const polka = s.votes(s.others(), "prevote", 1, 1, hashOf(other));
      await s.deliver(...s.votes(s.others(), "precommit", 1, 1, ""));
      await s.runUntil("round 2", () => s.engine.status().round === 2);
      // Round 2: B re-proposed with pol_round 1, and the round-1 prevotes that prove it.
      await s.deliver(s.proposal(other, 2, { polRound: 1 }));
      assert.equal(s.ourVote("prevote", 2), undefined, "no prevote before the proof arrives (line 28)");
      await s.deliver(...polka);
      assert.equal(s.ourVote("prevote", 2), hashOf(other), "locked in 0 <= pol_round 1: prevote B (line 30)");
      assert.notEqual(hashOf(other), hash);
    }));

  it("re-proposes its valid value with its proof-of-lock round (lines 14-19)", () =>
    play({ us: (schedule) => schedule.proposer(1, 1) }, async (s) => {
      const { block, hash } = await lockInRoundZero(s);
      assert.deepEqual(s.built, [], "not the proposer of round 0");
      await endRoundWithNilPrecommits(s, 0);
      const [proposal] = s.ourProposals();
      assert.ok(proposal, "we propose round 1");
      assert.equal(proposal.proposal.round, 1);
      assert.equal(proposal.proposal.pol_round, 0, "validRound");
      assert.equal(proposal.proposal.block_hash, hash, "validValue, not a new block");
      assert.deepEqual(proposal.block, block);
      assert.deepEqual(s.built, [], "nothing was built");
      // Our own prevote for it: we hold the round-0 polka that its pol_round points to (line 28).
      assert.equal(s.ourVote("prevote", 1), hash);
    }));

  it("grows each timeout by its delta every round (lines 57-65)", () =>
    play({ us: proposesNoneBelow(3) }, async (s) => {
      const [a, b, c] = s.others();
      for (let round = 0; round < 3; round++) {
        // No proposal: we prevote nil once timeoutPropose(round) has passed.
        const propose = await s.runUntil(`prevote ${round}`, () => s.ourVote("prevote", round) !== undefined);
        assert.equal(propose, T.proposeMs + T.proposeDeltaMs * round, `timeoutPropose(${round})`);
        assert.equal(s.ourVote("prevote", round), "");
        // +2/3 prevotes, but for no single value: we precommit nil once timeoutPrevote(round) passed.
        await s.deliver(
          s.vote(a!, "prevote", 1, round, ""),
          s.vote(b!, "prevote", 1, round, hashOf(s.block(1, "X"))),
        );
        const prevote = await s.runUntil(
          `precommit ${round}`,
          () => s.ourVote("precommit", round) !== undefined,
        );
        assert.equal(prevote, T.voteMs + T.voteDeltaMs * round, `timeoutPrevote(${round})`);
        assert.equal(s.ourVote("precommit", round), "");
        // +2/3 precommits of any kind: the next round once timeoutPrecommit(round) passed.
        await s.deliver(s.vote(c!, "precommit", 1, round, ""), s.vote(a!, "precommit", 1, round, ""));
        const precommit = await s.runUntil(`round ${round + 1}`, () => s.engine.status().round === round + 1);
        assert.equal(precommit, T.voteMs + T.voteDeltaMs * round, `timeoutPrecommit(${round})`);
      }
      assert.equal(s.committed.length, 0);
    }));

  it("precommits nil on +2/3 nil prevotes, and commits nothing on +2/3 nil precommits (lines 44-46)", () =>
    play({ us: proposesNoneBelow(2) }, async (s) => {
      const block = s.block(1, "A");
      await s.deliver(s.proposal(block, 0));
      assert.equal(s.ourVote("prevote", 0), hashOf(block));
      const started = s.clock.now();
      await s.deliver(...s.votes(s.others(), "prevote", 1, 0, ""));
      assert.equal(s.ourVote("precommit", 0), "", "nil at once, no timeout");
      assert.equal(s.clock.now(), started);
      await endRoundWithNilPrecommits(s, 0);
      assert.equal(s.committed.length, 0);
      assert.equal(s.engine.status().height, 1);
    }));

  it("prevotes nil for an invalid proposal (line 26)", () =>
    play({ us: proposesNoneBelow(1) }, async (s) => {
      const block = s.block(1, "bad");
      s.invalid.add(hashOf(block));
      await s.deliver(s.proposal(block, 0));
      assert.equal(s.ourVote("prevote", 0), "");
      // Even +2/3 precommits for it do not make us commit a block we judged invalid (line 49).
      await s.deliver(...s.votes(s.others(), "precommit", 1, 0, hashOf(block)));
      assert.equal(s.committed.length, 0);
    }));

  it("a proposal arriving after the prevote timeout gets no vote of ours, yet commits on +2/3 precommits (lines 49-54)", () =>
    play({ us: proposesNoneBelow(1) }, async (s) => {
      const [a, b, c] = s.others();
      await s.runUntil("propose timeout", () => s.ourVote("prevote", 0) !== undefined);
      assert.equal(s.ourVote("prevote", 0), "");
      const block = s.block(1, "late");
      await s.deliver(s.vote(a!, "prevote", 1, 0, hashOf(block)), s.vote(b!, "prevote", 1, 0, ""));
      await s.runUntil("prevote timeout", () => s.ourVote("precommit", 0) !== undefined);
      assert.equal(s.ourVote("precommit", 0), "");
      // Now the proposal arrives, and the others, who saw it in time, precommit it.
      await s.deliver(s.proposal(block, 0));
      assert.equal(s.ourVote("prevote", 0), "", "no second prevote");
      await s.deliver(...s.votes([a!, b!, c!], "precommit", 1, 0, hashOf(block)));
      assert.equal(s.committed.length, 1, "decided in any step once the proposal is held");
      assert.equal(hashOf(s.committed[0]!.block), hashOf(block));
      assert.equal(s.ourVote("precommit", 0), "", "still never signed for it");
    }));

  it("turns a validator's two different votes for one round into evidence, counting only the first", () =>
    play({ us: proposesNoneBelow(1) }, async (s) => {
      const [a, b] = s.others();
      const first = s.vote(a!, "prevote", 1, 0, hashOf(s.block(1, "A")));
      const second = s.vote(a!, "prevote", 1, 0, "");
      assert.deepEqual(await s.deliver(first, second), ["accept", "accept"]);
      assert.equal(s.evidence.length, 1);
      const [evidence] = s.evidence;
      assert.equal(evidence!.validator, a!.address);
      assert.deepEqual(evidence!.first.vote, first.vote);
      assert.deepEqual(evidence!.second.vote, second.vote);
      // a's nil prevote is not counted: with b's and ours (after the propose timeout) nil has 2/4,
      // not +2/3, so we precommit nil only after the prevote timeout, not at once.
      await s.deliver(s.vote(b!, "prevote", 1, 0, ""));
      await s.runUntil("our prevote", () => s.ourVote("prevote", 0) !== undefined);
      assert.equal(s.ourVote("prevote", 0), "");
      assert.equal(s.ourVote("precommit", 0), undefined, "no +2/3 nil prevotes");
      const waited = await s.runUntil("our precommit", () => s.ourVote("precommit", 0) !== undefined);
      assert.equal(waited, T.voteMs, "+2/3 of any prevotes (A, nil, nil): timeoutPrevote");
    }));

  it("takes a re-sent copy of a vote it holds without recovering its signer again", () =>
    play({ us: proposesNoneBelow(1) }, async (s) => {
      const [a] = s.others();
      const vote = s.vote(a!, "prevote", 1, 0, "");
      assert.deepEqual(await s.deliver(vote), ["accept"]);
      const recovered = s.recoveries;
      assert.deepEqual(await s.deliver(vote, vote), ["accept", "accept"]);
      assert.equal(s.recoveries, recovered, "copies are known by signature and body");
      // The same signature over another body is checked, and fails.
      const moved = { ...vote, vote: { ...vote.vote, round: 1 } };
      assert.deepEqual(await s.deliver(moved), ["reject"]);
      assert.equal(s.recoveries, recovered + 1);
    }));

  it("ignores late votes for a height already decided", () =>
    play({ us: proposesNoneBelow(1) }, async (s) => {
      const { hash } = await lockInRoundZero(s);
      const [a, b, c] = s.others();
      // Decided while the block is still being written: votes of the height are of no use now.
      const written = s.holdCommits();
      for (const vote of s.votes([a!, b!], "precommit", 1, 0, hash)) s.engine.receive(vote);
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(s.engine.status().height, 1, "the commit is under way");
      assert.equal(s.engine.receive(s.vote(c!, "precommit", 1, 0, hash)), "ignore", "during the commit");
      written();
      await s.settle();
      assert.equal(s.committed.length, 1);
      const late = [
        s.vote(c!, "precommit", 1, 0, hash),
        s.vote(c!, "prevote", 1, 0, ""),
        s.vote(c!, "precommit", 1, 3, ""),
      ];
      assert.deepEqual(await s.deliver(...late), ["ignore", "ignore", "ignore"]);
      await s.advance(T.commitMs);
      assert.deepEqual(
        await s.deliver(s.vote(a!, "precommit", 1, 0, "")),
        ["ignore"],
        "and after the next height began",
      );
      assert.equal(s.committed.length, 1);
      assert.deepEqual(s.evidence, []);
      assert.deepEqual(s.warnings, []);
      assert.equal(s.engine.status().height, 2);
    }));

  it("skips to a higher round once +1/3 of the stake votes in it, not before (line 55)", () =>
    play({ us: proposesNoneBelow(1) }, async (s) => {
      const [a, b] = s.others();
      await s.deliver(s.vote(a!, "prevote", 1, 5, ""));
      assert.equal(s.engine.status().round, 0, "1/4 of the stake is not +1/3");
      await s.deliver(s.vote(b!, "precommit", 1, 3, ""));
      assert.equal(s.engine.status().round, 0, "nor are 1/4 in round 3 and 1/4 in round 5: f+1 of one round");
      await s.deliver(s.vote(a!, "precommit", 1, 3, ""));
      assert.equal(s.engine.status().round, 3, "1/2 of the stake in round 3, prevotes and precommits alike");
      assert.equal(s.clock.now(), 1_700_000_000_000, "without waiting for any timeout");
      if (s.schedule.proposer(1, 3) !== s.us.address) {
        const waited = await s.runUntil("prevote in round 3", () => s.ourVote("prevote", 3) !== undefined);
        assert.equal(waited, T.proposeMs + T.proposeDeltaMs * 3, "round 3's own propose timeout");
      }
    }));

  it("takes only the first of two different proposals its proposer sends for one round", () =>
    play({ us: proposesNoneBelow(1) }, async (s) => {
      const first = s.block(1, "A");
      const second = s.block(1, "B");
      assert.deepEqual(await s.deliver(s.proposal(first, 0), s.proposal(second, 0)), ["accept", "accept"]);
      assert.equal(s.ourVote("prevote", 0), hashOf(first));
      // A polka and +2/3 precommits for the second cannot make us vote for it or commit it.
      const [a, b, c] = s.others();
      await s.deliver(...s.votes([a!, b!, c!], "prevote", 1, 0, hashOf(second)));
      assert.equal(s.ourVote("precommit", 0), undefined, "no polka for a proposal we hold");
      await s.deliver(...s.votes([a!, b!, c!], "precommit", 1, 0, hashOf(second)));
      assert.equal(s.committed.length, 0);
    }));

  it("rejects a proposal from a validator that is not the round's proposer, and bad signatures", () =>
    play({ us: proposesNoneBelow(1) }, async (s) => {
      const block = s.block(1, "A");
      const [wrong] = s.others().filter((a) => a.address !== s.schedule.proposer(1, 0));
      const forged = s.proposal(block, 0);
      const vote = s.vote(s.others()[0]!, "prevote", 1, 0, "");
      const tampered = { ...vote, vote: { ...vote.vote, round: 1 } };
      const otherChain = { ...forged, proposal: { ...forged.proposal, chain_id: SCENARIO_CHAIN_ID + 1 } };
      assert.deepEqual(
        await s.deliver(s.proposal(block, 0, { from: wrong!.address }), tampered, otherChain),
        ["reject", "reject", "reject"],
        "not the proposer; a signature over another body; another chain",
      );
      assert.equal(s.ourVote("prevote", 0), undefined);
    }));

  it("asks to sync when validators vote beyond the next height", () =>
    play({ us: proposesNoneBelow(1) }, async (s) => {
      const [a] = s.others();
      assert.deepEqual(await s.deliver(s.vote(a!, "prevote", 5, 0, "")), ["ignore"]);
      assert.deepEqual(s.behind, [5]);
    }));
});
