import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  canonicalJson,
  checkSignedHash,
  hexToBytes,
  type SignedHashJob,
  signObject,
} from "../../../src/crypto/index.ts";
import { SignatureWorkers } from "../../../src/node/signatureWorkers.ts";

const KEY = hexToBytes("0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a");

/** Valid jobs, and each third one broken in a different way (tampered body, other chain, garbage). */
function jobs(count: number): SignedHashJob[] {
  return Array.from({ length: count }, (_, i) => {
    const body = {
      nonce: -1,
      timestamp: i,
      operation: { type: "SET_VALUE", ref: `/users/x/${i}`, value: i },
    };
    const job = { canonical: canonicalJson(body), signature: signObject(body, KEY, 7), chainId: 7 };
    if (i % 9 === 3) return { ...job, canonical: canonicalJson({ ...body, timestamp: i + 1 }) };
    if (i % 9 === 6) return { ...job, chainId: 8 };
    if (i % 9 === 8) return { ...job, signature: "0x1234" };
    return job;
  });
}

describe("SignatureWorkers", () => {
  it("gives the same results as checking on this thread, in job order, over many calls", async () => {
    const pool = await SignatureWorkers.start(2);
    try {
      const all = jobs(600);
      const calls = [all.slice(0, 1), all.slice(1, 100), all.slice(100, 101), all.slice(101)];
      const results = (await Promise.all(calls.map((c) => pool.verify(c)))).flat();
      assert.deepEqual(results, all.map(checkSignedHash));
      assert.ok(results.some((r) => !r.ok && r.reason === "hash_mismatch"));
      assert.ok(results.some((r) => !r.ok && r.reason === "wrong_chain_id"));
      assert.ok(results.some((r) => !r.ok && r.reason === "invalid_signature"));
      assert.ok(results.filter((r) => r.ok).length > 300);
    } finally {
      await pool.close();
    }
  });

  it("checks a dead thread's jobs on the calling thread: none is lost", async () => {
    const pool = await SignatureWorkers.start(1);
    try {
      const all = jobs(200);
      const pending = pool.verify(all);
      // Kill the only worker while its batch is in flight (after the turn's flush sent it).
      await new Promise((resolve) => setImmediate(resolve));
      const internals = pool as unknown as { threads: { worker: { terminate(): Promise<number> } }[] };
      await internals.threads[0]?.worker.terminate();
      assert.deepEqual(await pending, all.map(checkSignedHash));
      assert.equal(pool.size, 0);
      assert.deepEqual(await pool.verify(all.slice(0, 3)), all.slice(0, 3).map(checkSignedHash));
    } finally {
      await pool.close();
    }
  });

  it("answers jobs still queued when it is closed", async () => {
    const pool = await SignatureWorkers.start(2);
    const all = jobs(50);
    const pending = pool.verify(all);
    await pool.close();
    assert.deepEqual(await pending, all.map(checkSignedHash));
  });
});
