import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { hashObject } from "../../src/crypto/index.ts";
import { assertRpcError, HASH_RE } from "../helpers/shapes.ts";
import { startTestNode, type TestNode } from "../helpers/testNode.ts";
import {
  accountAt,
  assertInvalidParams,
  DEV_BALANCE,
  invalidParamCases,
  type ParamCase,
  submit,
  transfer,
  UNKNOWN_HASH,
  userWrite,
  waitForCommit,
} from "./support.ts";

const METHOD = "chain_sendSignedTransaction";

describe(METHOD, () => {
  let t: TestNode;
  before(async () => {
    t = await startTestNode();
  });
  after(() => t?.stop()); // runs even when before() or a test fails

  it("returns only the transaction's hash: 0x + keccak of the canonical body", async () => {
    const signed = transfer(accountAt(t, 1), accountAt(t, 2).address, 10);
    const reply = await t.call(METHOD, signed);
    assert.equal(reply.error, undefined, JSON.stringify(reply.error));
    assert.equal(typeof reply.result, "string");
    assert.match(reply.result as string, HASH_RE);
    assert.equal(reply.result, hashObject(signed.transaction));
    await waitForCommit(t, reply.result as string);
  });

  it("admits ordered transactions with consecutive nonces and commits their effect", async () => {
    const [alice, bob] = [accountAt(t, 3), accountAt(t, 4)];
    const hashes = [
      await submit(t, transfer(alice, bob.address, 1_000, { nonce: 0 })),
      await submit(t, transfer(alice, bob.address, 2_000, { nonce: 1 })),
    ];
    for (const hash of hashes) await waitForCommit(t, hash);
    assert.equal(await t.result("chain_getNonce", { address: alice.address }), 2);
    assert.equal(await t.result("chain_getBalance", { address: alice.address }), DEV_BALANCE - 3_000);
    assert.equal(await t.result("chain_getBalance", { address: bob.address }), DEV_BALANCE + 3_000);
  });

  it("admits an unordered transaction (nonce -1) without using a nonce", async () => {
    const alice = accountAt(t, 5);
    const tx = await waitForCommit(t, await submit(t, userWrite(alice, "free data")));
    assert.equal(tx.nonce, -1);
    assert.equal(await t.result("chain_getNonce", { address: alice.address }), 0);
  });

  it("keeps an optional parent_tx_hash", async () => {
    const signed = transfer(accountAt(t, 1), accountAt(t, 2).address, 1, { parent_tx_hash: UNKNOWN_HASH });
    const tx = await waitForCommit(t, await submit(t, signed));
    assert.equal(tx.parent_tx_hash, UNKNOWN_HASH);
  });

  it("accepts the signature in upper-case hex", async () => {
    const signed = transfer(accountAt(t, 1), accountAt(t, 2).address, 1);
    const upper = { ...signed, signature: `0x${signed.signature.slice(2).toUpperCase()}` };
    const tx = await waitForCommit(t, await submit(t, upper));
    assert.equal(tx.signature, signed.signature.toLowerCase());
  });

  it("refuses a rejected transaction with -32003 and a reason, not a hash", async () => {
    const alice = accountAt(t, 6);
    const reply = await t.call(METHOD, transfer(alice, accountAt(t, 7).address, DEV_BALANCE + 1));
    assertRpcError(reply, -32003, "insufficient_balance");
  });

  it("refuses invalid params with -32602 invalid_params", async () => {
    const valid = transfer(accountAt(t, 1), accountAt(t, 2).address, 1);
    const body = valid.transaction;
    const withBody = (change: Record<string, unknown>): unknown => ({
      signature: valid.signature,
      transaction: { ...body, ...change },
    });
    const { nonce: _n, ...noNonce } = body;
    const { timestamp: _t, ...noTimestamp } = body;
    const { operation: _o, ...noOperation } = body;
    const nested: ParamCase[] = [
      ["transaction without nonce", { signature: valid.signature, transaction: noNonce }],
      ["transaction without timestamp", { signature: valid.signature, transaction: noTimestamp }],
      ["transaction without operation", { signature: valid.signature, transaction: noOperation }],
      ["nonce -2", withBody({ nonce: -2 })],
      ["nonce 1.5", withBody({ nonce: 1.5 })],
      ['nonce "0"', withBody({ nonce: "0" })],
      ["nonce 2^53", withBody({ nonce: 2 ** 53 })],
      ["timestamp -1", withBody({ timestamp: -1 })],
      ["timestamp as a string", withBody({ timestamp: String(body.timestamp) })],
      ["timestamp 1.5", withBody({ timestamp: 1.5 })],
      ["operation as a string", withBody({ operation: "SET_VALUE" })],
      ["operation as an array", withBody({ operation: [] })],
      ["operation null", withBody({ operation: null })],
      ["parent_tx_hash as a number", withBody({ parent_tx_hash: 1 })],
      ["an extra body member", withBody({ address: accountAt(t, 1).address })],
    ];
    await assertInvalidParams(t, METHOD, [
      ...invalidParamCases(
        { signature: valid.signature, transaction: body },
        {
          signature: [
            "0x1234",
            valid.signature.slice(2),
            `${valid.signature}00`,
            valid.signature.slice(0, -2),
            `0x${"zz".repeat(97)}`,
            42,
            null,
          ],
          transaction: ["tx", 1, null, []],
        },
      ),
      ...nested,
    ]);
  });
});
