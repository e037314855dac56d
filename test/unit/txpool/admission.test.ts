import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  balancePath,
  type JsonValue,
  noncePath,
  type SignedTxInput,
  type StateReader,
  stakePath,
  type Tx,
  type TxBody,
  TxRejectedError,
  type TxRejectReason,
} from "../../../src/chain/index.ts";
import {
  bytesToHex,
  hashObject,
  hexToBytes,
  privateKeyToAddress,
  signObject,
} from "../../../src/crypto/index.ts";
import {
  Admission,
  type AdmissionChainView,
  type PoolJournal,
  type TxPoolOptions,
} from "../../../src/txpool/index.ts";

const CHAIN_ID = 100;
const NOW = 1_700_000_000_000;
const HOUR_MS = 60 * 60 * 1000;

const ALICE_KEY = hexToBytes("0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d");
const BOB_KEY = hexToBytes("0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a");
const CAROL_KEY = hexToBytes("0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6");
const ALICE = privateKeyToAddress(ALICE_KEY);
const BOB = privateKeyToAddress(BOB_KEY);
const CAROL = privateKeyToAddress(CAROL_KEY);

/** Committed chain as admission sees it: leaves in a Map and a set of committed hashes. */
class FakeChain implements AdmissionChainView, StateReader {
  readonly leaves = new Map<string, JsonValue>();
  readonly committed = new Set<string>();

  constructor(entries: Record<string, JsonValue> = {}) {
    for (const [path, value] of Object.entries(entries)) this.leaves.set(path, value);
  }

  state(): StateReader {
    return this;
  }

  isCommitted(hash: string): boolean {
    return this.committed.has(hash);
  }

  getLeaf(path: string): JsonValue | undefined {
    return this.leaves.get(path);
  }

  *leafPathsBelow(path: string): Iterable<string> {
    for (const key of this.leaves.keys()) if (key.startsWith(`${path}/`)) yield key;
  }

  /** What committing `tx` does to the parts admission reads (nonce, committed index). */
  commit(tx: Tx): void {
    this.committed.add(tx.hash);
    if (tx.nonce >= 0) {
      const nonce = this.leaves.get(noncePath(tx.address));
      this.leaves.set(noncePath(tx.address), (typeof nonce === "number" ? nonce : 0) + 1);
    }
  }
}

/** A journal that records every call and keeps the journaled records like the store does. */
class RecordingJournal implements PoolJournal {
  readonly saves: { seq: number; tx: Tx }[][] = [];
  readonly removes: string[][] = [];
  readonly records = new Map<string, { seq: number; tx: Tx }>();
  failNext = false;

  async savePending(records: readonly { seq: number; tx: Tx }[]): Promise<void> {
    if (this.failNext) {
      this.failNext = false;
      throw new Error("journal write failed");
    }
    this.saves.push([...records]);
    for (const record of records) this.records.set(record.tx.hash, structuredClone(record));
  }

  async removePending(hashes: readonly string[]): Promise<void> {
    this.removes.push([...hashes]);
    for (const hash of hashes) this.records.delete(hash);
  }

  /** As LmdbPoolJournal.loadPending: keyed by hash, then sorted by seq. */
  load(): { seq: number; tx: Tx }[] {
    return [...this.records.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, record]) => structuredClone(record))
      .sort((a, b) => a.seq - b.seq);
  }
}

const BASE_OPTIONS: TxPoolOptions = {
  chainId: CHAIN_ID,
  maxTxBytes: 100 * 1024,
  maxPoolTxs: 100,
  maxPoolTxsPerAccount: 16,
  replayWindowMs: HOUR_MS,
};

function funded(): FakeChain {
  return new FakeChain({
    [balancePath(ALICE)]: 1000,
    [balancePath(BOB)]: 1000,
    [balancePath(CAROL)]: 1000,
  });
}

function setup(chain = funded(), options: Partial<TxPoolOptions> = {}, now: () => number = () => NOW) {
  const journal = new RecordingJournal();
  const admission = new Admission(chain, journal, { ...BASE_OPTIONS, ...options }, now);
  return { chain, journal, admission };
}

