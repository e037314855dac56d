import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { ADDRESS_RE } from "../helpers/shapes.ts";
import type { TestNode } from "../helpers/testNode.ts";
import {
  accountAt,
  assertInvalidParams,
  BAD_NUMBERS,
  startSampleChain,
  invalidParamCases,
} from "./support.ts";

const METHOD = "chain_getProposerByNumber";

describe(METHOD, () => {
  let t: TestNode;
  before(async () => ({ t } = await startSampleChain()));
  after(() => t?.stop()); // runs even when before() or a test fails

  it("is the validator's address (a String) for every produced block", async () => {
    for (const number of [1, 2]) {
      const proposer = await t.result(METHOD, { number });
      assert.equal(typeof proposer, "string", `block ${number}`);
      assert.match(proposer as string, ADDRESS_RE, `block ${number}`);
      assert.equal(proposer, accountAt(t, 0).address, `block ${number}: dev account 0 proposes`);
    }
  });

  it("agrees with the block's proposer member, genesis included", async () => {
    for (let number = 0; number <= 2; number++) {
      const block = await t.result<{ proposer: string }>("chain_getBlockByNumber", { number });
      const proposer = await t.result(METHOD, { number });
      assert.match(proposer as string, ADDRESS_RE, `block ${number}`);
      assert.equal(proposer, block.proposer, `block ${number}`);
    }
  });

  it("returns null for a number beyond the head", async () => {
    assert.equal(await t.result(METHOD, { number: 3 }), null);
    assert.equal(await t.result(METHOD, { number: 2 ** 40 }), null);
  });

  it("refuses invalid params with -32602 invalid_params", async () => {
    await assertInvalidParams(t, METHOD, invalidParamCases({ number: 1 }, { number: BAD_NUMBERS }));
  });
});
