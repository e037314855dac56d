import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { signTx, startTestNode, type TestNode } from "../helpers/testNode.ts";
import {
  accountAt,
  addressForms,
  assertInvalidParams,
  BAD_ADDRESSES,
  commitOne,
  DEV_BALANCE,
  DEV_STAKE,
  invalidParamCases,
  UNKNOWN_ADDRESS,
  uniqueKey,
} from "./support.ts";

const METHOD = "chain_getConsensusStakeAmount";

describe(METHOD, () => {
  let t: TestNode;
  before(async () => {
    t = await startTestNode();
  });
  after(() => t?.stop()); // runs even when before() or a test fails

  it("is a Number: the validator's genesis stake 10^6, and 0 for the other accounts", async () => {
    for (const [i, { address }] of t.accounts.entries()) {
      const stake = await t.result(METHOD, { address });
      assert.equal(typeof stake, "number", `account ${i}`);
      assert.equal(stake, i === 0 ? DEV_STAKE : 0, `account ${i}`);
    }
  });

  it("is 0 for an address the chain has never seen", async () => {
    assert.equal(await t.result(METHOD, { address: UNKNOWN_ADDRESS }), 0);
  });

  it("accepts the address in any case", async () => {
    for (const [form, variant] of Object.entries(addressForms(accountAt(t, 0).address))) {
      assert.equal(await t.result(METHOD, { address: variant }), DEV_STAKE, `${form} ${variant}`);
    }
  });

  it("follows committed staking writes: a stake moves balance in, an unstake moves it back", async () => {
    const alice = accountAt(t, 1);
    const stake = (amount: number) =>
      signTx(alice.privateKey, {
        nonce: -1,
        operation: {
          type: "SET_VALUE",
          ref: `/staking/${alice.address}/${uniqueKey("s")}/value`,
          value: amount,
        },
      });
    await commitOne(t, stake(500));
    assert.equal(await t.result(METHOD, { address: alice.address }), 500);
    assert.equal(await t.result("chain_getBalance", { address: alice.address }), DEV_BALANCE - 500);
    await commitOne(t, stake(-200));
    assert.equal(await t.result(METHOD, { address: alice.address.toLowerCase() }), 300);
    assert.equal(await t.result("chain_getBalance", { address: alice.address }), DEV_BALANCE - 300);
    assert.equal(
      await t.result("chain_isValidator", { address: alice.address }),
      false,
      "300 < minimum stake",
    );
  });

  it("refuses invalid params with -32602 invalid_params", async () => {
    await assertInvalidParams(
      t,
      METHOD,
      invalidParamCases({ address: UNKNOWN_ADDRESS }, { address: BAD_ADDRESSES }),
    );
  });
});