function signTx(key: Uint8Array, body: TxBody, chainId = CHAIN_ID): SignedTxInput {
  return { signature: signObject(body, key, chainId), transaction: body };
}

let keyCounter = 0;
/** A transfer from `from` with a fresh key, so every call makes a distinct transaction. */
function transfer(key: Uint8Array, nonce: number, amount = 1, to = CAROL, timestamp = NOW): SignedTxInput {
  keyCounter += 1;
  const from = privateKeyToAddress(key);
  return signTx(key, {
    nonce,
    timestamp,
    operation: { type: "SET_VALUE", ref: `/transfer/${from}/${to}/k${keyCounter}/value`, value: amount },
  });
}

function userWrite(key: Uint8Array, nonce: number, value: JsonValue = 1, timestamp = NOW): SignedTxInput {
  keyCounter += 1;
  const owner = privateKeyToAddress(key);
  return signTx(key, {
    nonce,
    timestamp,
    operation: { type: "SET_VALUE", ref: `/users/${owner}/n${keyCounter}`, value },
  });
}

function hashOf(input: SignedTxInput): string {
  return hashObject(input.transaction);
}

async function assertRejected(
  promise: Promise<unknown>,
  reason: TxRejectReason,
  index?: number,
): Promise<TxRejectedError> {
  let caught: unknown;
  try {
    await promise;
  } catch (error) {
    caught = error;
  }
  assert.ok(
    caught instanceof TxRejectedError,
    `expected a TxRejectedError (${reason}), got ${String(caught)}`,
  );
  assert.equal(caught.reason, reason, `expected reason ${reason}, got ${caught.reason}: ${caught.message}`);
  if (index !== undefined) assert.equal(caught.index, index, `expected the failing index ${index}`);
  return caught;
}

describe("Admission: acceptance", () => {
  it("admits a valid transaction, journals it, and returns its hash", async () => {
    const { admission, journal } = setup();
    const input = transfer(ALICE_KEY, 0, 10);
    const hash = await admission.submit(input);
    assert.equal(hash, hashOf(input));
    assert.ok(admission.pool.has(hash), "the pool holds it");
    assert.equal(journal.saves.length, 1, "journaled once");
    assert.equal(journal.saves[0]?.[0]?.tx.hash, hash);
    assert.equal(journal.saves[0]?.[0]?.tx.address, ALICE);
  });

  it("admits a gossiped transaction with every check but does not journal it", async () => {
    const { admission, journal } = setup();
    const announced: string[] = [];
    admission.admitted.add((txs) => announced.push(...txs.map((tx) => tx.hash)));
    const gossiped = transfer(ALICE_KEY, 0, 10);
    const hash = await admission.submitFromPeer(gossiped);
    assert.equal(hash, hashOf(gossiped));
    assert.ok(admission.pool.has(hash), "the pool holds it");
    assert.deepEqual(announced, [hash], "announced as admitted");
    assert.equal(journal.saves.length, 0, "no journal write: this node acknowledged it to no one");
    // The same checks as a submission: the next nonce follows the pooled one, a repeat is known.
    await assertRejected(admission.submitFromPeer(gossiped), "already_known");
    await assertRejected(admission.submitFromPeer(transfer(ALICE_KEY, 2)), "nonce_too_high");
    const own = await admission.submit(transfer(ALICE_KEY, 1, 10));
    assert.deepEqual(
      journal.saves.flat().map((record) => record.tx.hash),
      [own],
      "only the transaction submitted here is journaled",
    );
  });

  it("chains ordered nonces 0, 1, 2 from one sender", async () => {
    const { admission } = setup();
    for (const nonce of [0, 1, 2]) await admission.submit(transfer(ALICE_KEY, nonce));
    assert.equal(admission.pool.size, 3);
    assert.deepEqual(
      admission.pool.list().map((tx) => tx.nonce),
      [0, 1, 2],
      "arrival order is nonce order",
    );
    await assertRejected(admission.submit(transfer(ALICE_KEY, 4)), "nonce_too_high");
    await admission.submit(transfer(ALICE_KEY, 3));
  });

  it("keeps senders' nonces independent", async () => {
    const { admission } = setup();
    await admission.submit(transfer(ALICE_KEY, 0));
    await admission.submit(transfer(BOB_KEY, 0));
    await admission.submit(transfer(ALICE_KEY, 1));
    assert.equal(admission.pool.size, 3);
  });

  it("accepts an ordered transaction whatever its timestamp (only unordered ones are windowed)", async () => {
    const { admission } = setup();
    await admission.submit(userWrite(ALICE_KEY, 0, 1, 0));
    await admission.submit(userWrite(ALICE_KEY, 1, 1, NOW + 10 * HOUR_MS));
    assert.equal(admission.pool.size, 2);
  });
});

