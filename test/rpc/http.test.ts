import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { after, before, describe, it } from "node:test";
import { Type } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { pino } from "pino";
import { hashObject } from "../../src/crypto/index.ts";
import { defaultRpcServerOptions, type Route, RpcServer } from "../../src/rpc/index.ts";
import { assertRecord, assertRpcError } from "../helpers/shapes.ts";
import { type JsonRpcReply, type RawReply, startTestNode, type TestNode } from "../helpers/testNode.ts";
import { accountAt, CHAIN_ID, commitOne, transfer, waitForCommit } from "./support.ts";

const call = (method: string, id: unknown = 1, params?: unknown): Record<string, unknown> => {
  const request: Record<string, unknown> = { jsonrpc: "2.0", id, method };
  if (params !== undefined) request.params = params;
  return request;
};
const notification = (method: string, params?: unknown): Record<string, unknown> =>
  params === undefined ? { jsonrpc: "2.0", method } : { jsonrpc: "2.0", method, params };

describe("HTTP gatekeeping and the JSON-RPC envelope (DESIGN.md §2)", () => {
  let t: TestNode;
  /** Every HTTP status seen in this file: none may be 500. */
  const statuses: number[] = [];
  const post = async (body: string, headers?: Record<string, string>, path?: string): Promise<RawReply> => {
    const reply = await t.post(body, headers, path);
    statuses.push(reply.status);
    return reply;
  };
  const postJson = (payload: unknown, path?: string) => post(JSON.stringify(payload), {}, path);
  const raw = async (method: string, path: string, init: RequestInit = {}): Promise<Response> => {
    const response = await fetch(t.url + path, { ...init, method });
    statuses.push(response.status);
    return response;
  };

  before(async () => {
    t = await startTestNode();
  });
  after(() => t?.stop()); // runs even when before() or a test fails

  describe("paths and HTTP methods", () => {
    it("serves POST at /, /json-rpc and /json-rpc/", async () => {
      for (const path of ["/", "/json-rpc", "/json-rpc/", "/json-rpc?x=1"]) {
        const reply = await postJson(call("net_chainId", 1), path);
        assert.equal(reply.status, 200, `POST ${path}`);
        assert.match(reply.headers.get("content-type") ?? "", /^application\/json/, `POST ${path}`);
        assert.deepEqual(reply.json, { jsonrpc: "2.0", id: 1, result: CHAIN_ID }, `POST ${path}`);
      }
    });

    it("answers GET /json-rpc with 405 and an Allow header", async () => {
      for (const path of ["/json-rpc", "/json-rpc/"]) {
        const response = await raw("GET", path);
        assert.equal(response.status, 405, `GET ${path}`);
        assert.equal(response.headers.get("allow"), "POST, OPTIONS", `GET ${path}: Allow`);
        const body = (await response.json()) as JsonRpcReply;
        assertRpcError(body, -32600, undefined, `GET ${path}`);
      }
    });

    it("answers PUT, DELETE and PATCH with 405 and an Allow header listing what the path supports", async () => {
      for (const [method, path, allow] of [
        ["PUT", "/", "GET, POST, OPTIONS"],
        ["DELETE", "/json-rpc", "POST, OPTIONS"],
        ["PATCH", "/", "GET, POST, OPTIONS"],
        ["PUT", "/json-rpc/", "POST, OPTIONS"],
      ] as const) {
        const response = await raw(method, path, { body: JSON.stringify(call("net_id")) });
        assert.equal(response.status, 405, `${method} ${path}`);
        assert.equal(response.headers.get("allow"), allow, `${method} ${path}: Allow`);
        assertRpcError(await response.json(), -32600, undefined, `${method} ${path}`);
      }
    });

    it("answers OPTIONS with 204 and the allowed methods", async () => {
      const response = await raw("OPTIONS", "/json-rpc");
      assert.equal(response.status, 204);
      assert.match(response.headers.get("allow") ?? "", /POST/);
    });

    it("sends no CORS headers by default", async () => {
      const reply = await postJson(call("net_id"));
      assert.equal(reply.headers.get("access-control-allow-origin"), null);
    });

    it("may serve a page at GET /, never an error page", async () => {
      const response = await raw("GET", "/");
      assert.ok([200, 405].includes(response.status), `GET / gave ${response.status}`);
      await response.arrayBuffer();
    });

    it("answers an unknown path with 404 and a JSON error", async () => {
      for (const path of ["/rpc", "/json-rpc/x", "/api/v1"]) {
        const reply = await postJson(call("net_id"), path);
        assert.equal(reply.status, 404, `POST ${path}`);
        assert.match(reply.headers.get("content-type") ?? "", /^application\/json/, `POST ${path}`);
        assertRpcError(reply.json, -32600, undefined, `POST ${path}`);
      }
      const response = await raw("GET", "/nowhere");
      assert.equal(response.status, 404);
      assertRecord(await response.json(), "GET /nowhere body");
    });

    it("takes a body of exactly 5 MiB and answers one byte more with 413", async () => {
      const limit = 5 * 1024 * 1024;
      const json = JSON.stringify(call("net_chainId", "big"));
      const atLimit = await post(json + " ".repeat(limit - json.length));
      assert.equal(atLimit.status, 200, "5 MiB exactly");
      assert.deepEqual(atLimit.json, { jsonrpc: "2.0", id: "big", result: CHAIN_ID });
      const over = await post(json + " ".repeat(limit - json.length + 1));
      assert.equal(over.status, 413, "5 MiB + 1 byte");
      assertRpcError(over.json, -32005, "body_too_large", "5 MiB + 1 byte");
    });

    it("answers a chunked body over 5 MiB (no Content-Length) with 413 and keeps serving", async () => {
      const chunk = new Uint8Array(1024 * 1024).fill(0x20);
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent === 6) controller.close();
          else {
            sent += 1;
            controller.enqueue(chunk);
          }
        },
      });
      const init: RequestInit & { duplex: "half" } = {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
        duplex: "half",
      };
      const response = await fetch(t.url, init);
      statuses.push(response.status);
      assert.equal(response.status, 413);
      assertRpcError(await response.json(), -32005, "body_too_large", "chunked 6 MiB");
      assert.equal(await t.result("net_chainId"), CHAIN_ID);
    });

    it("answers a non-JSON content type with 415 and accepts JSON ones", async () => {
      const body = JSON.stringify(call("net_id"));
      for (const type of ["text/plain", "application/x-www-form-urlencoded", "text/html; charset=utf-8"]) {
        const reply = await post(body, { "content-type": type });
        assert.equal(reply.status, 415, `content type ${type}`);
        assertRpcError(reply.json, -32600, undefined, `content type ${type}`);
      }
      for (const type of ["application/json", "application/json; charset=utf-8", "Application/JSON"]) {
        const reply = await post(body, { "content-type": type });
        assert.equal(reply.status, 200, `content type ${type}`);
      }
    });
  });

  describe("envelope", () => {
    it("echoes the id: numbers and strings", async () => {
      for (const id of [0, 7, 2 ** 40, -3, "abc", "", "0x1"]) {
        const reply = await postJson(call("net_id", id));
        assert.deepEqual(reply.json, { jsonrpc: "2.0", id, result: 1 }, `id ${JSON.stringify(id)}`);
      }
    });

    it("answers a batch with an array in request order", async () => {
      const reply = await postJson([
        call("net_chainId", 1),
        call("net_id", "two"),
        call("chain_getRecentBlockNumber", 3),
        call("net_peerCount", 4),
      ]);
      assert.equal(reply.status, 200);
      assert.deepEqual(reply.json, [
        { jsonrpc: "2.0", id: 1, result: CHAIN_ID },
        { jsonrpc: "2.0", id: "two", result: 1 },
        { jsonrpc: "2.0", id: 3, result: 0 },
        { jsonrpc: "2.0", id: 4, result: 0 },
      ]);
    });

    it("answers each bad entry of a batch in its place", async () => {
      const reply = await postJson([
        call("net_id", 1),
        42,
        call("no_such_method", 3),
        { jsonrpc: "2.0", id: 4 },
        call("chain_getBlockByNumber", 5, { number: -1 }),
      ]);
      assert.ok(Array.isArray(reply.json), "an array");
      const replies = reply.json as JsonRpcReply[];
      assert.equal(replies.length, 5);
      assert.deepEqual(replies[0], { jsonrpc: "2.0", id: 1, result: 1 });
      assertRpcError(replies[1], -32600, undefined, "entry 42");
      assert.equal(replies[1]?.id, null);
      assertRpcError(replies[2], -32601, undefined, "unknown method");
      assert.equal(replies[2]?.id, 3);
      assertRpcError(replies[3], -32600, undefined, "no method");
      assert.equal(replies[3]?.id, 4);
      assertRpcError(replies[4], -32602, "invalid_params", "bad params");
      assert.equal(replies[4]?.id, 5);
    });

    it("gives a notification no reply: HTTP 204 alone, no entry in a batch", async () => {
      const single = await postJson(notification("net_id"));
      assert.equal(single.status, 204);
      assert.equal(single.text, "");
      const mixed = await postJson([
        notification("net_id"),
        call("net_chainId", 9),
        notification("no_such_method"),
      ]);
      assert.equal(mixed.status, 200);
      assert.deepEqual(mixed.json, [{ jsonrpc: "2.0", id: 9, result: CHAIN_ID }]);
      const all = await postJson([
        notification("net_id"),
        notification("chain_getBlockByNumber", { number: -1 }),
      ]);
      assert.equal(all.status, 204, "an all-notification batch");
      assert.equal(all.text, "");
    });

    it("still runs a notification: a transaction sent as one is admitted", async () => {
      const signed = transfer(accountAt(t, 1), accountAt(t, 2).address, 3);
      const reply = await postJson(notification("chain_sendSignedTransaction", signed));
      assert.equal(reply.status, 204);
      await waitForCommit(t, hashObject(signed.transaction));
    });

    it("answers an empty batch with one -32600 error", async () => {
      const reply = await postJson([]);
      assert.equal(reply.status, 200);
      assert.ok(!Array.isArray(reply.json), "one error object, not an array");
      assertRpcError(reply.json, -32600, undefined, "empty batch");
      assert.equal((reply.json as JsonRpcReply).id, null);
    });

    it("refuses what is not a JSON-RPC 2.0 request object with -32600", async () => {
      const cases: [string, unknown, unknown][] = [
        ["jsonrpc missing", { id: 1, method: "net_id" }, 1],
        ["jsonrpc 1.0", { jsonrpc: "1.0", id: 2, method: "net_id" }, 2],
        ["jsonrpc as a number", { jsonrpc: 2, id: 3, method: "net_id" }, 3],
        ["method missing", { jsonrpc: "2.0", id: 4 }, 4],
        ["method a number", { jsonrpc: "2.0", id: 5, method: 5 }, 5],
        ["id an object", { jsonrpc: "2.0", id: { a: 1 }, method: "net_id" }, null],
        ["id an array", { jsonrpc: "2.0", id: [1], method: "net_id" }, null],
        ["id a Boolean", { jsonrpc: "2.0", id: true, method: "net_id" }, null],
        ["a number", 42, null],
        ["a string", "net_id", null],
        ["null", null, null],
      ];
      for (const [label, payload, id] of cases) {
        const reply = await postJson(payload);
        assert.equal(reply.status, 200, label);
        assertRpcError(reply.json, -32600, undefined, label);
        assert.equal((reply.json as JsonRpcReply).id, id, `${label}: id`);
      }
    });

    it("answers malformed JSON with -32700 and id null", async () => {
      for (const body of ["{", '{"jsonrpc": "2.0",}', "nul", "", "[1, 2", "\u0000"]) {
        const reply = await post(body);
        assert.equal(reply.status, 200, `body ${JSON.stringify(body)}`);
        assertRpcError(reply.json, -32700, undefined, `body ${JSON.stringify(body)}`);
        assert.equal((reply.json as JsonRpcReply).id, null);
      }
    });

    it("keeps serving after a burst of bad requests", async () => {
      const bad = [
        () => post("{oops"),
        () => postJson([]),
        () => postJson({ id: 1 }),
        () => postJson(call("chain_getBlocks", 1, { from: 5, to: 1 })),
        () => post("x", { "content-type": "text/plain" }),
        () => postJson(call("net_id"), "/nope"),
        () => postJson(call("chain_getBalance", 1, ["0x00"])),
      ];
      await Promise.all(
        Array.from({ length: 140 }, (_, i) => (bad[i % bad.length] as () => Promise<RawReply>)()),
      );
      const reply = await postJson(call("net_chainId", "after"));
      assert.deepEqual(reply.json, { jsonrpc: "2.0", id: "after", result: CHAIN_ID });
      await commitOne(t, transfer(accountAt(t, 3), accountAt(t, 4).address, 1));
    });

    it("never answered HTTP 500", () => {
      assert.ok(statuses.length > 50, `${statuses.length} requests were checked`);
      assert.ok(!statuses.includes(500), `statuses seen: ${[...new Set(statuses)].join(", ")}`);
      assert.ok(
        statuses.every((s) => s < 500),
        `statuses seen: ${[...new Set(statuses)].join(", ")}`,
      );
    });
  });
});

