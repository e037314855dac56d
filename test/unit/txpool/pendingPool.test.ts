import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  balancePath,
  type JsonValue,
  type StateReader,
  type Tx,
  type TxBody,
  txSize,
} from "../../../src/chain/index.ts";
import { hexToBytes, privateKeyToAddress, signObject } from "../../../src/crypto/index.ts";
import { Admission, PendingPool } from "../../../src/txpool/index.ts";

/**
 * PendingPool, the one face of the pool that the consensus host, the dev producer and sync get:
 * what a block may take (within the block limits, in arrival order), whether a proposed
 * transaction is the one the pool verified, and a committed block's transactions leaving it.
 */

const CHAIN_ID = 100;
const NOW = 1_700_000_000_000;
const KEY = hexToBytes("0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d");
const SENDER = privateKeyToAddress(KEY);

function setup(limits = { maxBlockTxs: 2, maxBlockBytes: 1024 * 1024 }) {
  const leaves = new Map<string, JsonValue>([[balancePath(SENDER), 1_000]]);
  const state: StateReader = {
    getLeaf: (path) => leaves.get(path),
    leafPathsBelow: () => [],
  };
  const removed: string[][] = [];
  const admission = new Admission(
    { state: () => state, isCommitted: () => false },
    { savePending: async () => undefined, removePending: async (hashes) => void removed.push([...hashes]) },
    {
      chainId: CHAIN_ID,
      maxTxBytes: 100 * 1024,
      maxPoolTxs: 100,
      maxPoolTxsPerAccount: 16,
      replayWindowMs: 60_000,
    },
    () => NOW,
  );
  return { admission, pool: new PendingPool(admission, limits), removed };
}

const submitTransfers = (admission: Admission, count: number) =>
  Promise.all(
    Array.from({ length: count }, (_, nonce) => {
      const transaction: TxBody = {
        nonce,
        timestamp: NOW,
        operation: { type: "SET_VALUE", ref: `/transfer/${SENDER}/${SENDER}/k${nonce}/value`, value: 1 },
      };
      return admission.submit({ signature: signObject(transaction, KEY, CHAIN_ID), transaction });
    }),
  );

describe("PendingPool", () => {
  it("selects the oldest pending transactions within the block limits", async () => {
    const { admission, pool } = setup();
    const hashes = await submitTransfers(admission, 3);
    assert.equal(pool.size, 3);
    assert.deepEqual(
      pool.selectForBlock().map((tx) => tx.hash),
      hashes.slice(0, 2),
      "maxBlockTxs",
    );
    const one = admission.pool.get(hashes[0] as string) as Tx;
    const bytes = setup({ maxBlockTxs: 10, maxBlockBytes: 2 + txSize(one) });
    await submitTransfers(bytes.admission, 3);
    assert.equal(bytes.pool.selectForBlock().length, 1, "maxBlockBytes");
  });

  it("holds a transaction only with the signature it was admitted with", async () => {
    const { admission, pool } = setup();
    const [hash] = await submitTransfers(admission, 1);
    const tx = admission.pool.get(hash as string) as Tx;
    assert.equal(pool.holds(tx), true);
    assert.equal(pool.holds({ ...tx, signature: `${tx.signature.slice(0, -2)}00` }), false);
    assert.equal(pool.holds({ ...tx, hash: `0x${"ab".repeat(32)}` }), false);
  });

  it("removes a committed block's transactions from the pool, not through the journal", async () => {
    const { admission, pool, removed } = setup();
    const hashes = await submitTransfers(admission, 3);
    pool.removeCommitted(hashes.slice(0, 2));
    assert.equal(pool.size, 1);
    assert.deepEqual(
      admission.pool.list().map((tx) => tx.hash),
      hashes.slice(2),
    );
    // The block's own write removed their journal entries (BlockWrite.journalRemovals).
    assert.deepEqual(removed, []);
  });
});
