import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { DerivedAccount } from "../../src/crypto/index.ts";
import { hashObject } from "../../src/crypto/index.ts";
import { assertRecord, assertRpcError } from "../helpers/shapes.ts";
import { type JsonRpcReply, signTx, startTestNode, type TestNode } from "../helpers/testNode.ts";
import {
  accountAt,
  commitOne,
  DEV_BALANCE,
  type SignedTx,
  signRaw,
  submit,
  transfer,
  uniqueKey,
  userWrite,
  waitForEmptyPool,
} from "./support.ts";

/** Order of the secp256k1 group: s and n − s are the two signatures of one message. */
const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const HOUR_MS = 60 * 60 * 1000;

let nextId = 1_000_000;
const request = (method: string, params?: unknown): Record<string, unknown> =>
  params === undefined
    ? { jsonrpc: "2.0", id: nextId++, method }
    : { jsonrpc: "2.0", id: nextId++, method, params };

/** The same signature with s replaced by n − s and the recovery parity flipped: valid, but high-s. */
function highS(signature: string): string {
  const hex = signature.slice(2);
  const s = BigInt(`0x${hex.slice(128, 192)}`);
  const v = Number.parseInt(hex.slice(192, 194), 16);
  const recid = (v - 35) & 1;
  const flipped = v - recid + (1 - recid);
  const highSHex = (SECP256K1_N - s).toString(16).padStart(64, "0");
  return `0x${hex.slice(0, 128)}${highSHex}${flipped.toString(16).padStart(2, "0")}`;
}

interface AccountSnapshot {
  balance: number;
  nonce: number;
}

async function snapshot(t: TestNode, account: DerivedAccount): Promise<AccountSnapshot> {
  return {
    balance: await t.result<number>("chain_getBalance", { address: account.address }),
    nonce: await t.result<number>("chain_getNonce", { address: account.address }),
  };
}

interface Rejection {
  /** Whose balance and nonce must not move. */
  sender: DerivedAccount;
  send: () => Promise<unknown>;
  code: number;
  reason?: string;
  /** Hash of the refused transaction, if it must be unknown afterwards. */
  unknownHash?: string;
  what: string;
}

/**
 * Sends a request that must be refused; checks the error, that the node still serves, that the
 * sender's balance and nonce did not move, and that the refused transaction is unknown.
 */
async function expectRejected(t: TestNode, rejection: Rejection): Promise<Record<string, unknown>> {
  const before = await snapshot(t, rejection.sender);
  const reply = await rejection.send();
  const data = assertRpcError(reply, rejection.code, rejection.reason, rejection.what);
  assert.equal(
    typeof (await t.result("chain_getRecentBlockNumber")),
    "number",
    `${rejection.what}: node serves`,
  );
  assert.deepEqual(
    await snapshot(t, rejection.sender),
    before,
    `${rejection.what}: balance and nonce unchanged`,
  );
  if (rejection.unknownHash !== undefined) {
    assert.equal(
      await t.result("chain_getTransactionByHash", { hash: rejection.unknownHash }),
      null,
      `${rejection.what}: the transaction was not admitted`,
    );
  }
  return data;
}

const send = (t: TestNode, signed: unknown) => () => t.call("chain_sendSignedTransaction", signed);
const hashOf = (signed: SignedTx): string => hashObject(signed.transaction);