describe("Admission: rejection reasons", () => {
  it("nonce_too_low: below the committed nonce", async () => {
    const chain = funded();
    chain.leaves.set(noncePath(ALICE), 2);
    const { admission } = setup(chain);
    const error = await assertRejected(admission.submit(transfer(ALICE_KEY, 1)), "nonce_too_low");
    assert.deepEqual(error.detail, { expected: 2, actual: 1 });
    await admission.submit(transfer(ALICE_KEY, 2));
  });

  it("nonce_too_low: a nonce already pending", async () => {
    const { admission } = setup();
    await admission.submit(transfer(ALICE_KEY, 0));
    await assertRejected(admission.submit(transfer(ALICE_KEY, 0)), "nonce_too_low");
  });

  it("nonce_too_high: a gap after the next nonce", async () => {
    const { admission } = setup();
    const error = await assertRejected(admission.submit(transfer(ALICE_KEY, 1)), "nonce_too_high");
    assert.deepEqual(error.detail, { expected: 0, actual: 1 });
    assert.equal(admission.pool.size, 0, "nothing admitted");
  });

  it("already_known: the same transaction in the pool", async () => {
    const { admission } = setup();
    const input = transfer(ALICE_KEY, -1);
    await admission.submit(input);
    await assertRejected(admission.submit(input), "already_known");
    assert.equal(admission.pool.size, 1);
  });

  it("already_known: a committed transaction (before any nonce check)", async () => {
    const { admission, chain } = setup();
    const ordered = transfer(ALICE_KEY, 0);
    const unordered = transfer(BOB_KEY, -1);
    chain.committed.add(hashOf(ordered));
    chain.committed.add(hashOf(unordered));
    chain.leaves.set(noncePath(ALICE), 1);
    await assertRejected(admission.submit(ordered), "already_known");
    await assertRejected(admission.submit(unordered), "already_known");
  });

  it("stale_timestamp: an unordered transaction outside the replay window", async () => {
    const { admission } = setup();
    await assertRejected(admission.submit(userWrite(ALICE_KEY, -1, 1, NOW - HOUR_MS - 1)), "stale_timestamp");
    await assertRejected(admission.submit(userWrite(ALICE_KEY, -1, 1, NOW + HOUR_MS + 1)), "stale_timestamp");
    await admission.submit(userWrite(ALICE_KEY, -1, 1, NOW - HOUR_MS));
    await admission.submit(userWrite(ALICE_KEY, -1, 1, NOW + HOUR_MS));
    assert.equal(admission.pool.size, 2, "both window edges are inside");
  });

  it("stale_timestamp: follows the injected clock", async () => {
    let now = NOW;
    const { admission } = setup(funded(), {}, () => now);
    const input = userWrite(ALICE_KEY, -1, 1, NOW);
    now = NOW + HOUR_MS + 1;
    await assertRejected(admission.submit(input), "stale_timestamp");
    now = NOW + HOUR_MS;
    await admission.submit(input);
  });

  it("pool_full: the pool holds maxPoolTxs", async () => {
    const { admission } = setup(funded(), { maxPoolTxs: 2 });
    await admission.submit(transfer(ALICE_KEY, 0));
    await admission.submit(transfer(BOB_KEY, 0));
    await assertRejected(admission.submit(transfer(CAROL_KEY, 0, 1, ALICE)), "pool_full");
    admission.removeCommitted([admission.pool.list()[0]?.hash ?? ""]);
    await admission.submit(transfer(CAROL_KEY, 0, 1, ALICE));
  });

  it("account_pool_full: one sender holds maxPoolTxsPerAccount", async () => {
    const { admission } = setup(funded(), { maxPoolTxsPerAccount: 2 });
    await admission.submit(transfer(ALICE_KEY, 0));
    await admission.submit(transfer(ALICE_KEY, -1));
    await assertRejected(admission.submit(transfer(ALICE_KEY, 1)), "account_pool_full");
    await assertRejected(admission.submit(transfer(ALICE_KEY, -1)), "account_pool_full");
    await admission.submit(transfer(BOB_KEY, 0));
    assert.equal(admission.pool.size, 3, "other senders are unaffected");
  });

  it("permission_denied: a forbidden path", async () => {
    const { admission } = setup();
    const forbidden: TxBody[] = [
      {
        nonce: 0,
        timestamp: NOW,
        operation: { type: "SET_VALUE", ref: `/account/${ALICE}/balance`, value: 1e9 },
      },
      {
        nonce: 0,
        timestamp: NOW,
        operation: { type: "SET_VALUE", ref: `/transfer/${BOB}/${ALICE}/x/value`, value: 1 },
      },
      { nonce: 0, timestamp: NOW, operation: { type: "SET_VALUE", ref: `/users/${BOB}/x`, value: 1 } },
      { nonce: 0, timestamp: NOW, operation: { type: "SET_VALUE", ref: "/apps/x", value: 1 } },
    ];
    for (const body of forbidden) {
      await assertRejected(admission.submit(signTx(ALICE_KEY, body)), "permission_denied");
    }
    assert.equal(admission.pool.size, 0);
  });

  it("permission_denied: a transfer key already pending or committed", async () => {
    const { admission, chain } = setup();
    const ref = `/transfer/${ALICE}/${BOB}/same/value`;
    await admission.submit(
      signTx(ALICE_KEY, { nonce: 0, timestamp: NOW, operation: { type: "SET_VALUE", ref, value: 1 } }),
    );
    await assertRejected(
      admission.submit(
        signTx(ALICE_KEY, { nonce: 1, timestamp: NOW, operation: { type: "SET_VALUE", ref, value: 2 } }),
      ),
      "permission_denied",
    );
    // Same key written with lowercase addresses is the same key.
    const lower = `/transfer/${ALICE.toLowerCase()}/${BOB.toLowerCase()}/same/value`;
    await assertRejected(
      admission.submit(
        signTx(ALICE_KEY, {
          nonce: 1,
          timestamp: NOW,
          operation: { type: "SET_VALUE", ref: lower, value: 2 },
        }),
      ),
      "permission_denied",
    );
    chain.leaves.set(`/transfer/${ALICE}/${BOB}/done/value`, 5);
    const done = `/transfer/${ALICE}/${BOB}/done/value`;
    await assertRejected(
      admission.submit(
        signTx(ALICE_KEY, {
          nonce: 1,
          timestamp: NOW,
          operation: { type: "SET_VALUE", ref: done, value: 5 },
        }),
      ),
      "permission_denied",
    );
    const stakeRef = `/staking/${ALICE}/s/value`;
    chain.leaves.set(stakeRef, 5);
    await assertRejected(
      admission.submit(
        signTx(ALICE_KEY, {
          nonce: 1,
          timestamp: NOW,
          operation: { type: "SET_VALUE", ref: stakeRef, value: 5 },
        }),
      ),
      "permission_denied",
    );
  });

  it("insufficient_balance: counts pending debits (two transfers that each fit but not together)", async () => {
    const { admission } = setup();
    await assertRejected(admission.submit(transfer(ALICE_KEY, 0, 1001)), "insufficient_balance");
    await admission.submit(transfer(ALICE_KEY, 0, 600));
    const error = await assertRejected(admission.submit(transfer(ALICE_KEY, 1, 600)), "insufficient_balance");
    assert.deepEqual(error.detail, { expected: 600, actual: 400 });
    await admission.submit(transfer(ALICE_KEY, 1, 400));
  });

  it("insufficient_balance: stakes count as debits; unstakes count against the stake", async () => {
    const chain = funded();
    chain.leaves.set(stakePath(ALICE), 100);
    const { admission } = setup(chain);
    const stake = (nonce: number, key: string, value: number) =>
      signTx(ALICE_KEY, {
        nonce,
        timestamp: NOW,
        operation: { type: "SET_VALUE", ref: `/staking/${ALICE}/${key}/value`, value },
      });
    await admission.submit(stake(0, "s1", 900));
    await assertRejected(admission.submit(transfer(ALICE_KEY, 1, 101)), "insufficient_balance");
    await assertRejected(admission.submit(stake(1, "u0", -101)), "insufficient_balance");
    await admission.submit(stake(1, "u1", -60));
    await assertRejected(admission.submit(stake(2, "u2", -41)), "insufficient_balance");
    await admission.submit(stake(2, "u3", -40));
  });

  it("invalid_operation: a bad amount, path or body", async () => {
    const { admission } = setup();
    await assertRejected(admission.submit(transfer(ALICE_KEY, 0, 0)), "invalid_operation");
    await assertRejected(admission.submit(transfer(ALICE_KEY, 0, 1.5)), "invalid_operation");
    await assertRejected(
      admission.submit(
        signTx(ALICE_KEY, {
          nonce: 0,
          timestamp: NOW,
          operation: { type: "SET_VALUE", ref: "a//b", value: 1 },
        }),
      ),
      "invalid_operation",
    );
    await assertRejected(
      admission.submit(
        signTx(ALICE_KEY, {
          nonce: -2,
          timestamp: NOW,
          operation: { type: "SET_VALUE", ref: `/users/${ALICE}/x`, value: 1 },
        }),
      ),
      "invalid_operation",
    );
    assert.equal(admission.pool.size, 0);
  });

  it("signature reasons: invalid_signature, wrong_chain_id, hash_mismatch, tx_too_large", async () => {
    const { admission } = setup(funded(), { maxTxBytes: 400 });
    const good = transfer(ALICE_KEY, 0);
    const badV = hexToBytes(good.signature);
    badV[96] = 5;
    await assertRejected(admission.submit({ ...good, signature: bytesToHex(badV) }), "invalid_signature");
    await assertRejected(
      admission.submit(signTx(ALICE_KEY, good.transaction, CHAIN_ID + 1)),
      "wrong_chain_id",
    );
    await assertRejected(
      admission.submit({ signature: good.signature, transaction: { ...good.transaction, nonce: 1 } }),
      "hash_mismatch",
    );
    await assertRejected(admission.submit(userWrite(ALICE_KEY, 0, "x".repeat(400))), "tx_too_large");
    assert.equal(admission.pool.size, 0);
  });

  it("does not admit a transaction whose journal write fails", async () => {
    const { admission, journal } = setup();
    const input = transfer(ALICE_KEY, 0, 10);
    journal.failNext = true;
    await assert.rejects(admission.submit(input), /journal write failed/);
    assert.equal(admission.pool.size, 0, "the pool is unchanged");
    assert.equal(admission.pool.sender(ALICE).debit, 0, "no pending debit is left behind");
    assert.equal(await admission.submit(input), hashOf(input), "the same transaction can be submitted again");
  });
});

