import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  assertBlock,
  assertConfirmedTx,
  assertPendingEntry,
  assertPendingTx,
  assertRpcError,
  assertRpcResult,
} from "../helpers/shapes.ts";
import { signTx, startTestNode, type TestNode, waitFor } from "../helpers/testNode.ts";
import { UpgradeRefusedError, WsClient } from "../helpers/wsClient.ts";
import { accountAt, type SignedTx, submit, transfer, waitForCommit } from "./support.ts";

/**
 * JSON-RPC over WebSocket at /ws (docs/websocket.md): normal calls, chain_subscribe for the three
 * topics, chain_unsubscribe, the limits, and what malformed input gets. Real sockets against an
 * in-process dev node.
 */

/** `promise`, or a rejection naming what was awaited after `ms`. */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The hash a signed transaction will have: the signature starts with it (hash ‖ r ‖ s ‖ v). */
const hashOf = (signed: SignedTx): string => signed.signature.slice(0, 66).toLowerCase();

describe("/ws", () => {
  let t: TestNode;
  const clients: WsClient[] = [];
  const connect = async (headers: Record<string, string> = {}): Promise<WsClient> => {
    const client = await WsClient.open(t.url, headers);
    clients.push(client);
    return client;
  };

  before(async () => {
    t = await startTestNode();
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await t?.stop();
  });

  describe("normal calls", () => {
    it("answers a request exactly as HTTP does", async () => {
      const ws = await connect();
      for (const [method, params] of [
        ["net_chainId", undefined],
        ["chain_getBlockByNumber", { number: 0 }],
        ["chain_getBalance", { address: accountAt(t, 3).address }],
        ["chain_getTransactionByHash", { hash: `0x${"00".repeat(32)}` }],
      ] as const) {
        const overWs = await ws.request(method, params);
        const overHttp = await t.call(method, params);
        assert.deepEqual(overWs.result, overHttp.result, method);
        assert.equal(overWs.error, undefined, method);
      }
    });

    it("answers a batch with an array and errors per call", async () => {
      const ws = await connect();
      ws.send(
        JSON.stringify([
          { jsonrpc: "2.0", id: "a", method: "chain_getRecentBlockNumber" },
          { jsonrpc: "2.0", id: "b", method: "no_such_method" },
          { jsonrpc: "2.0", method: "net_id" },
        ]),
      );
      const reply = await ws.next("the batch reply", () => true);
      assert.ok(Array.isArray(reply), `a batch gets an array, got ${JSON.stringify(reply)}`);
      const [first, second, ...rest] = reply as unknown as unknown[];
      assert.equal(typeof assertRpcResult(first, "a"), "number");
      assertRpcError(second, -32601, undefined, "b");
      assert.equal(rest.length, 0, "the notification (no id) gets no entry");
    });

    it("sends nothing for a notification", async () => {
      const ws = await connect();
      ws.send(JSON.stringify({ jsonrpc: "2.0", method: "net_id" }));
      const reply = await ws.request("net_id");
      assert.equal(reply.result, 1);
      assert.equal(ws.messages.length, 1, "only the request with an id was answered");
    });

    it("submits a transaction over the socket", async () => {
      const ws = await connect();
      const signed = transfer(accountAt(t, 1), accountAt(t, 2).address, 5);
      const hash = await ws.result<string>("chain_sendSignedTransaction", signed);
      assert.equal(hash, hashOf(signed));
      await waitForCommit(t, hash);
    });
  });

  describe("chain_subscribe newBlocks", () => {
    it("notifies the committed block as chain_getBlockByNumber returns it without full transactions", async () => {
      const ws = await connect();
      const id = await ws.subscribe({ topic: "newBlocks" });
      assert.match(id, /^0x[0-9a-f]{32}$/, "a subscription id is hex");
      const hash = await submit(t, transfer(accountAt(t, 1), accountAt(t, 2).address, 7));
      let block: Record<string, unknown>;
      do {
        block = await ws.notification(id);
        assertBlock(block, false, "newBlocks result");
      } while (!(block.transactions as string[]).includes(hash));
      const overHttp = await t.result("chain_getBlockByNumber", { number: block.number });
      assert.deepEqual(block, overHttp, `block ${block.number} over /ws and over HTTP`);
    });

    it("stops after chain_unsubscribe, which answers true once and then false", async () => {
      const ws = await connect();
      const id = await ws.subscribe({ topic: "newBlocks" });
      assert.equal(await ws.result("chain_unsubscribe", { subscription: id }), true);
      assert.equal(await ws.result("chain_unsubscribe", { subscription: id }), false, "again");
      assert.equal(await ws.result("chain_unsubscribe", { subscription: "0x1234" }), false, "unknown id");
      await waitForCommit(t, await submit(t, transfer(accountAt(t, 1), accountAt(t, 2).address, 1)));
      // A notification is sent when the block is stored, before any later reply on this socket.
      await ws.request("net_id");
      assert.deepEqual(ws.notificationsOf(id), [], "no notification after unsubscribing");
    });

    it("a connection's subscriptions end with it; other connections go on", async () => {
      const leaving = await connect();
      await leaving.subscribe({ topic: "newBlocks" });
      await leaving.close();
      const staying = await connect();
      const id = await staying.subscribe({ topic: "newBlocks" });
      await submit(t, transfer(accountAt(t, 1), accountAt(t, 2).address, 1));
      assertBlock(await staying.notification(id), false);
    });
  });

  describe("chain_subscribe pendingTransactions", () => {
    it("notifies an admitted transaction as chain_getPendingTransactions lists it", async () => {
      const ws = await connect();
      const id = await ws.subscribe({ topic: "pendingTransactions" });
      const signed = transfer(accountAt(t, 4), accountAt(t, 5).address, 3);
      const hash = await submit(t, signed);
      const entry = await ws.notification(id);
      assertPendingEntry(entry, "pendingTransactions result");
      assert.equal(entry.hash, hash);
      assert.equal(entry.address, accountAt(t, 4).address);
      assert.equal(entry.signature, signed.signature);
      await waitForCommit(t, hash);
    });

    it("notifies every entry of a batch submission, in order", async () => {
      const ws = await connect();
      const id = await ws.subscribe({ topic: "pendingTransactions" });
      const list = [1, 2, 3].map((n) => transfer(accountAt(t, 6), accountAt(t, 7).address, n));
      const hashes = await t.result<string[]>("chain_sendSignedTransactionBatch", { tx_list: list });
      const seen: unknown[] = [];
      for (const _ of hashes) seen.push((await ws.notification(id)).hash);
      assert.deepEqual(seen, hashes);
      for (const hash of hashes) await waitForCommit(t, hash);
    });
  });

  describe("chain_subscribe transaction", () => {
    it("follows a hash: PENDING, then the committed transaction, then the subscription ends", async () => {
      const ws = await connect();
      const signed = transfer(accountAt(t, 8), accountAt(t, 9).address, 11);
      const hash = hashOf(signed);
      const id = await ws.subscribe({ topic: "transaction", hash: hash.toUpperCase().replace("0X", "0x") });
      assert.equal(await ws.result("chain_sendSignedTransaction", signed), hash);
      const pending = await ws.notification(id);
      assertPendingTx(pending, "first status");
      assert.equal(pending.hash, hash);
      assert.deepEqual(
        pending.operation,
        signed.transaction.operation,
        "the pending status carries the operation",
      );
      const committed = await ws.notification(id);
      assertConfirmedTx(committed, "final status");
      assert.deepEqual(
        committed,
        await t.result("chain_getTransactionByHash", { hash }),
        "as chain_getTransactionByHash",
      );
      assert.deepEqual(committed.result, { code: 0 });
      assert.equal(await ws.result("chain_unsubscribe", { subscription: id }), false, "it ended by itself");
    });

    it("answers an already committed hash with the transaction at once", async () => {
      const hash = await submit(t, transfer(accountAt(t, 8), accountAt(t, 9).address, 2));
      await waitForCommit(t, hash);
      const ws = await connect();
      const id = await ws.subscribe({ topic: "transaction", hash });
      const committed = await ws.notification(id);
      assertConfirmedTx(committed);
      assert.equal(committed.hash, hash);
    });

    it("refuses bad params with -32602", async () => {
      const ws = await connect();
      for (const [label, params] of [
        ["no hash", { topic: "transaction" }],
        ["short hash", { topic: "transaction", hash: "0x12" }],
        ["hash on newBlocks", { topic: "newBlocks", hash: `0x${"11".repeat(32)}` }],
        ["unknown topic", { topic: "logs" }],
        ["no params", undefined],
      ] as const) {
        assertRpcError(await ws.request("chain_subscribe", params), -32602, "invalid_params", label);
      }
      assertRpcError(
        await ws.request("chain_unsubscribe", {}),
        -32602,
        "invalid_params",
        "unsubscribe without id",
      );
    });
  });

  describe("chain_subscribe value", () => {
    it("sends the value at once, then the new value after each block that changes it", async () => {
      const owner = accountAt(t, 7);
      const ref = `/users/${owner.address}/status`;
      const ws = await connect();
      const id = await ws.subscribe({
        topic: "value",
        ref: ref.replace(owner.address, owner.address.toLowerCase()),
      });
      const first = await ws.notification(id);
      assert.deepEqual({ ref: first.ref, value: first.value }, { ref, value: null });
      assert.equal(typeof first.block_number, "number");
      const write = (value: unknown) =>
        signTx(owner.privateKey, { nonce: -1, operation: { type: "SET_VALUE", ref, value } });
      await waitForCommit(t, await submit(t, write({ text: "away", since: 3 })));
      const changed = await within(ws.notification(id), 5_000, "the value notification");
      assert.deepEqual(changed.value, { text: "away", since: 3 });
      assert.deepEqual(
        changed.value,
        await t.result("chain_getValue", { ref, block_number: changed.block_number }),
      );
      // A block that writes elsewhere does not notify; the next change does.
      await waitForCommit(t, await submit(t, transfer(owner, accountAt(t, 6).address, 1)));
      await waitForCommit(t, await submit(t, write(null)));
      const deleted = await within(ws.notification(id), 5_000, "the deletion");
      assert.equal(deleted.value, null);
      assert.ok((deleted.block_number as number) > (changed.block_number as number) + 1);
    });

    it("refuses bad params with -32602", async () => {
      const ws = await connect();
      for (const [label, params] of [
        ["no ref", { topic: "value" }],
        ["a malformed ref", { topic: "value", ref: "/a//b" }],
        ["ref on newBlocks", { topic: "newBlocks", ref: "/users" }],
      ] as const) {
        assertRpcError(await ws.request("chain_subscribe", params), -32602, "invalid_params", label);
      }
    });
  });

  describe("limits and bad input", () => {
    it("allows 32 subscriptions per connection and refuses the 33rd with -32005 too_many_subscriptions", async () => {
      const ws = await connect();
      for (let i = 0; i < 32; i++) await ws.subscribe({ topic: "newBlocks" });
      const data = assertRpcError(
        await ws.request("chain_subscribe", { topic: "newBlocks" }),
        -32005,
        "too_many_subscriptions",
        "33rd",
      );
      assert.equal(data.limit, 32);
      const other = await connect();
      await other.subscribe({ topic: "newBlocks" }); // the limit is per connection
    });

    it("answers malformed messages with JSON-RPC errors and keeps the connection", async () => {
      const ws = await connect();
      const cases: readonly [string, string | Buffer, number][] = [
        ["text that is not JSON", "hello", -32700],
        ["truncated JSON", '{"jsonrpc":"2.0","id":1,', -32700],
        ["binary garbage", Buffer.from([0xff, 0x00, 0xfe, 0x13, 0x37]), -32700],
        ["an empty batch", "[]", -32600],
        ["a number", "42", -32600],
        ["an object without method", '{"jsonrpc":"2.0","id":5}', -32600],
        ["a subscribe with a bad id", '{"jsonrpc":"2.0","id":{},"method":"chain_subscribe"}', -32600],
      ];
      for (const [label, frame, code] of cases) {
        ws.send(frame);
        const reply = await ws.next(label, () => true);
        assertRpcError(reply, code, undefined, label);
        assert.ok(ws.isOpen, `still open after ${label}`);
      }
      assert.equal(await ws.result("net_id"), 1, "the connection still serves");
    });

    it("answers a batch that mixes subscription and normal calls in order, notifications after the reply", async () => {
      const ws = await connect();
      const hash = await submit(t, transfer(accountAt(t, 3), accountAt(t, 4).address, 2));
      await waitForCommit(t, hash);
      ws.send(
        JSON.stringify([
          { jsonrpc: "2.0", id: 1, method: "chain_subscribe", params: { topic: "transaction", hash } },
          { jsonrpc: "2.0", id: 2, method: "net_chainId" },
          { jsonrpc: "2.0", id: 3, method: "chain_subscribe", params: { topic: "nope" } },
          [],
        ]),
      );
      const reply = (await ws.next("the batch reply", () => true)) as unknown as Record<string, unknown>[];
      assert.ok(Array.isArray(reply));
      assert.deepEqual(
        reply.map((r) => r.id),
        [1, 2, 3, null],
      );
      const id = assertRpcResult(reply[0], "subscribe");
      assert.equal(assertRpcResult(reply[1], "net_chainId"), 100);
      assertRpcError(reply[2], -32602, "invalid_params", "bad topic");
      assertRpcError(reply[3], -32600, undefined, "nested array");
      const committed = await ws.notification(String(id));
      assert.equal(committed.hash, hash, "the committed transaction, after the reply with its id");
    });

    it("refuses a page of another origin, and takes its own", async () => {
      await assert.rejects(
        connect({ Origin: "http://evil.example" }),
        (error: unknown) => error instanceof UpgradeRefusedError && error.status === 403,
      );
      const own = await connect({ Origin: t.url });
      assert.equal(await own.result("net_id"), 1);
    });
  });

  describe("over HTTP", () => {
    for (const method of ["chain_subscribe", "chain_unsubscribe"]) {
      it(`${method} is refused with -32601 websocket_only`, async () => {
        for (const path of ["/", "/json-rpc"]) {
          const params = method === "chain_subscribe" ? { topic: "newBlocks" } : { subscription: "0x1" };
          const reply = await t.post(JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }), {}, path);
          assert.equal(reply.status, 200, `${method} at ${path}`);
          const error = assertRpcError(reply.json, -32601, "websocket_only", `${method} at ${path}`);
          assert.ok(error !== undefined);
          assert.match(JSON.stringify(reply.json), /\/ws/, "the message says where to go");
        }
      });
    }
  });
});