describe("CORS (rpc.cors, on in dev mode)", () => {
  let t: TestNode;
  before(async () => {
    t = await startTestNode({ rpc: { cors: true } });
  });
  after(() => t?.stop()); // runs even when before() or a test fails

  it("lets any origin read a reply, with the allow headers only in the preflight's answer", async () => {
    const reply = await t.post(JSON.stringify(call("net_id")), { origin: "https://dapp.example" });
    assert.equal(reply.status, 200);
    assert.equal(reply.headers.get("access-control-allow-origin"), "*");
    assert.equal(reply.headers.get("access-control-allow-methods"), null);

    const preflight = await fetch(`${t.url}/json-rpc`, {
      method: "OPTIONS",
      headers: {
        origin: "https://dapp.example",
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type",
      },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get("access-control-allow-origin"), "*");
    assert.match(preflight.headers.get("access-control-allow-methods") ?? "", /POST/);
    assert.match(preflight.headers.get("access-control-allow-headers") ?? "", /content-type/i);
    assert.equal(preflight.headers.get("access-control-max-age"), "7200");
  });

  it("sends the origin header on every other JSON-RPC answer too (errors, notifications)", async () => {
    const refused = await t.post("{not json", { origin: "https://dapp.example" });
    assert.equal(refused.headers.get("access-control-allow-origin"), "*", "parse error");
    const notified = await t.post(JSON.stringify(notification("net_id")), { origin: "https://dapp.example" });
    assert.equal(notified.status, 204);
    assert.equal(notified.headers.get("access-control-allow-origin"), "*", "notification");
    const notFound = await t.post(JSON.stringify(call("net_id")), {}, "/nowhere");
    assert.equal(notFound.status, 404);
    assert.equal(notFound.headers.get("access-control-allow-origin"), "*", "unknown path");
  });
});

describe("result size limit", () => {
  let t: TestNode;
  before(async () => {
    t = await startTestNode({ rpc: { maxResponseBytes: 300 } });
  });
  after(() => t?.stop()); // runs even when before() or a test fails

  it("refuses a result over maxResponseBytes with -32005 response_too_large, and still serves", async () => {
    const reply = await t.call("chain_getBlocks", { from: 0, to: 0 });
    assertRpcError(reply, -32005, "response_too_large");
    assert.equal(await t.result("net_chainId"), CHAIN_ID);
  });
});

describe("internal faults (-32603)", () => {
  let server: RpcServer;
  let url: string;
  const logLines: Record<string, unknown>[] = [];
  const route = (name: string, handler: () => unknown): [string, Route] => {
    const params = Type.Object({}, { additionalProperties: false });
    return [
      name,
      {
        name,
        definition: { params, summary: name, result: "Number", resultSchema: Type.Number(), handler },
        check: TypeCompiler.Compile(params),
      },
    ];
  };
  before(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString("utf8").split("\n")) {
          if (line !== "") logLines.push(JSON.parse(line) as Record<string, unknown>);
        }
        done();
      },
    });
    const routes = new Map([
      route("test_throws", () => {
        throw new Error("a bug in a handler");
      }),
      route("test_rejects", async () => {
        await Promise.resolve();
        throw new TypeError("an async bug");
      }),
      route("test_ok", () => 42),
    ]);
    server = new RpcServer(routes, { ...defaultRpcServerOptions, port: 0 }, pino({ level: "error" }, sink));
    url = await server.listen();
  });
  after(() => server?.close()); // runs even when before() or a test fails

  const rpc = async (payload: unknown): Promise<{ status: number; json: unknown }> => {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(payload),
    });
    return { status: response.status, json: await response.json() };
  };

  it("answers a throwing handler with HTTP 200, -32603 and a fault id that is in the log", async () => {
    for (const method of ["test_throws", "test_rejects"]) {
      const reply = await rpc(call(method, method));
      assert.equal(reply.status, 200, method);
      const data = assertRpcError(reply.json, -32603, undefined, method);
      assert.equal(typeof data.fault_id, "string", `${method}: data.fault_id`);
      assert.ok(
        logLines.some((line) => line.faultId === data.fault_id && line.level === 50),
        `${method}: an error-level log line carries fault id ${String(data.fault_id)}`,
      );
      assert.ok(!JSON.stringify(reply.json).includes("bug"), `${method}: the error text stays in the log`);
    }
  });

  it("keeps serving, in the same batch and after it", async () => {
    const reply = await rpc([call("test_throws", 1), call("test_ok", 2)]);
    assert.ok(Array.isArray(reply.json));
    assertRpcError(reply.json[0], -32603, undefined, "entry 0");
    assert.deepEqual(reply.json[1], { jsonrpc: "2.0", id: 2, result: 42 });
    assert.deepEqual((await rpc(call("test_ok", 3))).json, { jsonrpc: "2.0", id: 3, result: 42 });
  });
});
