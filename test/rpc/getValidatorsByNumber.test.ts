import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { assertAddressList } from "../helpers/shapes.ts";
import type { TestNode } from "../helpers/testNode.ts";
import {
  accountAt,
  assertInvalidParams,
  BAD_NUMBERS,
  startSampleChain,
  invalidParamCases,
} from "./support.ts";

const METHOD = "chain_getValidatorsByNumber";

describe(METHOD, () => {
  let t: TestNode;
  before(async () => ({ t } = await startSampleChain()));
  after(() => t?.stop()); // runs even when before() or a test fails

  it("is an Array of address Strings: the one dev validator, for every block", async () => {
    for (let number = 0; number <= 2; number++) {
      const validators = await t.result(METHOD, { number });
      assertAddressList(validators, `validators of block ${number}`);
      assert.deepEqual(validators, [accountAt(t, 0).address], `block ${number}`);
    }
  });

  it("agrees with the block's validators member", async () => {
    for (let number = 0; number <= 2; number++) {
      const block = await t.result<{ validators: string[] }>("chain_getBlockByNumber", { number });
      assert.deepEqual(await t.result(METHOD, { number }), block.validators, `block ${number}`);
    }
  });

  it("returns null for a number beyond the head", async () => {
    assert.equal(await t.result(METHOD, { number: 3 }), null);
    assert.equal(await t.result(METHOD, { number: Number.MAX_SAFE_INTEGER }), null);
  });

  it("refuses invalid params with -32602 invalid_params", async () => {
    await assertInvalidParams(t, METHOD, invalidParamCases({ number: 1 }, { number: BAD_NUMBERS }));
  });
});