describe("/ws limits (small settings)", () => {
  let t: TestNode;
  before(async () => {
    t = await startTestNode({
      rpc: { wsMaxConnections: 2, wsMaxBufferedBytes: 256 * 1024, maxBodyBytes: 2 * 1024 * 1024 },
    });
  });
  after(async () => {
    await t?.stop();
  });

  it("refuses a connection past wsMaxConnections with HTTP 503, and takes one again when a slot frees", async () => {
    const a = await WsClient.open(t.url);
    const b = await WsClient.open(t.url);
    try {
      await assert.rejects(WsClient.open(t.url), (error: unknown) => {
        assert.ok(error instanceof UpgradeRefusedError, String(error));
        assert.equal(error.status, 503);
        assertRpcError(JSON.parse(error.body), -32005, "too_many_connections", "refusal body");
        return true;
      });
      await a.close();
      const c = await WsClient.open(t.url);
      await c.close();
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it("closes a connection whose message is over the body limit with 1009; the node goes on", async () => {
    const ws = await WsClient.open(t.url);
    try {
      ws.send(
        JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "net_id",
          params: {},
          pad: "x".repeat(2 * 1024 * 1024),
        }),
      );
      const { code } = await within(ws.closed, 3_000, "the close of an oversized message");
      assert.equal(code, 1009, "message too big");
    } finally {
      await ws.close();
    }
    const again = await WsClient.open(t.url);
    assert.equal(await again.result("net_id"), 1);
    await again.close();
  });

  it("drops a client that stops reading once its queue passes wsMaxBufferedBytes", async () => {
    const ws = await WsClient.open(t.url);
    try {
      ws.socket.pause(); // read nothing: replies pile up in the kernel, then in the node
      const id = "i".repeat(1024 * 1024); // each reply echoes its 1 MiB id
      const count = 48;
      for (let i = 0; i < count; i++)
        ws.send(JSON.stringify({ jsonrpc: "2.0", id: `${id}${i}`, method: "net_id" }));
      // Either the node drops us (our writes then fail and the socket closes) or it took all we
      // sent (our queue empties) and we would read every reply: the assertions tell which.
      await waitFor(
        "the node to drop the slow client or to take every request",
        async () => (!ws.isOpen || ws.socket.bufferedAmount === 0 ? true : undefined),
        10_000,
      );
      ws.socket.resume();
      const { code } = await within(ws.closed, 5_000, "the slow client to be dropped");
      assert.equal(code, 1006, "dropped without a closing handshake");
      assert.ok(ws.messages.length < count, `not every reply was delivered (got ${ws.messages.length})`);
    } finally {
      await ws.close();
    }
    const again = await WsClient.open(t.url);
    assert.equal(await again.result("net_id"), 1, "the node still serves");
    await again.close();
  });

  it("closes open connections with 1001 when the node stops", async () => {
    const node = await startTestNode();
    let stopped = false;
    try {
      const ws = await WsClient.open(node.url);
      await ws.subscribe({ topic: "newBlocks" });
      await node.stop();
      stopped = true;
      const { code } = await within(ws.closed, 3_000, "the close when the node stops");
      assert.equal(code, 1001, "going away");
    } finally {
      if (!stopped) await node.stop();
    }
  });
});
