import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { hashObject } from "../../src/crypto/index.ts";
import { assertConfirmedTx, assertPendingTx, type ConfirmedTxJson } from "../helpers/shapes.ts";
import { startTestNode, type TestNode } from "../helpers/testNode.ts";
import {
  accountAt,
  assertInvalidParams,
  BAD_HASHES,
  commitOne,
  commitSampleBlocks,
  invalidParamCases,
  submit,
  transfer,
  UNKNOWN_HASH,
} from "./support.ts";

const METHOD = "chain_getTransactionByHash";

describe(METHOD, () => {
  describe("committed transactions", () => {
    let t: TestNode;
    let sample: ConfirmedTxJson[][];
    before(async () => {
      t = await startTestNode();
      sample = await commitSampleBlocks(t);
    });
    after(() => t?.stop()); // runs even when before() or a test fails

    it("returns the transaction with block_hash, block_number, index and result {code: 0}", async () => {
      for (const [b, txs] of sample.entries()) {
        const block = await t.result<{ hash: string; transactions: string[] }>("chain_getBlockByNumber", {
          number: b + 1,
        });
        for (const [index, { hash }] of txs.entries()) {
          const tx = await t.result(METHOD, { hash });
          assertConfirmedTx(tx, `transaction ${hash}`);
          assert.equal(tx.hash, hash);
          assert.equal(tx.block_number, b + 1, `${hash}.block_number`);
          assert.equal(tx.block_hash, block.hash, `${hash}.block_hash`);
          assert.equal(tx.index, index, `${hash}.index`);
          assert.equal(block.transactions[index], hash, `${hash} sits at its index in the block`);
          assert.deepEqual(tx.result, { code: 0 }, `${hash}.result`);
        }
      }
    });

    it("reports what was signed: body members, sender, signature, and hash = hash of the body", async () => {
      const [alice, bob] = [accountAt(t, 1), accountAt(t, 2)];
      const signed = transfer(alice, bob.address, 77, { parent_tx_hash: UNKNOWN_HASH });
      const tx = await commitOne(t, signed);
      assert.equal(tx.hash, hashObject(signed.transaction));
      assert.equal(tx.address, alice.address);
      assert.equal(tx.signature, signed.signature.toLowerCase());
      assert.equal(tx.timestamp, signed.transaction.timestamp);
      assert.equal(tx.nonce, -1);
      assert.equal(tx.parent_tx_hash, UNKNOWN_HASH);
      assert.deepEqual(tx.operation, signed.transaction.operation);
    });

    it("accepts the hash in upper case", async () => {
      const hash = sample[0]?.[0]?.hash as string;
      const tx = await t.result(METHOD, { hash: `0x${hash.slice(2).toUpperCase()}` });
      assertConfirmedTx(tx);
      assert.equal(tx.hash, hash);
    });

    it("returns null for an unknown hash, and for a block's hash", async () => {
      assert.equal(await t.result(METHOD, { hash: UNKNOWN_HASH }), null);
      const block = await t.result<{ hash: string }>("chain_getBlockByNumber", { number: 1 });
      assert.equal(await t.result(METHOD, { hash: block.hash }), null);
    });

    it("refuses invalid params with -32602 invalid_params", async () => {
      await assertInvalidParams(t, METHOD, invalidParamCases({ hash: UNKNOWN_HASH }, { hash: BAD_HASHES }));
    });
  });

  describe("pending transactions", () => {
    let t: TestNode;
    before(async () => {
      t = await startTestNode({ blockTimeMs: 60_000 });
      // The first transaction commits at once (the genesis is old); the next waits a minute.
      await commitOne(t, transfer(accountAt(t, 9), accountAt(t, 8).address, 1));
    });
    after(() => t?.stop()); // runs even when before() or a test fails

    it("returns a pending transaction with status PENDING and no block position", async () => {
      const [alice, bob] = [accountAt(t, 1), accountAt(t, 2)];
      const signed = transfer(alice, bob.address, 5, { nonce: 0 });
      const hash = await submit(t, signed);
      const tx = await t.result(METHOD, { hash });
      assertPendingTx(tx, `pending ${hash}`);
      assert.equal(tx.status, "PENDING");
      assert.equal(tx.hash, hash);
      assert.equal(tx.address, alice.address);
      assert.equal(tx.nonce, 0);
      assert.equal(tx.signature, signed.signature.toLowerCase());
      assert.equal(tx.timestamp, signed.transaction.timestamp);
      const listed = await t.result<{ hash: string }[]>("chain_getPendingTransactions");
      assert.ok(
        listed.some((p) => p.hash === hash),
        "it is in chain_getPendingTransactions",
      );
    });
  });
});
