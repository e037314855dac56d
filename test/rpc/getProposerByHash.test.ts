import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { ADDRESS_RE, type ConfirmedTxJson } from "../helpers/shapes.ts";
import type { TestNode } from "../helpers/testNode.ts";
import {
  accountAt,
  assertInvalidParams,
  BAD_HASHES,
  startSampleChain,
  invalidParamCases,
  UNKNOWN_HASH,
} from "./support.ts";

const METHOD = "chain_getProposerByHash";

describe(METHOD, () => {
  let t: TestNode;
  let sample: ConfirmedTxJson[][];
  let hashes: string[];
  before(async () => ({ t, sample, hashes } = await startSampleChain()));
  after(() => t?.stop()); // runs even when before() or a test fails

  it("is the validator's address (a String) for every produced block", async () => {
    for (const number of [1, 2]) {
      const proposer = await t.result(METHOD, { hash: hashes[number] });
      assert.equal(typeof proposer, "string", `block ${number}`);
      assert.match(proposer as string, ADDRESS_RE, `block ${number}`);
      assert.equal(proposer, accountAt(t, 0).address, `block ${number}: dev account 0 proposes`);
    }
  });

  it("agrees with chain_getProposerByNumber, genesis included, and accepts an upper-case hash", async () => {
    for (const [number, hash] of hashes.entries()) {
      const byNumber = await t.result("chain_getProposerByNumber", { number });
      assert.equal(await t.result(METHOD, { hash }), byNumber, `block ${number}`);
      const upper = `0x${hash.slice(2).toUpperCase()}`;
      assert.equal(await t.result(METHOD, { hash: upper }), byNumber, `block ${number} by upper-case hash`);
    }
  });

  it("returns null for an unknown hash, and for a transaction's hash", async () => {
    assert.equal(await t.result(METHOD, { hash: UNKNOWN_HASH }), null);
    assert.equal(await t.result(METHOD, { hash: sample[1]?.[0]?.hash }), null);
  });

  it("refuses invalid params with -32602 invalid_params", async () => {
    await assertInvalidParams(t, METHOD, invalidParamCases({ hash: UNKNOWN_HASH }, { hash: BAD_HASHES }));
  });
});