describe("rejections over HTTP (DESIGN.md §2)", () => {
  let t: TestNode;
  let alice: DerivedAccount;
  let bob: DerivedAccount;
  before(async () => {
    t = await startTestNode();
    [alice, bob] = [accountAt(t, 1), accountAt(t, 2)];
    // Alice has committed nonce 0, so her account nonce is 1.
    await commitOne(t, transfer(alice, bob.address, 1, { nonce: 0 }));
    await waitForEmptyPool(t);
  });
  after(() => t?.stop()); // runs even when before() or a test fails

  describe("envelope and params", () => {
    it("malformed JSON is -32700 with id null", async () => {
      const signed = transfer(alice, bob.address, 5);
      const body = JSON.stringify(request("chain_sendSignedTransaction", signed)).slice(0, -1);
      await expectRejected(t, {
        what: "truncated JSON",
        sender: alice,
        unknownHash: hashOf(signed),
        code: -32700,
        send: async () => {
          const raw = await t.post(body);
          assert.equal(raw.status, 200, "a parse error is a JSON-RPC error, not an HTTP one");
          assertRecord(raw.json, "parse error reply");
          assert.equal(raw.json.id, null);
          return raw.json;
        },
      });
    });

    it("wrong types are -32602 invalid_params", async () => {
      const signed = transfer(alice, bob.address, 5, { nonce: 1 });
      for (const [label, change] of [
        ["nonce as a string", { nonce: "1" }],
        ["timestamp as a string", { timestamp: String(signed.transaction.timestamp) }],
        ["operation as a string", { operation: "SET_VALUE" }],
      ] as const) {
        await expectRejected(t, {
          what: label,
          sender: alice,
          code: -32602,
          reason: "invalid_params",
          send: send(t, { ...signed, transaction: { ...signed.transaction, ...change } }),
        });
      }
      await expectRejected(t, {
        what: "signature as a number",
        sender: alice,
        code: -32602,
        reason: "invalid_params",
        unknownHash: hashOf(signed),
        send: send(t, { ...signed, signature: 1 }),
      });
    });

    it("an unknown method is -32601", async () => {
      const signed = transfer(alice, bob.address, 5);
      await expectRejected(t, {
        what: "chain_sendTransaction",
        sender: alice,
        code: -32601,
        unknownHash: hashOf(signed),
        send: () => t.call("chain_sendTransaction", signed),
      });
      await expectRejected(t, {
        what: "eth_blockNumber",
        sender: alice,
        code: -32601,
        send: () => t.call("eth_blockNumber"),
      });
    });

    it("out-of-range numbers are -32602 invalid_params", async () => {
      const signed = transfer(alice, bob.address, 5);
      for (const [label, change] of [
        ["nonce -2", { nonce: -2 }],
        ["nonce 2^53", { nonce: 2 ** 53 }],
        ["nonce 1.5", { nonce: 1.5 }],
        ["timestamp -1", { timestamp: -1 }],
        ["timestamp 2^53", { timestamp: 2 ** 53 }],
      ] as const) {
        await expectRejected(t, {
          what: label,
          sender: alice,
          code: -32602,
          reason: "invalid_params",
          send: send(t, { ...signed, transaction: { ...signed.transaction, ...change } }),
        });
      }
      await expectRejected(t, {
        what: "block number -1",
        sender: alice,
        code: -32602,
        reason: "invalid_params",
        send: () => t.call("chain_getBlockByNumber", { number: -1 }),
      });
    });

    it("bad hex is -32602 invalid_params", async () => {
      const signed = transfer(alice, bob.address, 5);
      const cases: [string, () => Promise<JsonRpcReply>][] = [
        ["signature with non-hex digits", send(t, { ...signed, signature: `0x${"zz".repeat(97)}` })],
        ["signature of 96 bytes", send(t, { ...signed, signature: signed.signature.slice(0, -2) })],
        ["signature without 0x", send(t, { ...signed, signature: signed.signature.slice(2) })],
        ["address with non-hex digits", () => t.call("chain_getBalance", { address: `0x${"g".repeat(40)}` })],
        ["hash of 31 bytes", () => t.call("chain_getTransactionByHash", { hash: `0x${"ab".repeat(31)}` })],
      ];
      for (const [label, sendIt] of cases) {
        await expectRejected(t, {
          what: label,
          sender: alice,
          code: -32602,
          reason: "invalid_params",
          unknownHash: hashOf(signed),
          send: sendIt,
        });
      }
    });

    it("an extra body member is refused (-32602 from the schema), never ignored", async () => {
      const signed = signTx(alice.privateKey, {
        nonce: -1,
        operation: { type: "SET_VALUE", ref: `/users/${alice.address}/x`, value: 1 },
      });
      for (const extra of [{ address: bob.address }, { chain_id: 100 }, { signature: signed.signature }]) {
        await expectRejected(t, {
          what: `extra member ${Object.keys(extra)[0]}`,
          sender: alice,
          code: -32602,
          reason: "invalid_params",
          unknownHash: hashOf(signed),
          send: send(t, { ...signed, transaction: { ...signed.transaction, ...extra } }),
        });
      }
      // Also when the extra member was signed: the body itself is not allowed.
      const signedExtra = { ...signed.transaction, address: bob.address };
      await expectRejected(t, {
        what: "signed extra member",
        sender: alice,
        code: -32602,
        reason: "invalid_params",
        send: send(t, signRaw(alice, signedExtra)),
      });
    });
  });

  describe("signatures (-32003)", () => {
    it("a high-s signature is invalid_signature", async () => {
      const signed = transfer(alice, bob.address, 5);
      await expectRejected(t, {
        what: "high-s",
        sender: alice,
        code: -32003,
        reason: "invalid_signature",
        unknownHash: hashOf(signed),
        send: send(t, { ...signed, signature: highS(signed.signature) }),
      });
    });

    it("a garbage r/s is invalid_signature", async () => {
      const signed = transfer(alice, bob.address, 5);
      const zeroed = `${signed.signature.slice(0, 66)}${"0".repeat(128)}${signed.signature.slice(-2)}`;
      await expectRejected(t, {
        what: "zero r and s",
        sender: alice,
        code: -32003,
        reason: "invalid_signature",
        unknownHash: hashOf(signed),
        send: send(t, { ...signed, signature: zeroed }),
      });
    });

    it("a signature for another chain id is wrong_chain_id", async () => {
      for (const chainId of [1, 0, 99]) {
        const signed = transfer(alice, bob.address, 5, { chainId });
        await expectRejected(t, {
          what: `signed for chain ${chainId}`,
          sender: alice,
          code: -32003,
          reason: "wrong_chain_id",
          unknownHash: hashOf(signed),
          send: send(t, signed),
        });
      }
    });

    it("a body changed after signing is hash_mismatch", async () => {
      const signed = transfer(alice, bob.address, 5);
      const operation = { ...(signed.transaction.operation as Record<string, unknown>), value: 5_000 };
      const tampered = { ...signed.transaction, operation };
      await expectRejected(t, {
        what: "amount changed",
        sender: alice,
        code: -32003,
        reason: "hash_mismatch",
        unknownHash: hashObject(tampered),
        send: send(t, { signature: signed.signature, transaction: tampered }),
      });
      const retimed = { ...signed.transaction, timestamp: (signed.transaction.timestamp as number) + 1 };
      await expectRejected(t, {
        what: "timestamp changed",
        sender: alice,
        code: -32003,
        reason: "hash_mismatch",
        unknownHash: hashObject(retimed),
        send: send(t, { signature: signed.signature, transaction: retimed }),
      });
    });
  });

  describe("nonces, replay and timestamps (-32003)", () => {
    it("a nonce below the account nonce is nonce_too_low", async () => {
      const signed = transfer(alice, bob.address, 5, { nonce: 0 });
      const data = await expectRejected(t, {
        what: "nonce 0 after nonce 0 committed",
        sender: alice,
        code: -32003,
        reason: "nonce_too_low",
        unknownHash: hashOf(signed),
        send: send(t, signed),
      });
      assert.equal(data.expected, 1);
      assert.equal(data.actual, 0);
    });

    it("a nonce beyond the next one is nonce_too_high", async () => {
      const signed = transfer(alice, bob.address, 5, { nonce: 3 });
      const data = await expectRejected(t, {
        what: "nonce 3 when 1 is next",
        sender: alice,
        code: -32003,
        reason: "nonce_too_high",
        unknownHash: hashOf(signed),
        send: send(t, signed),
      });
      assert.equal(data.expected, 1);
      assert.equal(data.actual, 3);
    });

    it("a committed unordered transaction submitted again is already_known", async () => {
      const signed = transfer(alice, bob.address, 5);
      const committed = await commitOne(t, signed);
      await waitForEmptyPool(t);
      await expectRejected(t, {
        what: "replayed unordered transaction",
        sender: alice,
        code: -32003,
        reason: "already_known",
        send: send(t, signed),
      });
      assert.deepEqual(
        await t.result("chain_getTransactionByHash", { hash: committed.hash }),
        committed,
        "the original stays where it was",
      );
    });

    it("a committed ordered transaction submitted again is refused too", async () => {
      const signed = transfer(alice, bob.address, 5, { nonce: 1 });
      await commitOne(t, signed);
      await waitForEmptyPool(t);
      const before = await snapshot(t, alice);
      const reply = await t.call("chain_sendSignedTransaction", signed);
      assert.equal(reply.error?.code, -32003, JSON.stringify(reply));
      assert.ok(
        ["already_known", "nonce_too_low"].includes(String(reply.error?.data?.reason)),
        `reason ${String(reply.error?.data?.reason)}`,
      );
      assert.deepEqual(await snapshot(t, alice), before);
    });

    it("an unordered transaction with a timestamp 2 h off is stale_timestamp", async () => {
      for (const offset of [-2 * HOUR_MS, 2 * HOUR_MS]) {
        const signed = transfer(alice, bob.address, 5, { timestamp: Date.now() + offset });
        const data = await expectRejected(t, {
          what: `timestamp ${offset} ms off`,
          sender: alice,
          code: -32003,
          reason: "stale_timestamp",
          unknownHash: hashOf(signed),
          send: send(t, signed),
        });
        assert.equal(data.actual, signed.transaction.timestamp);
      }
    });
  });

  describe("operations (-32003)", () => {
    it("a transfer beyond the balance is insufficient_balance", async () => {
      const balance = await t.result<number>("chain_getBalance", { address: alice.address });
      const signed = transfer(alice, bob.address, balance + 1);
      const data = await expectRejected(t, {
        what: "balance + 1",
        sender: alice,
        code: -32003,
        reason: "insufficient_balance",
        unknownHash: hashOf(signed),
        send: send(t, signed),
      });
      assert.equal(data.expected, balance + 1);
      assert.equal(data.actual, balance);
    });

    it("writes where the sender may not write are permission_denied", async () => {
      const paths = [
        `/account/${alice.address}/balance`,
        `/account/${alice.address}/nonce`,
        `/users/${bob.address}/profile`,
        `/transfer/${bob.address}/${alice.address}/${uniqueKey()}/value`,
        `/staking/${bob.address}/${uniqueKey()}/value`,
        "/chain/chain_id",
        "/anything",
      ];
      for (const ref of paths) {
        const signed = signTx(alice.privateKey, {
          nonce: -1,
          operation: { type: "SET_VALUE", ref, value: 1 },
        });
        await expectRejected(t, {
          what: `write to ${ref}`,
          sender: alice,
          code: -32003,
          reason: "permission_denied",
          unknownHash: hashOf(signed),
          send: send(t, signed),
        });
      }
    });

    it("an operation other than SET_VALUE {type, ref, value} is invalid_operation", async () => {
      const ref = `/users/${alice.address}/x`;
      const operations: Record<string, unknown>[] = [
        { type: "DELETE", ref, value: null },
        { type: "SET", ref, value: 1 },
        { type: "SET_VALUE", ref },
        { type: "SET_VALUE", value: 1 },
        { type: "SET_VALUE", ref, value: 1, is_global: true },
        {
          type: "SET_VALUE",
          ref: `/transfer/${alice.address}/${bob.address}/${uniqueKey()}/value`,
          value: -5,
        },
        {
          type: "SET_VALUE",
          ref: `/transfer/${alice.address}/${bob.address}/${uniqueKey()}/value`,
          value: 1.5,
        },
      ];
      for (const operation of operations) {
        const body = { nonce: -1, timestamp: Date.now(), operation };
        const signed = signRaw(alice, body);
        await expectRejected(t, {
          what: `operation ${JSON.stringify(operation)}`,
          sender: alice,
          code: -32003,
          reason: "invalid_operation",
          unknownHash: hashObject(body),
          send: send(t, signed),
        });
      }
    });

    it("text storage cannot keep exactly is invalid_operation: a lone surrogate, a member named __proto__", async () => {
      // Sent as any client's JSON would carry them: "\ud800" is one lone code unit after parsing,
      // and "__proto__" an ordinary member, which LMDB's encoding would rename.
      for (const json of ['"a\\ud800"', '{"__proto__": 1}', '{"a": {"__proto__": {"b": 2}}}']) {
        const body = {
          nonce: -1,
          timestamp: Date.now(),
          operation: {
            type: "SET_VALUE",
            ref: `/users/${alice.address}/${uniqueKey()}`,
            value: JSON.parse(json),
          },
        };
        const signed = signRaw(alice, body);
        await expectRejected(t, {
          what: `value ${json}`,
          sender: alice,
          code: -32003,
          reason: "invalid_operation",
          unknownHash: hashObject(body),
          send: send(t, signed),
        });
      }
    });

    it("a transaction over 100 KiB is tx_too_large", async () => {
      const signed = userWrite(alice, "x".repeat(110 * 1024));
      const data = await expectRejected(t, {
        what: "110 KiB /users write",
        sender: alice,
        code: -32003,
        reason: "tx_too_large",
        unknownHash: hashOf(signed),
        send: send(t, signed),
      });
      assert.equal(data.expected, 100 * 1024);
      assert.ok(Number(data.actual) > 110 * 1024, `actual ${String(data.actual)}`);
    });
  });

  describe("limits", () => {
    it("a JSON-RPC batch of 101 requests is one -32600 batch_too_large error", async () => {
      const list: SignedTx[] = [];
      for (let i = 0; i < 101; i++) list.push(userWrite(accountAt(t, i % 10), i));
      await expectRejected(t, {
        what: "batch of 101",
        sender: alice,
        code: -32600,
        reason: "batch_too_large",
        unknownHash: hashOf(list[1] as SignedTx),
        send: async () => {
          const raw = await t.post(
            JSON.stringify(list.map((s) => request("chain_sendSignedTransaction", s))),
          );
          assert.equal(raw.status, 200);
          assert.ok(!Array.isArray(raw.json), "one error object, not an array");
          return raw.json;
        },
      });
      assert.deepEqual(await t.result("chain_getPendingTransactions"), [], "no entry of the batch ran");
    });

    it("a tx_list of 101 is -32600 batch_too_large", async () => {
      const list: SignedTx[] = [];
      for (let i = 0; i < 101; i++) list.push(userWrite(accountAt(t, i % 10), i));
      await expectRejected(t, {
        what: "tx_list of 101",
        sender: alice,
        code: -32600,
        reason: "batch_too_large",
        unknownHash: hashOf(list[1] as SignedTx),
        send: () => t.call("chain_sendSignedTransactionBatch", { tx_list: list }),
      });
    });

    it("a body over 5 MiB is HTTP 413, and nothing of it is admitted", async () => {
      const signed = userWrite(alice, "y".repeat(5 * 1024 * 1024 + 16));
      const before = await snapshot(t, alice);
      const raw = await t.post(JSON.stringify(request("chain_sendSignedTransaction", signed)));
      assert.equal(raw.status, 413);
      assert.equal(await t.result("chain_getTransactionByHash", { hash: hashOf(signed) }), null);
      assert.deepEqual(await snapshot(t, alice), before);
      assert.equal(typeof (await t.result("chain_getRecentBlockNumber")), "number", "node serves after 413");
    });
  });
});

