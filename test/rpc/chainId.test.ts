import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { assertRpcError, HASH_RE } from "../helpers/shapes.ts";
import { startTestNode, type TestNode } from "../helpers/testNode.ts";
import {
  accountAt,
  assertInvalidParams,
  assertNoParamsForms,
  BAD_PARAM_CONTAINERS,
  CHAIN_ID,
  submit,
  transfer,
} from "./support.ts";

describe("net_chainId", () => {
  let t: TestNode;
  before(async () => {
    t = await startTestNode();
  });
  after(() => t?.stop()); // runs even when before() or a test fails

  it("is a Number, the same with params absent or {}", async () => {
    const [absent, empty] = await assertNoParamsForms(t, "net_chainId");
    assert.equal(typeof absent, "number");
    assert.equal(empty, absent);
  });

  it("is the dev chain's id 100", async () => {
    assert.equal(await t.result("net_chainId"), CHAIN_ID);
  });

  it("is the chain id transactions must be signed for", async () => {
    const chainId = await t.result<number>("net_chainId");
    const sender = accountAt(t, 1);
    const to = accountAt(t, 2).address;
    assert.match(await submit(t, transfer(sender, to, 1, { chainId })), HASH_RE);
    const other = transfer(sender, to, 1, { chainId: chainId - 1 });
    assertRpcError(await t.call("chain_sendSignedTransaction", other), -32003, "wrong_chain_id");
  });

  it("refuses params other than an empty object with -32602", async () => {
    await assertInvalidParams(t, "net_chainId", [...BAD_PARAM_CONTAINERS, ["an unknown member", { x: 1 }]]);
  });
});