describe("Admission: submitBatch", () => {
  it("admits all entries in order, each checked against the earlier ones, with one journal write", async () => {
    const { admission, journal } = setup();
    const inputs = [
      transfer(ALICE_KEY, 0, 300),
      transfer(ALICE_KEY, 1, 300),
      transfer(BOB_KEY, 0),
      transfer(ALICE_KEY, 2, 300),
    ];
    const hashes = await admission.submitBatch(inputs);
    assert.deepEqual(hashes, inputs.map(hashOf), "hashes in input order");
    assert.equal(journal.saves.length, 1, "one journal write");
    assert.deepEqual(
      journal.saves[0]?.map((r) => r.tx.hash),
      hashes,
    );
    assert.equal(admission.pool.size, 4);
  });

  for (const [name, failing, reason] of [
    ["a nonce gap", () => transfer(ALICE_KEY, 5), "nonce_too_high"],
    ["a balance spent by earlier entries", () => transfer(ALICE_KEY, 2, 500), "insufficient_balance"],
    ["a duplicate of entry 0", undefined, "already_known"],
  ] as const) {
    it(`is all-or-none: ${name} at index 2 leaves the pool unchanged and names index 2`, async () => {
      const { admission, journal } = setup();
      const existing = transfer(CAROL_KEY, 0, 1, ALICE);
      await admission.submit(existing);
      const savesBefore = journal.saves.length;
      const first = transfer(ALICE_KEY, 0, 300);
      const inputs = [
        first,
        transfer(ALICE_KEY, 1, 300),
        failing === undefined ? first : failing(),
        transfer(BOB_KEY, 0),
      ];
      const error = await assertRejected(admission.submitBatch(inputs), reason, 2);
      assert.match(error.message, /^transaction 2: /);
      assert.deepEqual(
        admission.pool.list().map((tx) => tx.hash),
        [hashOf(existing)],
        "only the earlier tx remains",
      );
      assert.deepEqual(
        admission.pool.sender(ALICE),
        { count: 0, nonces: [], debit: 0, unstake: 0 },
        "no per-sender residue",
      );
      assert.equal(journal.saves.length, savesBefore, "nothing journaled");
      // The same first entries are admissible afterwards: the failed batch left no trace.
      await admission.submitBatch(inputs.slice(0, 2));
      assert.equal(admission.pool.size, 3);
    });
  }

  it("removes the whole batch when the journal write fails", async () => {
    const { admission, journal } = setup();
    journal.failNext = true;
    await assert.rejects(
      admission.submitBatch([transfer(ALICE_KEY, 0), transfer(ALICE_KEY, 1)]),
      /journal write failed/,
    );
    assert.equal(admission.pool.size, 0);
    assert.equal(admission.pool.nextNonce(ALICE, 0), 0);
  });
});

