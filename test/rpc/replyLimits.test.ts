import assert from "node:assert/strict";
import { connect } from "node:net";
import { after, before, describe, it } from "node:test";
import { type JsonRpcReply, startTestNode, type TestNode } from "../helpers/testNode.ts";

/**
 * Small, fast regressions of the limits test/load/limitsUnderAttack.test.ts found missing under
 * attack: one batch's results share max_response_bytes, and a client that is slow to send its
 * request head or body gets 408 and is disconnected after the configured timeouts.
 */
describe("reply and request limits", () => {
  let t: TestNode;
  let blockBytes = 0;
  before(async () => {
    t = await startTestNode({ rpc: { headersTimeoutMs: 300, requestTimeoutMs: 600 } });
    const block = await t.result("chain_getBlockByNumber", { number: 0, getFullTransactions: true });
    blockBytes = Buffer.byteLength(JSON.stringify(block));
    await t.stop();
    // room for the results of exactly two such calls
    t = await startTestNode({
      rpc: { maxResponseBytes: 2 * blockBytes + 10, headersTimeoutMs: 300, requestTimeoutMs: 600 },
    });
  });
  after(() => t.stop());

  it("answers the calls of a batch past max_response_bytes with -32005 response_too_large", async () => {
    const batch = Array.from({ length: 5 }, (_, id) => ({
      jsonrpc: "2.0",
      id,
      method: "chain_getBlockByNumber",
      params: { number: 0, getFullTransactions: true },
    }));
    const reply = await t.post(JSON.stringify(batch));
    assert.equal(reply.status, 200);
    const entries = reply.json as JsonRpcReply[];
    assert.equal(entries.length, 5);
    assert.deepEqual(
      entries.map((e) => (e.error === undefined ? "ok" : `${e.error.code}:${e.error.data?.reason}`)),
      ["ok", "ok", "-32005:response_too_large", "-32005:response_too_large", "-32005:response_too_large"],
    );
    // a single call of the same size is still answered, and so is the next batch
    assert.ok((await t.call("chain_getBlockByNumber", { number: 0, getFullTransactions: true })).result);
    const next = await t.post(JSON.stringify(batch.slice(0, 2)));
    assert.ok((next.json as JsonRpcReply[]).every((e) => e.result !== undefined));
  });

  const held = (sent: string): Promise<{ lifeMs: number; received: string }> =>
    new Promise((resolve) => {
      const { port } = new URL(t.url);
      const socket = connect(Number(port), "127.0.0.1");
      let received = "";
      let opened = 0;
      let ticker: NodeJS.Timeout | undefined;
      socket.on("data", (chunk: Buffer) => {
        received += chunk.toString("latin1");
      });
      socket.on("error", () => {});
      socket.once("connect", () => {
        opened = Date.now();
        socket.write(sent);
        ticker = setInterval(() => socket.write(" "), 50); // one byte every 50 ms, forever
      });
      socket.once("close", () => {
        clearInterval(ticker);
        resolve({ lifeMs: Date.now() - opened, received });
      });
      setTimeout(() => socket.destroy(), 5_000).unref();
    });

  it("answers a request head that never ends with 408 and closes the connection (headers_timeout_ms)", async () => {
    const { lifeMs, received } = await held("POST / HTTP/1.1\r\nHost: x\r\nX-Slow:");
    assert.match(received, /^HTTP\/1\.1 408 /);
    assert.ok(lifeMs >= 250 && lifeMs < 1_500, `closed after ${lifeMs} ms (timeout 300 ms)`);
  });

  it("answers a body that trickles in with 408 and closes the connection (request_timeout_ms)", async () => {
    const { lifeMs, received } = await held(
      "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n ",
    );
    assert.match(received, /^HTTP\/1\.1 408 /);
    assert.ok(lifeMs >= 550 && lifeMs < 2_000, `closed after ${lifeMs} ms (timeout 600 ms)`);
  });
});
