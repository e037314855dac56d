import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import ainUtil from "@ainblockchain/ain-util";
import type { DerivedAccount } from "../../src/crypto/index.ts";
import { assertBlock, assertConfirmedTx, type ConfirmedTxJson } from "../helpers/shapes.ts";
import { startTestNode, type TestNode } from "../helpers/testNode.ts";
import { accountAt, CHAIN_ID, DEV_BALANCE, uniqueKey, waitForCommit } from "./support.ts";

const AMOUNT = 4_321;

/** A body signed by AI Network's own library, as an existing dApp would send it. */
function ainSigned(from: DerivedAccount, body: ainUtil.TransactionBody) {
  const signature = ainUtil.ecSignTransaction(body, Buffer.from(from.privateKey.slice(2), "hex"), CHAIN_ID);
  return { signature, transaction: body };
}

describe("a transaction signed with @ainblockchain/ain-util", () => {
  let t: TestNode;
  let alice: DerivedAccount;
  let bob: DerivedAccount;
  let tx: ConfirmedTxJson;
  let body: ainUtil.TransactionBody;
  let hash: string;
  before(async () => {
    t = await startTestNode();
    [alice, bob] = [accountAt(t, 1), accountAt(t, 2)];
  });
  after(() => t?.stop()); // runs even when before() or a test fails

  it("is accepted, with the hash ain-util computes, and committed within 2 s", async () => {
    body = {
      nonce: 0,
      timestamp: Date.now(),
      operation: {
        type: "SET_VALUE",
        ref: `/transfer/${alice.address}/${bob.address}/${uniqueKey("ain")}/value`,
        value: AMOUNT,
      },
    };
    hash = await t.result<string>("chain_sendSignedTransaction", ainSigned(alice, body));
    assert.equal(hash, `0x${ainUtil.hashTransaction(body).toString("hex")}`);
    tx = await waitForCommit(t, hash, 2_000);
  });

  it("moves the amount: both balances and the sender's nonce agree", async () => {
    assert.equal(await t.result("chain_getBalance", { address: alice.address }), DEV_BALANCE - AMOUNT);
    assert.equal(await t.result("chain_getBalance", { address: bob.address }), DEV_BALANCE + AMOUNT);
    assert.equal(await t.result("chain_getNonce", { address: alice.address }), 1);
    assert.equal(await t.result("chain_getNonce", { address: bob.address }), 0);
  });

  it("is reported by hash with block_hash, block_number, index and result {code: 0}", async () => {
    const byHash = await t.result("chain_getTransactionByHash", { hash });
    assertConfirmedTx(byHash);
    assert.equal(byHash.hash, hash);
    assert.equal(byHash.address, alice.address, "the sender is recovered from ain-util's signature");
    assert.equal(byHash.nonce, 0);
    assert.equal(byHash.timestamp, body.timestamp);
    assert.deepEqual(byHash.operation, body.operation);
    assert.deepEqual(byHash.result, { code: 0 });
    assert.equal(byHash.block_number, tx.block_number);
    assert.equal(byHash.block_hash, tx.block_hash);
    assert.equal(byHash.index, tx.index);
  });

  it("sits in its block, by number and by hash, with full transactions and with hashes", async () => {
    const { block_number: number, block_hash: blockHash, index } = tx;
    const fullByNumber = await t.result("chain_getBlockByNumber", { number, getFullTransactions: true });
    const fullByHash = await t.result("chain_getBlockByHash", { hash: blockHash, getFullTransactions: true });
    assertBlock(fullByNumber, true, `block ${number}`);
    assert.deepEqual(fullByHash, fullByNumber);
    assert.equal(fullByNumber.hash, blockHash);
    assert.equal(fullByNumber.number, number);
    const { block_hash: _h, block_number: _n, index: _i, result: _r, ...inBlock } = tx;
    assert.deepEqual(fullByNumber.transactions[index], inBlock);

    const hashesByNumber = await t.result("chain_getBlockByNumber", { number });
    const hashesByHash = await t.result("chain_getBlockByHash", {
      hash: blockHash,
      getFullTransactions: false,
    });
    assertBlock(hashesByNumber, false, `block ${number} (hashes)`);
    assert.deepEqual(hashesByHash, hashesByNumber);
    assert.equal(hashesByNumber.transactions[index], hash);
    assert.deepEqual(
      hashesByNumber.transactions,
      fullByNumber.transactions.map((entry) => entry.hash),
    );
  });

  it("is found by position, by block number and by block hash", async () => {
    const { block_number, block_hash, index } = tx;
    const byNumber = await t.result("chain_getTransactionByBlockNumberAndIndex", { block_number, index });
    const byBlockHash = await t.result("chain_getTransactionByBlockHashAndIndex", { block_hash, index });
    assert.deepEqual(byNumber, tx);
    assert.deepEqual(byBlockHash, tx);
  });

  it("is counted in its block", async () => {
    const count = await t.result<number>("chain_getBlockTransactionCountByNumber", {
      number: tx.block_number,
    });
    const block = await t.result<{ transactions: string[] }>("chain_getBlockByNumber", {
      number: tx.block_number,
    });
    assert.equal(count, block.transactions.length);
    assert.ok(count > tx.index, `count ${count} covers index ${tx.index}`);
  });

  it("also works unordered, with a parent_tx_hash and structured /users data", async () => {
    const unordered: ainUtil.TransactionBody = {
      nonce: -1,
      timestamp: Date.now(),
      parent_tx_hash: hash,
      operation: {
        type: "SET_VALUE",
        ref: `/users/${alice.address}/profile`,
        value: { name: "é", tags: ["a", "b"], score: 1.5 },
      },
    };
    const unorderedHash = await t.result<string>("chain_sendSignedTransaction", ainSigned(alice, unordered));
    assert.equal(unorderedHash, `0x${ainUtil.hashTransaction(unordered).toString("hex")}`);
    const committed = await waitForCommit(t, unorderedHash, 2_000);
    assert.equal(committed.parent_tx_hash, hash);
    assert.deepEqual(committed.operation, unordered.operation);
    assert.equal(await t.result("chain_getNonce", { address: alice.address }), 1, "nonce -1 uses no nonce");
  });
});
