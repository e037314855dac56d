import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { DerivedAccount } from "../../src/crypto/index.ts";
import { hashObject } from "../../src/crypto/index.ts";
import { assertRpcError } from "../helpers/shapes.ts";
import { signTx, startTestNode, type TestNode } from "../helpers/testNode.ts";
import {
  accountAt,
  commitBatch,
  commitOne,
  DEV_BALANCE,
  type SignedTx,
  transfer,
  userWrite,
  waitForCommit,
  waitForEmptyPool,
} from "./support.ts";

const METHOD = "chain_sendSignedTransactionBatch";

describe("chain_sendSignedTransactionBatch: all or none (DESIGN.md §3)", () => {
  let t: TestNode;
  let alice: DerivedAccount;
  let bob: DerivedAccount;
  before(async () => {
    t = await startTestNode();
    [alice, bob] = [accountAt(t, 1), accountAt(t, 2)];
  });
  after(() => t?.stop()); // runs even when before() or a test fails

  /**
   * Submits a batch whose entry 2 is bad; checks -32003 with data.index 2 and the reason, and
   * that no entry is pending or, after a later block, committed; the sender is untouched.
   */
  async function expectBatchRefused(list: SignedTx[], reason: string, what: string): Promise<void> {
    await waitForEmptyPool(t);
    const before = {
      balance: await t.result("chain_getBalance", { address: alice.address }),
      nonce: await t.result("chain_getNonce", { address: alice.address }),
      head: await t.result<number>("chain_getRecentBlockNumber"),
    };
    const data = assertRpcError(await t.call(METHOD, { tx_list: list }), -32003, reason, what);
    assert.equal(data.index, 2, `${what}: data.index names the first bad entry`);
    assert.deepEqual(await t.result("chain_getPendingTransactions"), [], `${what}: nothing is pending`);
    // A block produced after the refusal proves nothing of the batch was waiting to be committed.
    const marker = await commitOne(t, userWrite(accountAt(t, 9), "marker"));
    assert.ok(marker.block_number > before.head, `${what}: a later block was made`);
    for (const [i, signed] of list.entries()) {
      assert.equal(
        await t.result("chain_getTransactionByHash", { hash: hashObject(signed.transaction) }),
        null,
        `${what}: entry ${i} is neither pending nor committed`,
      );
    }
    assert.equal(
      await t.result("chain_getBalance", { address: alice.address }),
      before.balance,
      `${what}: balance`,
    );
    assert.equal(
      await t.result("chain_getNonce", { address: alice.address }),
      before.nonce,
      `${what}: nonce`,
    );
  }

  it("refuses the whole batch when entry 2 has a bad signature", async () => {
    const list = [
      transfer(alice, bob.address, 10, { nonce: 0 }),
      transfer(alice, bob.address, 20, { nonce: 1 }),
      transfer(alice, bob.address, 30, { nonce: 2, chainId: 1 }),
      userWrite(alice, "after the bad one"),
    ];
    await expectBatchRefused(list, "wrong_chain_id", "wrong chain id at 2");
  });

  it("refuses the whole batch when entry 2 skips a nonce", async () => {
    const list = [
      transfer(alice, bob.address, 10, { nonce: 0 }),
      transfer(alice, bob.address, 20, { nonce: 1 }),
      transfer(alice, bob.address, 30, { nonce: 3 }),
    ];
    await expectBatchRefused(list, "nonce_too_high", "nonce gap at 2");
  });

  it("refuses the whole batch when entry 2 overdraws what entries 0 and 1 left", async () => {
    const list = [
      transfer(alice, bob.address, DEV_BALANCE / 2, { nonce: 0 }),
      transfer(alice, bob.address, DEV_BALANCE / 4, { nonce: 1 }),
      transfer(alice, bob.address, DEV_BALANCE / 4 + 1, { nonce: 2 }),
    ];
    await expectBatchRefused(list, "insufficient_balance", "overdraft at 2");
  });

  it("refuses the whole batch when entry 2 repeats entry 0", async () => {
    const first = userWrite(alice, "once");
    await expectBatchRefused([first, userWrite(alice, "other"), first], "already_known", "duplicate at 2");
  });

  it("refuses the whole batch when entry 2 writes where the sender may not", async () => {
    const foreign = signTx(alice.privateKey, {
      nonce: -1,
      operation: { type: "SET_VALUE", ref: `/users/${bob.address}/x`, value: 3 },
    });
    const list = [userWrite(alice, 1), userWrite(alice, 2), foreign, userWrite(alice, 4)];
    await expectBatchRefused(list, "permission_denied", "foreign /users path at 2");
  });

  it("admits the same good entries afterwards: a refusal leaves no trace", async () => {
    const committed = await commitBatch(t, [
      transfer(alice, bob.address, 10, { nonce: 0 }),
      transfer(alice, bob.address, 20, { nonce: 1 }),
    ]);
    assert.equal(committed.length, 2);
    assert.equal(await t.result("chain_getNonce", { address: alice.address }), 2);
  });

  it("returns the hashes in input order", async () => {
    const list = [userWrite(bob, "c"), userWrite(accountAt(t, 3), "a"), userWrite(accountAt(t, 4), "b")];
    const hashes = await t.result<string[]>(METHOD, { tx_list: list });
    assert.deepEqual(
      hashes,
      list.map((s) => hashObject(s.transaction)),
    );
    const positions = [];
    for (const hash of hashes) positions.push((await waitForCommit(t, hash)).index);
    assert.deepEqual(positions, [0, 1, 2], "and the block keeps that order");
  });

  it("admits dependent nonces 0, 1, 2 of a new sender in one batch and commits them in order", async () => {
    const carol = accountAt(t, 5);
    const committed = await commitBatch(t, [
      transfer(carol, bob.address, 1, { nonce: 0 }),
      transfer(carol, bob.address, 2, { nonce: 1 }),
      userWrite(carol, "third", 2),
    ]);
    assert.deepEqual(
      committed.map((tx) => tx.nonce),
      [0, 1, 2],
    );
    assert.deepEqual(
      committed.map((tx) => tx.index),
      [0, 1, 2],
    );
    assert.ok(
      committed.every((tx) => tx.result.code === 0),
      "all three succeeded",
    );
    assert.equal(await t.result("chain_getNonce", { address: carol.address }), 3);
    assert.equal(await t.result("chain_getBalance", { address: carol.address }), DEV_BALANCE - 3);
  });

  it("admits dependent nonces sent as one JSON-RPC batch of chain_sendSignedTransaction calls, in order", async () => {
    const dave = accountAt(t, 6);
    const list = [0, 1, 2].map((nonce) => transfer(dave, bob.address, 1, { nonce }));
    const reply = await t.post(
      JSON.stringify(
        list.map((params, id) => ({ jsonrpc: "2.0", id, method: "chain_sendSignedTransaction", params })),
      ),
    );
    assert.deepEqual(
      reply.json,
      list.map((s, id) => ({ jsonrpc: "2.0", id, result: hashObject(s.transaction) })),
    );
    for (const signed of list) await waitForCommit(t, hashObject(signed.transaction));
    assert.equal(await t.result("chain_getNonce", { address: dave.address }), 3);
  });
});
