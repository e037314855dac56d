import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startTestNode, type TestNode } from "../helpers/testNode.ts";
import {
  accountAt,
  addressForms,
  assertInvalidParams,
  BAD_ADDRESSES,
  commitBatch,
  commitOne,
  invalidParamCases,
  transfer,
  UNKNOWN_ADDRESS,
  userWrite,
} from "./support.ts";

const METHOD = "chain_getNonce";

describe(METHOD, () => {
  let t: TestNode;
  before(async () => {
    t = await startTestNode();
  });
  after(() => t?.stop()); // runs even when before() or a test fails

  it("is a Number, 0 for every account of a fresh chain and for an unknown address", async () => {
    for (const [i, { address }] of t.accounts.entries()) {
      const nonce = await t.result(METHOD, { address });
      assert.equal(typeof nonce, "number", `account ${i}`);
      assert.equal(nonce, 0, `account ${i}`);
    }
    assert.equal(await t.result(METHOD, { address: UNKNOWN_ADDRESS }), 0);
  });

  it("counts committed ordered transactions: the nonce the next one must carry", async () => {
    const [alice, bob] = [accountAt(t, 1), accountAt(t, 2)];
    await commitOne(t, transfer(alice, bob.address, 1, { nonce: 0 }));
    assert.equal(await t.result(METHOD, { address: alice.address }), 1);
    await commitBatch(t, [
      transfer(alice, bob.address, 1, { nonce: 1 }),
      userWrite(alice, "two", 2),
      transfer(alice, bob.address, 1, { nonce: 3 }),
    ]);
    assert.equal(await t.result(METHOD, { address: alice.address }), 4);
    assert.equal(await t.result(METHOD, { address: bob.address }), 0, "receiving does not count");
  });

  it("does not count unordered (nonce -1) transactions", async () => {
    const carol = accountAt(t, 3);
    await commitOne(t, userWrite(carol, "unordered"));
    assert.equal(await t.result(METHOD, { address: carol.address }), 0);
  });

  it("accepts the address in any case", async () => {
    for (const [form, variant] of Object.entries(addressForms(accountAt(t, 1).address))) {
      assert.equal(await t.result(METHOD, { address: variant }), 4, `${form} ${variant}`);
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