describe("Admission: restore and commits", () => {
  it("restore() re-admits journaled transactions in order and drops invalid ones via removePending", async () => {
    let now = NOW;
    const first = setup(funded(), {}, () => now);
    const t0 = transfer(ALICE_KEY, 0, 10);
    const t1 = transfer(ALICE_KEY, 1, 10);
    const unordered = userWrite(BOB_KEY, -1, 1, NOW);
    const t2 = transfer(ALICE_KEY, 2, 10);
    for (const input of [t0, t1, unordered, t2]) await first.admission.submit(input);

    // Meanwhile t0 committed (its journal entry still there, as after a crash) and an hour passed.
    const committedTx = first.admission.pool.get(hashOf(t0));
    assert.ok(committedTx !== undefined);
    first.chain.commit(committedTx);
    now = NOW + HOUR_MS + 1;

    const savesBefore = first.journal.saves.length;
    const second = new Admission(first.chain, first.journal, BASE_OPTIONS, () => now);
    const restored = await second.restore(first.journal.load());
    assert.equal(restored, 2, "t1 and t2 come back");
    assert.deepEqual(
      second.pool.list().map((tx) => tx.hash),
      [hashOf(t1), hashOf(t2)],
      "in arrival order",
    );
    assert.deepEqual(
      first.journal.removes,
      [[hashOf(t0), hashOf(unordered)]],
      "dropped entries leave the journal",
    );
    assert.equal(first.journal.saves.length, savesBefore, "restored entries are not journaled again");
    assert.equal(second.pool.sender(ALICE).debit, 20, "pending debits rebuilt");
    await second.submit(transfer(ALICE_KEY, 3));
  });

  it("restore() calls removePending only when something was dropped", async () => {
    const first = setup();
    await first.admission.submit(transfer(ALICE_KEY, 0));
    const second = new Admission(first.chain, first.journal, BASE_OPTIONS, () => NOW);
    assert.equal(await second.restore(first.journal.load()), 1);
    assert.deepEqual(first.journal.removes, []);
  });

  it("keeps arrival order across two restarts (new transactions sort after restored ones)", async () => {
    const chain = funded();
    const journal = new RecordingJournal();
    const session1 = new Admission(chain, journal, BASE_OPTIONS, () => NOW);
    const inputs = [0, 1, 2, 3].map((nonce) => transfer(ALICE_KEY, nonce));
    for (const input of inputs) await session1.submit(input);
    // A block commits nonces 0 and 1 (the store removes them from the journal in the same write).
    for (const input of inputs.slice(0, 2)) {
      const tx = session1.pool.get(hashOf(input));
      assert.ok(tx !== undefined);
      chain.commit(tx);
      journal.records.delete(tx.hash);
    }

    const session2 = new Admission(chain, journal, BASE_OPTIONS, () => NOW);
    assert.equal(await session2.restore(journal.load()), 2);
    const late = transfer(ALICE_KEY, 4);
    await session2.submit(late);

    const session3 = new Admission(chain, journal, BASE_OPTIONS, () => NOW);
    const restored = await session3.restore(journal.load());
    assert.deepEqual(
      session3.pool.list().map((tx) => tx.nonce),
      [2, 3, 4],
      "every acknowledged transaction survives the second restart, in nonce order",
    );
    assert.equal(restored, 3);
    assert.deepEqual(journal.removes, [], "nothing was dropped");
  });

  it("nextNonce stays right while a committed transaction is still in the pool", async () => {
    const { admission, chain } = setup();
    await admission.submit(transfer(ALICE_KEY, 0));
    await admission.submit(transfer(ALICE_KEY, 1));
    // Block commits nonce 0 only; the pool has not yet removed it.
    const tx0 = admission.pool.list()[0];
    assert.ok(tx0 !== undefined);
    chain.commit(tx0);
    assert.equal(admission.pool.nextNonce(ALICE, 1), 2);
    await assertRejected(admission.submit(transfer(ALICE_KEY, 1)), "nonce_too_low");
    await admission.submit(transfer(ALICE_KEY, 2));
    admission.removeCommitted([tx0.hash]);
    await assertRejected(admission.submit(transfer(ALICE_KEY, 1)), "nonce_too_low");
    await admission.submit(transfer(ALICE_KEY, 3));
    assert.deepEqual(
      admission.pool.list().map((tx) => tx.nonce),
      [1, 2, 3],
    );
  });

  it("accepts the next nonce when every pending transaction was just committed", async () => {
    const { admission, chain } = setup();
    await admission.submit(transfer(ALICE_KEY, 0));
    const tx0 = admission.pool.list()[0];
    assert.ok(tx0 !== undefined);
    chain.commit(tx0);
    await admission.submit(transfer(ALICE_KEY, 1));
    assert.equal(admission.pool.size, 2);
  });
});

describe("Admission: prune after another proposer's block", () => {
  it("drops transactions whose nonce the chain passed and unordered ones outside the window", async () => {
    let now = NOW;
    const { chain, journal, admission } = setup(funded(), {}, () => now);
    const mine = transfer(ALICE_KEY, 0, 10);
    const next = transfer(ALICE_KEY, 1, 10);
    const unordered = userWrite(BOB_KEY, -1, 1, NOW);
    for (const input of [mine, next, unordered]) await admission.submit(input);
    assert.deepEqual(await admission.prune(), [], "nothing is stale yet");

    // Another node's transaction (another hash) took Alice's nonce 0.
    chain.commit({ ...(admission.pool.get(hashOf(mine)) as Tx), hash: `0x${"e".repeat(64)}` });
    now = NOW + HOUR_MS + 1;
    const dropped = await admission.prune();
    assert.deepEqual(dropped.sort(), [hashOf(mine), hashOf(unordered)].sort());
    assert.deepEqual(
      admission.pool.list().map((tx) => tx.hash),
      [hashOf(next)],
      "nonce 1 is next now and stays",
    );
    assert.deepEqual(journal.removes.at(-1)?.sort(), dropped.sort(), "the journal forgets them too");
  });
});
