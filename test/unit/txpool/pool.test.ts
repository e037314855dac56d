import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { blockSize, type Tx, txSize } from "../../../src/chain/index.ts";
import { type PoolEntry, TxPool } from "../../../src/txpool/index.ts";

const ALICE = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const BOB = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";

let counter = 0;
function entry(
  address: string,
  nonce: number,
  debit = 0,
  unstake = 0,
  onceRef?: string,
  padding = 0,
): PoolEntry {
  counter += 1;
  const tx: Tx = {
    hash: `0x${counter.toString(16).padStart(64, "0")}`,
    address,
    signature: `0x${"00".repeat(97)}`,
    timestamp: 1_700_000_000_000,
    nonce,
    operation: { type: "SET_VALUE", ref: `/users/${address}/p`, value: "x".repeat(padding) },
  };
  return { tx, seq: counter, debit, unstake, onceRef };
}

describe("TxPool", () => {
  it("lists transactions in arrival order", () => {
    const pool = new TxPool();
    const entries = [entry(ALICE, 0), entry(BOB, -1), entry(ALICE, 1), entry(BOB, 0)];
    for (const e of entries) pool.add(e);
    assert.equal(pool.size, 4);
    assert.deepEqual(
      pool.list().map((tx) => tx.hash),
      entries.map((e) => e.tx.hash),
    );
    pool.remove(entries[1]?.tx.hash ?? "");
    assert.deepEqual(
      pool.list().map((tx) => tx.hash),
      [entries[0], entries[2], entries[3]].map((e) => e?.tx.hash),
      "removal keeps the others' order",
    );
  });

  it("keeps per-sender totals after add and remove", () => {
    const pool = new TxPool();
    const a0 = entry(ALICE, 0, 100, 0, "/transfer/a/b/k0");
    const a1 = entry(ALICE, 1, 0, 30, "/staking/a/k1");
    const au = entry(ALICE, -1, 5, 0, "/transfer/a/b/k2");
    const b0 = entry(BOB, 0, 7);
    for (const e of [a0, a1, au, b0]) pool.add(e);
    assert.deepEqual(pool.sender(ALICE), { count: 3, nonces: [0, 1], debit: 105, unstake: 30 });
    assert.deepEqual(pool.sender(BOB), { count: 1, nonces: [0], debit: 7, unstake: 0 });
    assert.ok(pool.hasOnceRef("/transfer/a/b/k0") && pool.hasOnceRef("/staking/a/k1"));
    assert.equal(pool.nextNonce(ALICE, 0), 2, "after pending 0 and 1");

    assert.equal(pool.remove(a0.tx.hash), true);
    assert.deepEqual(pool.sender(ALICE), { count: 2, nonces: [1], debit: 5, unstake: 30 });
    assert.equal(pool.hasOnceRef("/transfer/a/b/k0"), false, "once-ref released");
    assert.equal(pool.nextNonce(ALICE, 1), 2, "committed nonce 1 plus pending 1");

    pool.remove(a1.tx.hash);
    pool.remove(au.tx.hash);
    assert.deepEqual(
      pool.sender(ALICE),
      { count: 0, nonces: [], debit: 0, unstake: 0 },
      "empty sender resets",
    );
    assert.equal(pool.nextNonce(ALICE, 2), 2, "no pending: the committed nonce");
    assert.equal(pool.remove(a1.tx.hash), false, "removing twice is a no-op");
    assert.deepEqual(
      pool.sender(BOB),
      { count: 1, nonces: [0], debit: 7, unstake: 0 },
      "other sender untouched",
    );
    assert.equal(pool.size, 1);
  });

  it("nextNonce takes the committed nonce when it is ahead of the pending ones", () => {
    const pool = new TxPool();
    pool.add(entry(ALICE, 0));
    pool.add(entry(ALICE, 1));
    assert.equal(pool.nextNonce(ALICE, 0), 2);
    assert.equal(pool.nextNonce(ALICE, 1), 2, "nonce 0 committed, still in the pool");
    assert.equal(pool.nextNonce(ALICE, 5), 5, "committed nonce ahead of everything pending");
  });

  it("get and has find pending transactions by hash", () => {
    const pool = new TxPool();
    const e = entry(ALICE, 0);
    pool.add(e);
    assert.equal(pool.has(e.tx.hash), true);
    assert.equal(pool.get(e.tx.hash), e.tx);
    assert.equal(pool.get("0x00"), undefined);
  });

  it("select respects maxTxs", () => {
    const pool = new TxPool();
    const entries = Array.from({ length: 5 }, (_, i) => entry(ALICE, i));
    for (const e of entries) pool.add(e);
    assert.deepEqual(
      pool.select(3, 1 << 20, txSize).map((tx) => tx.nonce),
      [0, 1, 2],
      "the three oldest",
    );
    assert.equal(pool.select(10, 1 << 20, txSize).length, 5, "all when under the limit");
    assert.equal(pool.size, 5, "select does not remove");
  });

  it("select respects maxBytes, counting the block's canonical list exactly", () => {
    const pool = new TxPool();
    const entries = Array.from({ length: 6 }, (_, i) => entry(ALICE, i, 0, 0, undefined, 50 + i * 10));
    for (const e of entries) pool.add(e);
    const txs = entries.map((e) => e.tx);
    for (let n = 0; n <= txs.length; n++) {
      const exact = blockSize(txs.slice(0, n));
      const picked = pool.select(100, exact, txSize);
      assert.equal(picked.length, n, `a limit of exactly ${exact} bytes fits ${n} transactions`);
      assert.ok(blockSize(picked) <= exact, `block of ${n} fits its limit`);
      if (n > 0) {
        assert.equal(pool.select(100, exact - 1, txSize).length, n - 1, `one byte less fits ${n - 1}`);
      }
    }
  });

  it("select stops at the first transaction that does not fit (never skips ahead)", () => {
    const pool = new TxPool();
    const small1 = entry(ALICE, 0, 0, 0, undefined, 10);
    const big = entry(ALICE, 1, 0, 0, undefined, 5000);
    const small2 = entry(BOB, 0, 0, 0, undefined, 10);
    for (const e of [small1, big, small2]) pool.add(e);
    const picked = pool.select(100, 2000, txSize);
    assert.deepEqual(
      picked.map((tx) => tx.hash),
      [small1.tx.hash],
      "stops before the big one",
    );
  });
});
