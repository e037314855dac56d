import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { after, before, describe, it } from "node:test";
import { assertNodeInfo } from "../helpers/shapes.ts";
import { startTestNode, type TestNode } from "../helpers/testNode.ts";
import { assertInvalidParams, assertNoParamsForms, BAD_PARAM_CONTAINERS } from "./support.ts";

const PACKAGE_VERSION = (
  JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }
).version;

describe("net_nodeInfo", () => {
  let t: TestNode;
  before(async () => {
    t = await startTestNode();
  });
  after(() => t?.stop()); // runs even when before() or a test fails

  it("is {name, location, version}, all Strings, the same with params absent or {}", async () => {
    const [absent, empty] = await assertNoParamsForms(t, "net_nodeInfo");
    assertNodeInfo(absent);
    assert.deepEqual(empty, absent);
  });

  it("defaults to the host name, an empty location and the package version (DESIGN.md §10)", async () => {
    const info = await t.result("net_nodeInfo");
    assertNodeInfo(info);
    assert.equal(info.name, hostname());
    assert.equal(info.location, "");
    assert.equal(info.version, PACKAGE_VERSION);
  });

  it("refuses params other than an empty object with -32602", async () => {
    await assertInvalidParams(t, "net_nodeInfo", [...BAD_PARAM_CONTAINERS, ["an unknown member", { x: 1 }]]);
  });
});
