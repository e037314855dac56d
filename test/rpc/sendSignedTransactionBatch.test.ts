import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { hashObject } from "../../src/crypto/index.ts";
import { assertRpcError, HASH_RE } from "../helpers/shapes.ts";
import { startTestNode, type TestNode } from "../helpers/testNode.ts";
import {
  accountAt,
  assertInvalidParams,
  invalidParamCases,
  type SignedTx,
  transfer,
  userWrite,
  waitForCommit,
  waitForEmptyPool,
} from "./support.ts";

const METHOD = "chain_sendSignedTransactionBatch";

function assertHashList(value: unknown, length: number, what: string): asserts value is string[] {
  assert.ok(Array.isArray(value), `${what}: expected an array, got ${JSON.stringify(value)}`);
  assert.equal(value.length, length, `${what}: one hash per entry`);
  value.forEach((hash: unknown, i) => {
    assert.equal(typeof hash, "string", `${what}[${i}]`);
    assert.match(hash as string, HASH_RE, `${what}[${i}]`);
  });
}

describe(METHOD, () => {
  let t: TestNode;
  before(async () => {
    t = await startTestNode();
  });
  after(() => t?.stop()); // runs even when before() or a test fails

  it("returns an Array of hash Strings, one per entry, in input order", async () => {
    const list = [
      transfer(accountAt(t, 1), accountAt(t, 2).address, 3),
      userWrite(accountAt(t, 2), [1, 2]),
      transfer(accountAt(t, 3), accountAt(t, 1).address, 4, { nonce: 0 }),
    ];
    const hashes = await t.result(METHOD, { tx_list: list });
    assertHashList(hashes, 3, "hashes");
    assert.deepEqual(
      hashes,
      list.map((s) => hashObject(s.transaction)),
    );
    const committed = [];
    for (const hash of hashes) committed.push(await waitForCommit(t, hash));
    assert.deepEqual(
      committed.map((tx) => tx.index),
      [0, 1, 2],
      "the block keeps the input order",
    );
  });

  it("accepts a single entry", async () => {
    const signed = userWrite(accountAt(t, 4), "one");
    const hashes = await t.result(METHOD, { tx_list: [signed] });
    assertHashList(hashes, 1, "hashes");
    assert.equal(hashes[0], hashObject(signed.transaction));
  });

  it("accepts 100 entries, the limit, and refuses 101 with -32600 batch_too_large", async () => {
    await waitForEmptyPool(t);
    // Spread over the ten accounts: one sender may have at most 64 pending (DESIGN.md §9).
    const list: SignedTx[] = [];
    for (let i = 0; i < 101; i++) list.push(userWrite(accountAt(t, i % 10), i));
    const over = await t.call(METHOD, { tx_list: list });
    assertRpcError(over, -32600, "batch_too_large", "tx_list of 101");
    assert.deepEqual(await t.result("chain_getPendingTransactions"), [], "nothing of the 101 was admitted");
    const hashes = await t.result(METHOD, { tx_list: list.slice(0, 100) });
    assertHashList(hashes, 100, "hashes");
    await waitForCommit(t, hashes[99] as string);
  });

  it("refuses a rejected entry with -32003 naming its index", async () => {
    const bad = transfer(accountAt(t, 6), accountAt(t, 7).address, 1, { nonce: 5 });
    const data = assertRpcError(
      await t.call(METHOD, { tx_list: [userWrite(accountAt(t, 6), "ok"), bad] }),
      -32003,
      "nonce_too_high",
    );
    assert.equal(data.index, 1);
  });

  it("refuses invalid params with -32602 invalid_params", async () => {
    const valid = userWrite(accountAt(t, 1), "x");
    const { signature: _s, ...noSignature } = valid;
    const { transaction: _t, ...noTransaction } = valid;
    await assertInvalidParams(t, METHOD, [
      ...invalidParamCases(
        { tx_list: [valid] },
        {
          tx_list: [
            [],
            {},
            valid,
            "x",
            null,
            [noSignature],
            [noTransaction],
            [{ ...valid, extra: 1 }],
            [valid, null],
            [{ ...valid, transaction: { ...valid.transaction, nonce: -2 } }],
            [{ ...valid, signature: "0x00" }],
          ],
        },
      ),
    ]);
  });
});
