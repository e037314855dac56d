import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { HeightVotes, type SignedVote, type VoteType } from "../../../src/consensus/index.ts";

const V = ["0xA", "0xB", "0xC", "0xD"];
const H1 = `0x${"1".repeat(64)}`;
const H2 = `0x${"2".repeat(64)}`;

function vote(type: VoteType, round: number, hash: string, tag = ""): SignedVote {
  return {
    vote: { type, chain_id: 1, height: 3, round, block_hash: hash },
    signature: `sig-${type}-${round}-${hash}-${tag}`,
  };
}

describe("HeightVotes", () => {
  const equal = () =>
    new HeightVotes(
      3,
      V.map((address) => ({ address, stake: 1 })),
    );

  it("needs more than two thirds of the stake for a quorum", () => {
    const votes = equal();
    votes.add(vote("prevote", 0, H1), "0xA");
    votes.add(vote("prevote", 0, H1), "0xB");
    assert.equal(votes.quorumFor("prevote", 0), undefined);
    votes.add(vote("prevote", 0, H1), "0xC");
    assert.equal(votes.quorumFor("prevote", 0), H1);
    assert.equal(votes.hasQuorumFor("prevote", 0, H1), true);
    assert.equal(votes.hasQuorumFor("precommit", 0, H1), false, "types are counted apart");
    assert.equal(votes.hasQuorumFor("prevote", 1, H1), false, "rounds are counted apart");
  });

  it("weighs votes by stake", () => {
    const votes = new HeightVotes(3, [
      { address: "0xA", stake: 70 },
      { address: "0xB", stake: 30 },
    ]);
    votes.add(vote("precommit", 0, H1), "0xA");
    assert.equal(votes.hasQuorumFor("precommit", 0, H1), true, "70 of 100 is more than 2/3");
    assert.deepEqual(votes.precommitSignatures(0, H1), [vote("precommit", 0, H1).signature]);
  });

  it("counts nil votes as a hash of their own, and any-quorum across hashes", () => {
    const votes = equal();
    votes.add(vote("prevote", 0, ""), "0xA");
    votes.add(vote("prevote", 0, H1), "0xB");
    votes.add(vote("prevote", 0, H2), "0xC");
    assert.equal(votes.quorumFor("prevote", 0), undefined);
    assert.equal(votes.hasQuorumAny("prevote", 0), true);
    votes.add(vote("prevote", 0, ""), "0xD");
    assert.equal(votes.hasQuorumAny("prevote", 0), true);
  });

  it("ignores a repeated vote and reports a conflicting one as evidence, counting only the first", () => {
    const votes = equal();
    assert.equal(votes.add(vote("prevote", 0, H1), "0xA").kind, "added");
    assert.equal(votes.add(vote("prevote", 0, H1), "0xA").kind, "duplicate");
    const result = votes.add(vote("prevote", 0, H2, "x"), "0xA");
    assert.equal(result.kind, "conflict");
    if (result.kind === "conflict") {
      assert.equal(result.evidence.validator, "0xA");
      assert.equal(result.evidence.first.vote.block_hash, H1);
      assert.equal(result.evidence.second.vote.block_hash, H2);
    }
    votes.add(vote("prevote", 0, H2), "0xB");
    votes.add(vote("prevote", 0, H2), "0xC");
    assert.equal(votes.hasQuorumFor("prevote", 0, H2), false, "A's second vote does not count");
  });

  it("sees more than a third of the stake in a later round", () => {
    const votes = equal();
    votes.add(vote("prevote", 2, H1), "0xA");
    assert.equal(votes.hasOneThirdAny(2), false);
    votes.add(vote("precommit", 2, ""), "0xB");
    assert.equal(votes.hasOneThirdAny(2), true);
  });

  it("refuses votes of non-validators", () => {
    assert.throws(() => equal().add(vote("prevote", 0, H1), "0xE"), /not a validator/);
  });
});
