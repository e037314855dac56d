import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startTestNode, type TestNode } from "../helpers/testNode.ts";
import {
  accountAt,
  addressForms,
  assertInvalidParams,
  BAD_ADDRESSES,
  invalidParamCases,
  UNKNOWN_ADDRESS,
} from "./support.ts";

const METHOD = "chain_isValidator";

describe(METHOD, () => {
  let t: TestNode;
  before(async () => {
    t = await startTestNode();
  });
  after(() => t?.stop()); // runs even when before() or a test fails

  it("is a Boolean: true for the dev validator (account 0) only", async () => {
    for (const [i, { address }] of t.accounts.entries()) {
      const isValidator = await t.result(METHOD, { address });
      assert.equal(typeof isValidator, "boolean", `account ${i}`);
      assert.equal(isValidator, i === 0, `account ${i}`);
    }
  });

  it("is false for an address the chain has never seen", async () => {
    assert.equal(await t.result(METHOD, { address: UNKNOWN_ADDRESS }), false);
  });

  it("accepts the address in any case", async () => {
    for (const [form, variant] of Object.entries(addressForms(accountAt(t, 0).address))) {
      assert.equal(await t.result(METHOD, { address: variant }), true, `${form} ${variant}`);
    }
    for (const [form, variant] of Object.entries(addressForms(accountAt(t, 1).address))) {
      assert.equal(await t.result(METHOD, { address: variant }), false, `${form} ${variant}`);
    }
  });

  it("agrees with the validators of the most recent block", async () => {
    const validators = await t.result<string[]>("chain_getValidatorsByNumber", {
      number: await t.result<number>("chain_getRecentBlockNumber"),
    });
    for (const address of validators) assert.equal(await t.result(METHOD, { address }), true, address);
  });

  it("refuses invalid params with -32602 invalid_params", async () => {
    await assertInvalidParams(
      t,
      METHOD,
      invalidParamCases({ address: UNKNOWN_ADDRESS }, { address: BAD_ADDRESSES }),
    );
  });
});
