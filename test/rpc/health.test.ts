import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startTestNode, type TestNode } from "../helpers/testNode.ts";
import { accountAt, submit, transfer, waitForCommit } from "./support.ts";

/** GET /health, GET /ready and GET /metrics on the RPC port (docs/monitoring.md). */

const get = async (t: TestNode, path: string, method = "GET") => {
  const response = await fetch(t.url + path, { method });
  const text = await response.text();
  return { status: response.status, type: response.headers.get("content-type") ?? "", text };
};

/** The value of one sample of the Prometheus text format: `name{labels} value`. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split("\n")) {
    const match = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})?\s+(\S+)$/.exec(line);
    if (match?.[1] !== name) continue;
    const found = Object.fromEntries(
      [...(match[2] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]),
    );
    if (Object.entries(labels).every(([key, value]) => found[key] === value)) return Number(match[3]);
  }
  return undefined;
}

describe("health and readiness", () => {
  let t: TestNode;
  before(async () => {
    t = await startTestNode();
  });
  after(() => t?.stop());

  it("GET /health is 200 {status: ok}", async () => {
    const reply = await get(t, "/health");
    assert.equal(reply.status, 200);
    assert.match(reply.type, /^application\/json/);
    assert.deepEqual(JSON.parse(reply.text), { status: "ok" });
  });

  it("GET /ready is 200 on a dev node (never syncing, needs no peers)", async () => {
    const reply = await get(t, "/ready");
    assert.equal(reply.status, 200, reply.text);
    const body = JSON.parse(reply.text) as Record<string, unknown>;
    assert.equal(body.status, "ready");
    assert.deepEqual(body.reasons, []);
    assert.equal(body.syncing, false);
    assert.equal(body.head, await t.result<number>("chain_getRecentBlockNumber"));
  });

  it("answers other HTTP methods with 405, and HEAD without a body", async () => {
    for (const path of ["/health", "/ready"]) {
      const post = await get(t, path, "POST");
      assert.equal(post.status, 405, `POST ${path}`);
      const head = await get(t, path, "HEAD");
      assert.equal(head.status, 200, `HEAD ${path}`);
      assert.equal(head.text, "", `HEAD ${path}`);
    }
  });

  it("GET /metrics is 404 when metrics are off (the default)", async () => {
    assert.equal((await get(t, "/metrics")).status, 404);
  });
});

describe("metrics (--metrics)", () => {
  let t: TestNode;
  let other: TestNode;
  before(async () => {
    t = await startTestNode({ metrics: true });
    other = await startTestNode({ metrics: true }); // one process, two registries: no clash
  });
  after(async () => {
    await t?.stop();
    await other?.stop();
  });

  it("counts calls by method and outcome, times them, and reports chain, pool and consensus gauges", async () => {
    for (let i = 0; i < 3; i++) await t.result("net_chainId");
    await t.call("foo_bar");
    await t.call("chain_getBalance", { address: "nope" });
    await t.post("{not json");
    await t.post(JSON.stringify([{ jsonrpc: "2.0", id: 1, method: "net_chainId" }, { nope: true }]));
    const alice = accountAt(t, 1);
    const bob = accountAt(t, 2);
    // Two commits, so one block interval is observed.
    await waitForCommit(t, await submit(t, transfer(alice, bob.address, 1)));
    await waitForCommit(t, await submit(t, transfer(alice, bob.address, 2)));
    const head = await t.result<number>("chain_getRecentBlockNumber");

    const reply = await get(t, "/metrics");
    assert.equal(reply.status, 200);
    assert.match(reply.type, /^text\/plain/);
    const text = reply.text;
    const value = (name: string, labels?: Record<string, string>) => {
      const found = sample(text, name, labels);
      assert.notEqual(
        found,
        undefined,
        `${name} ${JSON.stringify(labels ?? {})} in:\n${text.slice(0, 3000)}`,
      );
      return found as number;
    };
    assert.equal(value("chain_node_rpc_requests_total", { method: "net_chainId", code: "ok" }), 4);
    assert.equal(value("chain_node_rpc_requests_total", { method: "unknown", code: "-32601" }), 1);
    assert.equal(value("chain_node_rpc_requests_total", { method: "chain_getBalance", code: "-32602" }), 1);
    assert.equal(value("chain_node_rpc_requests_total", { method: "invalid", code: "-32700" }), 1);
    assert.equal(value("chain_node_rpc_requests_total", { method: "invalid", code: "-32600" }), 1);
    assert.equal(value("chain_node_rpc_request_duration_seconds_count", { method: "net_chainId" }), 4);
    assert.ok(value("chain_node_rpc_request_duration_seconds_sum", { method: "net_chainId" }) > 0);
    assert.equal(text.includes('method="foo_bar"'), false, "unknown method names are not labels");

    assert.equal(value("chain_node_chain_height"), head);
    assert.equal(value("chain_node_pool_transactions"), 0);
    assert.equal(value("chain_node_peers"), 0);
    assert.equal(value("chain_node_syncing"), 0);
    assert.equal(value("chain_node_consensus_round"), 0);
    assert.equal(value("chain_node_consensus_committed_round"), 0);
    assert.ok(value("chain_node_block_interval_seconds_count") >= 1, "an interval between two commits");
    assert.ok(value("chain_node_process_cpu_user_seconds_total") > 0, "default process metrics");
    assert.ok(value("chain_node_nodejs_heap_size_used_bytes") > 0, "default Node.js metrics");
  });

  it("keeps each node's numbers apart", async () => {
    const text = (await get(other, "/metrics")).text;
    assert.equal(
      sample(text, "chain_node_rpc_requests_total", { method: "net_chainId", code: "ok" }),
      undefined,
    );
    assert.equal(sample(text, "chain_node_chain_height"), 0);
  });
});
