import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startTestNode, type TestNode } from "../helpers/testNode.ts";
import { assertInvalidParams, assertNoParamsForms, BAD_PARAM_CONTAINERS } from "./support.ts";

describe("net_syncing", () => {
  let t: TestNode;
  before(async () => {
    t = await startTestNode();
  });
  after(() => t?.stop()); // runs even when before() or a test fails

  it("is a Boolean, the same with params absent or {}", async () => {
    const [absent, empty] = await assertNoParamsForms(t, "net_syncing");
    assert.equal(typeof absent, "boolean");
    assert.equal(empty, absent);
  });

  it("is false on a dev node, which has nothing to catch up with", async () => {
    assert.equal(await t.result("net_syncing"), false);
  });

  it("refuses params other than an empty object with -32602", async () => {
    await assertInvalidParams(t, "net_syncing", [...BAD_PARAM_CONTAINERS, ["an unknown member", { x: 1 }]]);
  });
});
