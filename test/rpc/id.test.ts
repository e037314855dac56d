import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startTestNode, type TestNode } from "../helpers/testNode.ts";
import { assertInvalidParams, assertNoParamsForms, BAD_PARAM_CONTAINERS, NETWORK_ID } from "./support.ts";

describe("net_id", () => {
  let t: TestNode;
  before(async () => {
    t = await startTestNode();
  });
  after(() => t?.stop()); // runs even when before() or a test fails

  it("is a Number, the same with params absent or {}", async () => {
    const [absent, empty] = await assertNoParamsForms(t, "net_id");
    assert.equal(typeof absent, "number");
    assert.equal(empty, absent);
  });

  it("is 1 (test network) on a dev node, as its genesis says", async () => {
    assert.equal(await t.result("net_id"), NETWORK_ID);
    assert.equal(t.genesis.network_id, NETWORK_ID);
  });

  it("follows the genesis: a main-network genesis gives 0", async (ctx) => {
    const main = await startTestNode({ genesis: (g) => ({ ...g, network_id: 0 }) });
    ctx.after(() => main.stop());
    assert.equal(await main.result("net_id"), 0);
  });

  it("refuses params other than an empty object with -32602", async () => {
    await assertInvalidParams(t, "net_id", [...BAD_PARAM_CONTAINERS, ["an unknown member", { x: 1 }]]);
  });
});
