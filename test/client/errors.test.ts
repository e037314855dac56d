import assert from "node:assert/strict";
import { createServer } from "node:net";
import { after, before, describe, it } from "node:test";
import {
  type BatchEntry,
  type Block,
  type Client,
  ClientError,
  connect,
  HttpError,
  InvalidParamsError,
  InvalidRequestError,
  LimitExceededError,
  MethodNotFoundError,
  type RpcMethodName,
  RpcError,
  TransactionRejectedError,
  TransportError,
  WaitTimeoutError,
} from "../../src/client/index.ts";
import type { TestNode } from "../helpers/testNode.ts";
import { accountAt, DEV_BALANCE, UNKNOWN_HASH } from "../rpc/support.ts";
import { type Equal, expectType, startClientNode } from "./support.ts";

/** Calls a method the client's types do not know, as a caller with a stale method list would. */
const requestUntyped = (client: Client, method: string, params?: unknown): Promise<unknown> =>
  (client.request as (method: RpcMethodName, params?: unknown) => Promise<unknown>)(
    method as RpcMethodName,
    params,
  );

/** A 127.0.0.1 port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  assert.ok(address !== null && typeof address === "object");
  return address.port;
}

describe("client batches and errors", () => {
  let t: TestNode;
  let client: Client;
  before(async () => {
    ({ t, client } = await startClientNode());
  });
  after(() => t?.stop()); // runs even when before() or a test fails

  it("sends a batch of mixed methods in one POST, typed and in order per call", async () => {
    const alice = accountAt(t, 1);
    const results = await client.batch([
      { method: "chain_getRecentBlockNumber" },
      { method: "chain_getBalance", params: { address: alice.address } },
      { method: "net_nodeInfo" },
      { method: "chain_getBlockByNumber", params: { number: 0 } },
      { method: "chain_getBlocks", params: { from: 5, to: 1 } },
      { method: "net_chainId" },
    ]);
    expectType<Equal<(typeof results)[1], BatchEntry<number>>>();
    expectType<Equal<(typeof results)[3], BatchEntry<Block | null>>>();
    assert.equal(results.length, 6);
    const [head, balance, info, genesis, badRange, chainId] = results;
    assert.ok(head.ok && typeof head.result === "number");
    assert.ok(balance.ok);
    assert.equal(balance.result, DEV_BALANCE);
    assert.ok(info.ok);
    assert.equal(typeof info.result.version, "string");
    assert.ok(genesis.ok && genesis.result !== null);
    assert.equal(genesis.result.number, 0);
    assert.equal(genesis.result.parent_hash, "");
    // One failing call fails alone, with its own error class and reason.
    assert.ok(!badRange.ok, "from > to is refused");
    assert.ok(badRange.error instanceof InvalidParamsError);
    assert.equal(badRange.error.reason, "invalid_params");
    assert.equal(badRange.error.method, "chain_getBlocks");
    assert.ok(chainId.ok);
    assert.equal(chainId.result, 100);
  });

  it("answers an empty batch with an empty list, without a request", async () => {
    assert.deepEqual(await client.batch([]), []);
  });

  it("rejects a batch over the node's limit as a whole: InvalidRequestError batch_too_large", async () => {
    const calls = Array.from({ length: 101 }, () => ({ method: "net_id" }) as const);
    await assert.rejects(client.batch(calls), (error: unknown) => {
      assert.ok(error instanceof InvalidRequestError, `got ${String(error)}`);
      assert.equal(error.code, -32600);
      assert.equal(error.reason, "batch_too_large");
      return true;
    });
  });

  it("maps an unknown method to MethodNotFoundError", async () => {
    await assert.rejects(requestUntyped(client, "chain_noSuchMethod"), (error: unknown) => {
      assert.ok(error instanceof MethodNotFoundError, `got ${String(error)}`);
      assert.ok(error instanceof RpcError && error instanceof ClientError, "the class hierarchy");
      assert.equal(error.code, -32601);
      assert.equal(error.name, "MethodNotFoundError");
      assert.equal(error.method, "chain_noSuchMethod");
      return true;
    });
  });

  it("maps bad params to InvalidParamsError naming the member", async () => {
    await assert.rejects(
      requestUntyped(client, "chain_getBalance", { address: "0x1234" }),
      (error: unknown) => {
        assert.ok(error instanceof InvalidParamsError, `got ${String(error)}`);
        assert.equal(error.code, -32602);
        assert.equal(error.reason, "invalid_params");
        assert.equal(error.path, "/address");
        return true;
      },
    );
  });

  it("maps an over-long block range to LimitExceededError range_too_large", async () => {
    await assert.rejects(client.getBlockHeaders({ from: 0, to: 100 }), (error: unknown) => {
      assert.ok(error instanceof LimitExceededError, `got ${String(error)}`);
      assert.equal(error.code, -32005);
      assert.equal(error.reason, "range_too_large");
      return true;
    });
  });

  it("maps a refused transaction to TransactionRejectedError with its reason", async () => {
    const wallet = client.wallet(accountAt(t, 2).privateKey);
    const signed = await wallet.signTransaction({
      nonce: -1,
      timestamp: Date.now(),
      operation: { type: "SET_VALUE", ref: `/users/${wallet.address}/dup`, value: 1 },
    });
    await client.sendSignedTransaction(signed);
    await assert.rejects(client.sendSignedTransaction(signed), (error: unknown) => {
      assert.ok(error instanceof TransactionRejectedError, `got ${String(error)}`);
      assert.equal(error.reason, "already_known");
      return true;
    });
    // A batch rejection names the failing entry.
    const other = await wallet.signTransaction({
      nonce: -1,
      timestamp: Date.now(),
      operation: { type: "SET_VALUE", ref: "/elsewhere", value: 1 },
    });
    await assert.rejects(
      client.sendSignedTransactionBatch({ tx_list: [other] }),
      (error: unknown) =>
        error instanceof TransactionRejectedError &&
        error.reason === "permission_denied" &&
        error.index === 0,
    );
  });

  it("turns HTTP refusals into HttpError with the node's reason", async () => {
    const wrongType = connect(t.url, { headers: { "Content-Type": "text/plain" } });
    await assert.rejects(wrongType.getChainId(), (error: unknown) => {
      assert.ok(error instanceof HttpError, `got ${String(error)}`);
      assert.equal(error.status, 415);
      assert.ok(error.rpcError instanceof InvalidRequestError, "the JSON-RPC error in the body is kept");
      assert.equal(error.reason, "invalid_request");
      return true;
    });
    const huge = { address: accountAt(t, 1).address, padding: "x".repeat(6 * 1024 * 1024) };
    await assert.rejects(requestUntyped(client, "chain_getBalance", huge), (error: unknown) => {
      assert.ok(error instanceof HttpError, `got ${String(error)}`);
      assert.equal(error.status, 413);
      assert.ok(error.rpcError instanceof LimitExceededError);
      assert.equal(error.reason, "body_too_large");
      return true;
    });
    const wrongPath = connect(`${t.url}/no-such-path`);
    await assert.rejects(wrongPath.getChainId(), { name: "HttpError", status: 404 });
  });

  it("turns an unreachable node and a slow one into TransportError", async () => {
    const nowhere = connect(`http://127.0.0.1:${await closedPort()}`);
    await assert.rejects(nowhere.getChainId(), (error: unknown) => {
      assert.ok(error instanceof TransportError, `got ${String(error)}`);
      assert.ok(error.cause !== undefined, "the fetch failure is kept as the cause");
      return true;
    });
    const never: typeof fetch = (_input, init) =>
      new Promise((_resolve, reject) => {
        init?.signal?.addEventListener("abort", () => reject(init.signal?.reason));
      });
    const slow = connect(t.url, { fetch: never, timeoutMs: 50 });
    await assert.rejects(slow.getChainId(), (error: unknown) => {
      assert.ok(error instanceof TransportError, `got ${String(error)}`);
      assert.match(error.message, /no reply within 50 ms/);
      return true;
    });
  });

  it("times out waiting for a transaction the node does not know: WaitTimeoutError", async () => {
    await assert.rejects(
      client.waitForTransaction(UNKNOWN_HASH, { timeoutMs: 60, pollMs: 20 }),
      (error: unknown) => {
        assert.ok(error instanceof WaitTimeoutError, `got ${String(error)}`);
        assert.equal(error.hash, UNKNOWN_HASH);
        assert.equal(error.pending, false);
        return true;
      },
    );
  });
});
