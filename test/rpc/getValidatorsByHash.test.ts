import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { assertAddressList, type ConfirmedTxJson } from "../helpers/shapes.ts";
import type { TestNode } from "../helpers/testNode.ts";
import {
  accountAt,
  assertInvalidParams,
  BAD_HASHES,
  startSampleChain,
  invalidParamCases,
  UNKNOWN_HASH,
} from "./support.ts";

const METHOD = "chain_getValidatorsByHash";

describe(METHOD, () => {
  let t: TestNode;
  let sample: ConfirmedTxJson[][];
  let hashes: string[];
  before(async () => ({ t, sample, hashes } = await startSampleChain()));
  after(() => t?.stop()); // runs even when before() or a test fails

  it("is an Array of address Strings: the one dev validator, for every block", async () => {
    for (const [number, hash] of hashes.entries()) {
      const validators = await t.result(METHOD, { hash });
      assertAddressList(validators, `validators of block ${number}`);
      assert.deepEqual(validators, [accountAt(t, 0).address], `block ${number}`);
    }
  });

  it("agrees with chain_getValidatorsByNumber and accepts an upper-case hash", async () => {
    for (const [number, hash] of hashes.entries()) {
      const byNumber = await t.result("chain_getValidatorsByNumber", { number });
      assert.deepEqual(await t.result(METHOD, { hash }), byNumber, `block ${number}`);
      const upper = `0x${hash.slice(2).toUpperCase()}`;
      assert.deepEqual(
        await t.result(METHOD, { hash: upper }),
        byNumber,
        `block ${number} by upper-case hash`,
      );
    }
  });

  it("returns null for an unknown hash, and for a transaction's hash", async () => {
    assert.equal(await t.result(METHOD, { hash: UNKNOWN_HASH }), null);
    assert.equal(await t.result(METHOD, { hash: sample[0]?.[0]?.hash }), null);
  });

  it("refuses invalid params with -32602 invalid_params", async () => {
    await assertInvalidParams(t, METHOD, invalidParamCases({ hash: UNKNOWN_HASH }, { hash: BAD_HASHES }));
  });
});
