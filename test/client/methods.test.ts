import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  type Address,
  type Block,
  type BlockHeader,
  type Client,
  type ConfirmedTransaction,
  type Hash,
  isConfirmedTransaction,
  type NodeInfo,
  type PendingTransaction,
  type PendingTransactionEntry,
  type Transaction,
  type TransactionsPage,
} from "../../src/client/index.ts";
import type { TestNode } from "../helpers/testNode.ts";
import {
  assertAddress,
  assertAddressList,
  assertBlock,
  assertConfirmedTx,
  assertHash,
  assertHeader,
  assertNodeInfo,
  assertPendingEntry,
  assertPendingTx,
  headerOf,
} from "../helpers/shapes.ts";
import { accountAt, CHAIN_ID, DEV_BALANCE, DEV_STAKE, NETWORK_ID, UNKNOWN_HASH } from "../rpc/support.ts";
import { type Equal, expectType, startClientNode, WAIT } from "./support.ts";

/**
 * Every method once through the client, on a real dev node: the static type of each result
 * (checked by tsc through expectType) and its runtime shape (checked by test/helpers/shapes.ts)
 * must agree.
 */
describe("client methods: typed results of every method", () => {
  let t: TestNode;
  let client: Client;
  let sent: ConfirmedTransaction;
  before(async () => {
    ({ t, client } = await startClientNode());
    const wallet = client.wallet(accountAt(t, 1).privateKey);
    const hash = await wallet.transfer(accountAt(t, 2).address, 777);
    sent = await client.waitForTransaction(hash, WAIT);
  });
  after(() => t?.stop()); // runs even when before() or a test fails

  it("block methods", async () => {
    const head = await client.getRecentBlockNumber();
    expectType<Equal<typeof head, number>>();
    assert.ok(head >= sent.block_number, `head ${head} is at or past block ${sent.block_number}`);

    const recent = await client.getRecentBlock();
    expectType<Equal<typeof recent, Block<Transaction>>>();
    assertBlock(recent, true, "recent block");

    const full = await client.getBlockByNumber({ number: sent.block_number, getFullTransactions: true });
    expectType<Equal<typeof full, Block<Transaction> | null>>();
    assertBlock(full, true, "block by number, full");
    assert.equal(full.transactions[sent.index]?.hash, sent.hash);

    const hashes = await client.getBlockByNumber({ number: sent.block_number });
    expectType<Equal<typeof hashes, Block<Hash> | null>>();
    assertBlock(hashes, false, "block by number, hashes");
    assert.equal(hashes.transactions[sent.index], sent.hash);

    const byHash = await client.getBlockByHash({ hash: sent.block_hash, getFullTransactions: true });
    expectType<Equal<typeof byHash, Block<Transaction> | null>>();
    assert.deepEqual(byHash, full);
    const byHashLean = await client.getBlockByHash({ hash: sent.block_hash, getFullTransactions: false });
    expectType<Equal<typeof byHashLean, Block<Hash> | null>>();
    assert.deepEqual(byHashLean, hashes);

    assert.equal(await client.getBlockByNumber({ number: 1_000_000 }), null, "not found is null");
    assert.equal(await client.getBlockByHash({ hash: UNKNOWN_HASH }), null);

    const blocks = await client.getBlocks({ from: 0, to: sent.block_number });
    expectType<Equal<typeof blocks, Block<Transaction>[]>>();
    assert.equal(blocks.length, sent.block_number + 1);
    blocks.forEach((block, i) => {
      assertBlock(block, true, `blocks[${i}]`);
    });

    const headers = await client.getBlockHeaders({ from: 0, to: sent.block_number });
    expectType<Equal<typeof headers, BlockHeader[]>>();
    headers.forEach((header, i) => {
      assertHeader(header, `headers[${i}]`);
      assert.deepEqual(header, headerOf(blocks[i] as Block), `header ${i} is its block without transactions`);
    });
  });

  it("per-block lookups by number and by hash", async () => {
    const { block_number: number, block_hash: hash } = sent;
    const counts = [
      await client.getBlockTransactionCountByNumber({ number }),
      await client.getBlockTransactionCountByHash({ hash }),
    ] as const;
    expectType<Equal<(typeof counts)[0], number | null>>();
    expectType<Equal<(typeof counts)[1], number | null>>();
    assert.deepEqual(counts, [1, 1]);

    const proposers = [
      await client.getProposerByNumber({ number }),
      await client.getProposerByHash({ hash }),
    ];
    expectType<Equal<(typeof proposers)[number], Address | null>>();
    for (const proposer of proposers) {
      assertAddress(proposer, "proposer");
      assert.equal(proposer, accountAt(t, 0).address, "the dev validator proposes");
    }

    const validators = [
      await client.getValidatorsByNumber({ number }),
      await client.getValidatorsByHash({ hash }),
    ];
    expectType<Equal<(typeof validators)[number], Address[] | null>>();
    for (const list of validators) {
      assertAddressList(list, "validators");
      assert.deepEqual(list, [accountAt(t, 0).address]);
    }
    assert.equal(await client.getProposerByNumber({ number: 1_000_000 }), null);
    assert.equal(await client.getValidatorsByHash({ hash: UNKNOWN_HASH }), null);
    assert.equal(await client.getBlockTransactionCountByHash({ hash: UNKNOWN_HASH }), null);
  });

  it("transaction lookups", async () => {
    const byHash = await client.getTransactionByHash({ hash: sent.hash });
    expectType<Equal<typeof byHash, ConfirmedTransaction | PendingTransaction | null>>();
    assert.ok(byHash !== null && isConfirmedTransaction(byHash), "committed");
    assertConfirmedTx(byHash, "by hash");
    assert.deepEqual(byHash, sent);

    const byNumber = await client.getTransactionByBlockNumberAndIndex({
      block_number: sent.block_number,
      index: sent.index,
    });
    expectType<Equal<typeof byNumber, ConfirmedTransaction | null>>();
    assert.deepEqual(byNumber, sent);
    const byBlockHash = await client.getTransactionByBlockHashAndIndex({
      block_hash: sent.block_hash,
      index: sent.index,
    });
    expectType<Equal<typeof byBlockHash, ConfirmedTransaction | null>>();
    assert.deepEqual(byBlockHash, sent);
    assert.equal(await client.getTransactionByHash({ hash: UNKNOWN_HASH }), null);
    assert.equal(
      await client.getTransactionByBlockNumberAndIndex({ block_number: sent.block_number, index: 99 }),
      null,
    );
  });

  it("an account's history, a page at a time", async () => {
    // Alice (account 1) sent `sent`; now she receives one (from account 6, whom no other test uses).
    const alice = accountAt(t, 1).address;
    const more = await client.wallet(accountAt(t, 6).privateKey).transfer(alice, 1);
    const newest = await client.waitForTransaction(more, WAIT);
    const page = await client.getTransactionsByAddress({ address: alice, limit: 1 });
    expectType<Equal<typeof page, TransactionsPage>>();
    assert.deepEqual(page.transactions, [newest]);
    assertConfirmedTx(page.transactions[0], "history entry");
    assert.equal(typeof page.next_cursor, "string");
    const rest = await client.getTransactionsByAddress({
      address: alice,
      limit: 1,
      cursor: page.next_cursor as string,
    });
    assert.deepEqual(rest, { transactions: [sent], next_cursor: null });
    const received = await client.getTransactionsByAddress({
      address: accountAt(t, 2).address,
      from_block: sent.block_number,
      to_block: sent.block_number,
    });
    assert.deepEqual(received.transactions, [sent], "bob received the first transfer");
  });

  it("sending signed transactions, singly and in a batch, and the pending list", async () => {
    const wallet = client.wallet(accountAt(t, 3).privateKey);
    const one = await wallet.signTransaction({
      nonce: -1,
      timestamp: Date.now(),
      operation: { type: "SET_VALUE", ref: `/users/${wallet.address}/one`, value: 1 },
    });
    const two = await wallet.signTransaction({
      nonce: -1,
      timestamp: Date.now(),
      operation: { type: "SET_VALUE", ref: `/users/${wallet.address}/two`, value: [2] },
    });
    const single = await client.sendSignedTransaction(one);
    expectType<Equal<typeof single, Hash>>();
    assertHash(single, "single hash");
    assert.equal(single, one.signature.slice(0, 66), "the hash is the one embedded in the signature");

    const three = await wallet.signTransaction({
      nonce: -1,
      timestamp: Date.now(),
      operation: { type: "SET_VALUE", ref: `/users/${wallet.address}/three`, value: { n: 3 } },
    });
    const batch = await client.sendSignedTransactionBatch({ tx_list: [two, three] });
    expectType<Equal<typeof batch, Hash[]>>();
    assert.deepEqual(batch, [two.signature.slice(0, 66), three.signature.slice(0, 66)]);

    // Right after admission they may still be pending; whatever is listed has the pending shape.
    const pending = await client.getPendingTransactions();
    expectType<Equal<typeof pending, PendingTransactionEntry[]>>();
    pending.forEach((entry, i) => {
      assertPendingEntry(entry, `pending[${i}]`);
    });
    const maybePending = await client.getTransactionByHash({ hash: single });
    if (maybePending !== null && !isConfirmedTransaction(maybePending)) assertPendingTx(maybePending);

    for (const hash of [single, ...batch]) {
      assert.equal((await client.waitForTransaction(hash, WAIT)).result.code, 0, `transaction ${hash}`);
    }
  });

  it("account methods", async () => {
    const [validator, bob] = [accountAt(t, 0), accountAt(t, 2)];
    const balance = await client.getBalance({ address: bob.address });
    expectType<Equal<typeof balance, number>>();
    assert.equal(balance, DEV_BALANCE + 777);
    const stake = await client.getConsensusStakeAmount({ address: validator.address });
    expectType<Equal<typeof stake, number>>();
    assert.equal(stake, DEV_STAKE);
    const nonce = await client.getNonce({ address: accountAt(t, 1).address });
    expectType<Equal<typeof nonce, number>>();
    assert.equal(nonce, 1);
    const isValidator = await client.isValidator({ address: validator.address });
    expectType<Equal<typeof isValidator, boolean>>();
    assert.equal(isValidator, true);
    assert.equal(await client.isValidator({ address: bob.address }), false);
  });

  it("network methods", async () => {
    const listening = await client.isListening();
    expectType<Equal<typeof listening, boolean>>();
    assert.equal(typeof listening, "boolean");
    const info = await client.getNodeInfo();
    expectType<Equal<typeof info, NodeInfo>>();
    assertNodeInfo(info);
    const peers = await client.getPeerCount();
    expectType<Equal<typeof peers, number>>();
    assert.equal(peers, 0, "a dev node has no peers");
    const syncing = await client.isSyncing();
    expectType<Equal<typeof syncing, boolean>>();
    assert.equal(syncing, false);
    const networkId = await client.getNetworkId();
    expectType<Equal<typeof networkId, number>>();
    assert.equal(networkId, NETWORK_ID);
    const chainId = await client.getChainId();
    expectType<Equal<typeof chainId, number>>();
    assert.equal(chainId, CHAIN_ID);
  });

  it("request() by JSON-RPC name, typed by the method table", async () => {
    const balance = await client.request("chain_getBalance", { address: accountAt(t, 4).address });
    expectType<Equal<typeof balance, number>>();
    assert.equal(balance, DEV_BALANCE);
    const info = await client.request("net_nodeInfo");
    expectType<Equal<typeof info, NodeInfo>>();
    assert.deepEqual(info, await client.getNodeInfo());
  });
});
