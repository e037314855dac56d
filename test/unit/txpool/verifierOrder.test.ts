import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { balancePath, type Tx, type TxBody } from "../../../src/chain/index.ts";
import {
  checkSignedHash,
  hexToBytes,
  privateKeyToAddress,
  type SignatureVerifier,
  type SignedHashJob,
  type SignedHashResult,
  signObject,
} from "../../../src/crypto/index.ts";
import { Admission, type PoolJournal } from "../../../src/txpool/index.ts";

const CHAIN_ID = 100;
const NOW = 1_700_000_000_000;
const KEY = hexToBytes("0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d");
const ALICE = privateKeyToAddress(KEY);
const BOB = "0x000000000000000000000000000000000000b0B0";

/** Answers each verify() call only when told to, so a test decides the order results arrive in. */
class ManualVerifier implements SignatureVerifier {
  readonly calls: { jobs: readonly SignedHashJob[]; release(): void }[] = [];

  verify(jobs: readonly SignedHashJob[]): Promise<SignedHashResult[]> {
    return new Promise((resolve) => {
      this.calls.push({ jobs, release: () => resolve(jobs.map(checkSignedHash)) });
    });
  }

  async close(): Promise<void> {}
}

const journal: PoolJournal = { savePending: async () => undefined, removePending: async () => undefined };
const leaves = new Map<string, unknown>([[balancePath(ALICE), 1_000]]);
const chain = {
  state: () => ({ getLeaf: (path: string) => leaves.get(path) as never, leafPathsBelow: () => [] }),
  isCommitted: () => false,
};
const options = {
  chainId: CHAIN_ID,
  maxTxBytes: 100 * 1024,
  maxPoolTxs: 100,
  maxPoolTxsPerAccount: 16,
  replayWindowMs: 3_600_000,
};

const transfer = (nonce: number, key: string) => {
  const body: TxBody = {
    nonce,
    timestamp: NOW,
    operation: { type: "SET_VALUE", ref: `/transfer/${ALICE}/${BOB}/${key}/value`, value: 1 },
  };
  return { signature: signObject(body, KEY, CHAIN_ID), transaction: body };
};

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe("admission with signature checks off the event loop", () => {
  it("runs the stateful checks in arrival order even when signature results arrive reversed", async () => {
    const verifier = new ManualVerifier();
    const admission = new Admission(chain, journal, options, () => NOW, verifier);
    const first = admission.submit(transfer(0, "a"));
    const second = admission.submit(transfer(1, "b"));
    const third = admission.submitBatch([transfer(2, "c"), transfer(3, "d")]);
    await flush();
    assert.equal(verifier.calls.length, 3);
    // Results come back last-first: nonce 1 must still be judged after nonce 0.
    for (const call of [...verifier.calls].reverse()) call.release();
    const hashes = [await first, await second, ...(await third)];
    assert.equal(hashes.length, 4);
    assert.deepEqual(
      admission.pool.list().map((tx: Tx) => tx.nonce),
      [0, 1, 2, 3],
    );
  });

  it("a rejected submission does not hold up or break the ones after it", async () => {
    const verifier = new ManualVerifier();
    const admission = new Admission(chain, journal, options, () => NOW, verifier);
    const tampered = transfer(0, "x");
    tampered.transaction = { ...tampered.transaction, timestamp: NOW + 1 }; // signature no longer matches
    const bad = admission.submit(tampered);
    const good = admission.submit(transfer(0, "y"));
    await flush();
    for (const call of verifier.calls) call.release();
    await assert.rejects(bad, (error: Error & { reason?: string }) => error.reason === "hash_mismatch");
    assert.match(await good, /^0x[0-9a-f]{64}$/);
  });

  it("a shape or size rejection is reported without waiting for any signature work", async () => {
    const verifier = new ManualVerifier();
    const admission = new Admission(chain, journal, { ...options, maxTxBytes: 50 }, () => NOW, verifier);
    await assert.rejects(
      admission.submit(transfer(0, "z")),
      (error: Error & { reason?: string }) => error.reason === "tx_too_large",
    );
    assert.equal(verifier.calls.length, 0, "nothing was sent to be verified");
  });
});
