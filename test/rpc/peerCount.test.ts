import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startTestNode, type TestNode } from "../helpers/testNode.ts";
import { assertInvalidParams, assertNoParamsForms, BAD_PARAM_CONTAINERS } from "./support.ts";

describe("net_peerCount", () => {
  let t: TestNode;
  before(async () => {
    t = await startTestNode();
  });
  after(() => t?.stop()); // runs even when before() or a test fails

  it("is a non-negative integer Number, the same with params absent or {}", async () => {
    const [absent, empty] = await assertNoParamsForms(t, "net_peerCount");
    assert.equal(typeof absent, "number");
    assert.ok(Number.isSafeInteger(absent) && (absent as number) >= 0, `peer count ${String(absent)}`);
    assert.equal(empty, absent);
  });

  it("is 0 on a dev node, which has no peers", async () => {
    assert.equal(await t.result("net_peerCount"), 0);
  });

  it("refuses params other than an empty object with -32602", async () => {
    await assertInvalidParams(t, "net_peerCount", [...BAD_PARAM_CONTAINERS, ["an unknown member", { x: 1 }]]);
  });
});
