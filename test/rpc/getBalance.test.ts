import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startTestNode, type TestNode } from "../helpers/testNode.ts";
import {
  accountAt,
  addressForms,
  assertInvalidParams,
  BAD_ADDRESSES,
  commitOne,
  DEV_BALANCE,
  invalidParamCases,
  transfer,
  UNKNOWN_ADDRESS,
} from "./support.ts";

const METHOD = "chain_getBalance";

describe(METHOD, () => {
  let t: TestNode;
  before(async () => {
    t = await startTestNode();
  });
  after(() => t?.stop()); // runs even when before() or a test fails

  it("is a Number: the genesis balance 10^12 of each dev account", async () => {
    for (const [i, { address }] of t.accounts.entries()) {
      const balance = await t.result(METHOD, { address });
      assert.equal(typeof balance, "number", `account ${i}`);
      assert.equal(balance, DEV_BALANCE, `account ${i}`);
    }
  });

  it("is 0 for an address the chain has never seen", async () => {
    assert.equal(await t.result(METHOD, { address: UNKNOWN_ADDRESS }), 0);
  });

  it("accepts the address in any case", async () => {
    const { address } = accountAt(t, 3);
    for (const [form, variant] of Object.entries(addressForms(address))) {
      assert.equal(await t.result(METHOD, { address: variant }), DEV_BALANCE, `${form} ${variant}`);
    }
  });

  it("moves a committed transfer's amount from sender to receiver", async () => {
    const [alice, bob] = [accountAt(t, 1), accountAt(t, 2)];
    await commitOne(t, transfer(alice, bob.address.toLowerCase(), 12_345));
    assert.equal(await t.result(METHOD, { address: alice.address }), DEV_BALANCE - 12_345);
    assert.equal(await t.result(METHOD, { address: bob.address }), DEV_BALANCE + 12_345);
    assert.equal(await t.result(METHOD, { address: bob.address.toLowerCase() }), DEV_BALANCE + 12_345);
  });

  it("credits a transfer to a new address", async () => {
    await commitOne(t, transfer(accountAt(t, 4), UNKNOWN_ADDRESS, 99));
    for (const [form, variant] of Object.entries(addressForms(UNKNOWN_ADDRESS))) {
      assert.equal(await t.result(METHOD, { address: variant }), 99, form);
    }
  });

  it("refuses invalid params with -32602 invalid_params", async () => {
    await assertInvalidParams(
      t,
      METHOD,
      invalidParamCases({ address: UNKNOWN_ADDRESS }, { address: BAD_ADDRESSES }),
    );
  });
});