describe("pool limits over HTTP (maxPoolTxs 3, maxPoolTxsPerAccount 2)", () => {
  let t: TestNode;
  const admitted: string[] = [];
  before(async () => {
    t = await startTestNode({ blockTimeMs: 60_000, pool: { maxPoolTxs: 3, maxPoolTxsPerAccount: 2 } });
    // The genesis is old, so the first transaction is committed at once (block 1); after it the
    // next block is a minute away and everything below stays pending.
    await commitOne(t, transfer(accountAt(t, 9), accountAt(t, 8).address, 1));
  });
  after(() => t?.stop()); // runs even when before() or a test fails

  it("admits a large pending transfer", async () => {
    const [alice, bob] = [accountAt(t, 1), accountAt(t, 2)];
    admitted.push(await submit(t, transfer(alice, bob.address, DEV_BALANCE - 1_000, { nonce: 0 })));
  });

  it("checks the balance against what is pending: insufficient_balance", async () => {
    const [alice, bob] = [accountAt(t, 1), accountAt(t, 2)];
    const signed = transfer(alice, bob.address, 2_000);
    const data = await expectRejected(t, {
      what: "2000 with 1000 left after the pending transfer",
      sender: alice,
      code: -32003,
      reason: "insufficient_balance",
      unknownHash: hashOf(signed),
      send: send(t, signed),
    });
    assert.equal(data.actual, 1_000);
  });

  it("counts pending ordered transactions in the next nonce: nonce_too_high", async () => {
    const [alice, bob] = [accountAt(t, 1), accountAt(t, 2)];
    const signed = transfer(alice, bob.address, 1, { nonce: 2 });
    const data = await expectRejected(t, {
      what: "nonce 2 with nonce 0 pending",
      sender: alice,
      code: -32003,
      reason: "nonce_too_high",
      unknownHash: hashOf(signed),
      send: send(t, signed),
    });
    assert.equal(data.expected, 1);
  });

  it("refuses a pending transaction submitted again: already_known", async () => {
    const alice = accountAt(t, 1);
    const signed = userWrite(alice, "twice");
    admitted.push(await submit(t, signed));
    await expectRejected(t, {
      what: "pending duplicate",
      sender: alice,
      code: -32003,
      reason: "already_known",
      send: send(t, signed),
    });
  });

  it("refuses a sender's third pending transaction: account_pool_full", async () => {
    const alice = accountAt(t, 1);
    const signed = userWrite(alice, "third");
    await expectRejected(t, {
      what: "third pending of one sender",
      sender: alice,
      code: -32003,
      reason: "account_pool_full",
      unknownHash: hashOf(signed),
      send: send(t, signed),
    });
  });

  it("refuses a fourth pending transaction: pool_full", async () => {
    admitted.push(await submit(t, userWrite(accountAt(t, 2), "fills the pool")));
    const carol = accountAt(t, 3);
    const signed = userWrite(carol, "no room");
    await expectRejected(t, {
      what: "fourth pending",
      sender: carol,
      code: -32003,
      reason: "pool_full",
      unknownHash: hashOf(signed),
      send: send(t, signed),
    });
    const batch = await t.call("chain_sendSignedTransactionBatch", { tx_list: [signed] });
    assert.equal(assertRpcError(batch, -32003, "pool_full").index, 0);
  });

  it("keeps exactly the admitted transactions pending", async () => {
    const pending = await t.result<{ hash: string }[]>("chain_getPendingTransactions");
    assert.deepEqual(
      pending.map((p) => p.hash),
      admitted,
    );
    assert.equal(await t.result("chain_getRecentBlockNumber"), 1);
  });
});
