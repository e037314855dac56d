import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  type Commit,
  type CommitCheck,
  precommitVote,
  signVote,
  type Validator,
  verifyCommit,
} from "../../../src/chain/index.ts";
import { hexToBytes, privateKeyToAddress, signObject } from "../../../src/crypto/index.ts";

const CHAIN_ID = 100;
const KEYS = [
  "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
  "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
  "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a",
  "0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6",
  "0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a",
].map((hex) => hexToBytes(hex));
const ADDRESSES = KEYS.map((key) => privateKeyToAddress(key));
const BLOCK_HASH = `0x${"ab".repeat(32)}`;
const OTHER_HASH = `0x${"cd".repeat(32)}`;

function key(i: number): Uint8Array {
  const k = KEYS[i];
  assert.ok(k !== undefined, `test key ${i} exists`);
  return k;
}

function validators(count: number, stake = 100): Validator[] {
  return ADDRESSES.slice(0, count).map((address) => ({ address, stake }));
}

function vote(signer: number, blockHash = BLOCK_HASH, height = 5, round = 0, chainId = CHAIN_ID): string {
  return signVote(precommitVote(chainId, height, round, blockHash), key(signer));
}

function commitOf(signatures: string[], blockHash = BLOCK_HASH): Commit {
  return { height: 5, round: 0, block_hash: blockHash, signatures };
}

function assertRejected(check: CommitCheck, pattern: RegExp): void {
  assert.ok(!check.ok, `expected the commit to be rejected (${pattern}), got ${JSON.stringify(check)}`);
  assert.match(check.message, pattern);
}

describe("verifyCommit", () => {
  it("accepts a single validator's precommit and returns the signer", () => {
    const check = verifyCommit(commitOf([vote(0)]), CHAIN_ID, validators(1));
    assert.deepEqual(check, { ok: true, signers: [ADDRESSES[0]] });
  });

  it("rejects a signature from a non-validator", () => {
    assertRejected(verifyCommit(commitOf([vote(0), vote(4)]), CHAIN_ID, validators(1)), /not a validator/);
  });

  it("rejects a duplicate signature", () => {
    const signature = vote(0);
    assertRejected(verifyCommit(commitOf([signature, signature]), CHAIN_ID, validators(1)), /voted twice/);
  });

  it("rejects a signature over another block hash", () => {
    assertRejected(
      verifyCommit(commitOf([vote(0, OTHER_HASH)]), CHAIN_ID, validators(1)),
      /bad vote signature/,
    );
  });

  it("rejects a signature for another height or round", () => {
    assertRejected(
      verifyCommit(commitOf([vote(0, BLOCK_HASH, 6)]), CHAIN_ID, validators(1)),
      /bad vote signature/,
    );
    assertRejected(
      verifyCommit(commitOf([vote(0, BLOCK_HASH, 5, 1)]), CHAIN_ID, validators(1)),
      /bad vote signature/,
    );
  });

  it("rejects a vote signed for another chain id", () => {
    const foreign = vote(0, BLOCK_HASH, 5, 0, CHAIN_ID + 1);
    assertRejected(verifyCommit(commitOf([foreign]), CHAIN_ID, validators(1)), /bad vote signature/);
  });

  it("rejects a signature over something other than the precommit vote", () => {
    const prevote = signObject(
      { type: "prevote", chain_id: CHAIN_ID, height: 5, round: 0, block_hash: BLOCK_HASH },
      key(0),
      CHAIN_ID,
    );
    assertRejected(verifyCommit(commitOf([prevote]), CHAIN_ID, validators(1)), /bad vote signature/);
  });

  it("rejects a commit with no signatures", () => {
    assertRejected(verifyCommit(commitOf([]), CHAIN_ID, validators(1)), /holds 0 of 100/);
  });

  it("rejects 1 of 2 equal validators (not more than 2/3 of the stake)", () => {
    assertRejected(verifyCommit(commitOf([vote(1)]), CHAIN_ID, validators(2)), /holds 100 of 200/);
  });

  it("rejects exactly 2/3 of the stake (2 of 3 equal validators)", () => {
    assertRejected(verifyCommit(commitOf([vote(0), vote(1)]), CHAIN_ID, validators(3)), /holds 200 of 300/);
  });

  it("accepts 3 of 4 equal validators and returns the signers sorted", () => {
    const check = verifyCommit(commitOf([vote(3), vote(0), vote(2)]), CHAIN_ID, validators(4));
    assert.ok(check.ok, `3 of 4 should pass, got ${JSON.stringify(check)}`);
    const expected = [ADDRESSES[3], ADDRESSES[0], ADDRESSES[2]].sort();
    assert.deepEqual(check.signers, expected, "signers sorted");
  });

  it("weighs by stake, not by count", () => {
    const weighted: Validator[] = [
      { address: ADDRESSES[0] ?? "", stake: 700 },
      { address: ADDRESSES[1] ?? "", stake: 100 },
      { address: ADDRESSES[2] ?? "", stake: 100 },
      { address: ADDRESSES[3] ?? "", stake: 100 },
    ];
    assert.ok(verifyCommit(commitOf([vote(0)]), CHAIN_ID, weighted).ok, "one validator with 70% passes");
    assertRejected(
      verifyCommit(commitOf([vote(1), vote(2), vote(3)]), CHAIN_ID, weighted),
      /holds 300 of 1000/,
    );
  });
});
