import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { verifyMerkleProof } from "@ethereumjs/mpt";
import { open } from "lmdb";
import {
  type Chain,
  type JsonValue,
  readValue,
  StateReads,
  StateUnavailableError,
  TooManyLeavesError,
  type Tx,
} from "../../../src/chain/index.ts";
import { canonicalJson, hexToBytes, utf8Bytes } from "../../../src/crypto/index.ts";
import { DATABASES, LmdbStore, type RetentionOptions } from "../../../src/storage/index.ts";
import { seededRandom } from "../../helpers/seededRandom.ts";
import { ACCOUNTS, openChain, produce, transfer } from "../../helpers/smallChain.ts";
import { withTempDir } from "../../helpers/tempDir.ts";

/**
 * Reads of the data tree at past heights and their proofs (chain/stateReads.ts) on a real LMDB
 * store: every value read at height h equals what the head answered when h was the head, and
 * every proof verifies against block h's state root with @ethereumjs/mpt, a trie implementation
 * independent of ours.
 */

/** Rebuilt objects have no prototype (valueRead.ts); compared as the JSON they are sent as. */
const plain = (value: JsonValue): JsonValue => JSON.parse(JSON.stringify(value)) as JsonValue;

const LIMITS = { maxValueLeaves: 10_000, maxProofLeaves: 256 };
const withDir = (run: (dir: string) => Promise<void>) => withTempDir("state-reads", run);

/** A SET_VALUE by account `i` (block form: Chain.execute does not check signatures). */
function userWrite(nonces: Map<string, number>, i: number, suffix: string, value: JsonValue): Tx {
  const tx = transfer(nonces, [i, i, 1]);
  const address = ACCOUNTS[i] as string;
  // Lower case in the write: the chain stores the checksum form, and reads must find it.
  const ref = `/users/${address.toLowerCase()}${suffix}`;
  return { ...tx, operation: { type: "SET_VALUE", ref, value } };
}

/** A random value: leaves, nested objects, arrays (one leaf), and null (a deletion). */
function randomValue(random: () => number, depth = 0): JsonValue {
  const pick = random();
  if (pick < 0.15) return null;
  if (pick < 0.35) return Math.floor(random() * 1000);
  if (pick < 0.45) return `s${Math.floor(random() * 100)}`;
  if (pick < 0.5) return [1, "two", { three: 3 }];
  if (depth >= 2) return true;
  const out: Record<string, JsonValue> = {};
  const members = 1 + Math.floor(random() * 3);
  for (let m = 0; m < members; m++) out[`k${Math.floor(random() * 4)}`] = randomValue(random, depth + 1);
  return out;
}

const SUFFIXES = ["", "/a", "/a/k1", "/b", "/a/k0/k2", "/c/k3"];

/** Paths read back at every height: each account's data, its parts, and paths never written. */
const readPaths = (): string[] =>
  ACCOUNTS.slice(0, 3).flatMap((address) => [
    ...SUFFIXES.map((suffix) => `/users/${address}${suffix}`),
    `/users/${address}/never`,
  ]);

async function writeBlocks(chain: Chain, blocks: number, seed: number): Promise<void> {
  const random = seededRandom(seed);
  const nonces = new Map<string, number>();
  for (let b = 0; b < blocks; b++) {
    const txs = Array.from({ length: 4 }, () => {
      const i = Math.floor(random() * 3);
      const suffix = SUFFIXES[Math.floor(random() * SUFFIXES.length)] as string;
      return userWrite(nonces, i, suffix, randomValue(random));
    });
    await produce(chain, txs);
  }
}

/** The value the head answers now, for each path. */
const headValues = (store: LmdbStore, paths: readonly string[]): Map<string, JsonValue> =>
  new Map(paths.map((path) => [path, readValue(store, path, LIMITS.maxValueLeaves)]));

async function assertProves(
  stateRoot: string,
  ref: string,
  value: JsonValue | undefined,
  proof: Uint8Array[],
): Promise<void> {
  const proven = await verifyMerkleProof(utf8Bytes(ref), proof, {
    root: hexToBytes(stateRoot),
    useKeyHashing: true,
  });
  const expected = value === undefined ? null : utf8Bytes(canonicalJson(value));
  assert.deepEqual(proven === null ? null : [...proven], expected === null ? null : [...expected], ref);
}

describe("state reads at past heights, with proofs", () => {
  it("answers every kept height as its head did, and proves it against the block's state root", () =>
    withDir(async (dir) => {
      const store = new LmdbStore(dir, { retainStates: 0, retainBlocks: 0 });
      const chain = await openChain(store);
      const reads = new StateReads(store, LIMITS);
      const paths = readPaths();
      const seen: Map<string, JsonValue>[] = [headValues(store, paths)];
      for (let b = 1; b <= 25; b++) {
        await writeBlocks(chain, 1, 100 + b);
        seen.push(headValues(store, paths));
      }
      for (let height = 0; height < seen.length; height++) {
        const stateRoot = store.getBlock(height)?.header.state_root as string;
        for (const path of paths) {
          const expected = seen[height]?.get(path) as JsonValue;
          assert.deepEqual(plain(reads.value(path, height)), plain(expected), `${path} at ${height}`);
          const proof = reads.prove(path, height);
          assert.equal(proof.stateRoot, stateRoot);
          assert.deepEqual(plain(proof.value), plain(expected), `proven ${path} at ${height}`);
          await assertProves(
            stateRoot,
            path,
            proof.leaves === undefined ? (expected ?? undefined) : undefined,
            proof.proof,
          );
          for (const leaf of proof.leaves ?? []) {
            assert.ok(leaf.ref.startsWith(`${path}/`));
            await assertProves(stateRoot, leaf.ref, leaf.value, leaf.proof);
          }
        }
      }
      await store.close();
    }));

  it("reads paths named like Object's own members as data", () =>
    withDir(async (dir) => {
      const store = new LmdbStore(dir);
      await openChain(store);
      const reads = new StateReads(store, LIMITS);
      for (const path of ["/constructor/x", "/__proto__", "/toString", "/hasOwnProperty/a"]) {
        assert.equal(reads.value(path), null, path);
        assert.equal(reads.prove(path).value, null, path);
      }
      await store.close();
    }));

  it("reads written paths in any address case, at the head and in the past", () =>
    withDir(async (dir) => {
      const store = new LmdbStore(dir);
      const chain = await openChain(store);
      const nonces = new Map<string, number>();
      await produce(chain, [userWrite(nonces, 0, "/profile", { name: "ada", langs: ["en"] })]);
      await produce(chain, [userWrite(nonces, 0, "/profile/name", "grace")]);
      const reads = new StateReads(store, LIMITS);
      const checksum = ACCOUNTS[0] as string;
      assert.deepEqual(plain(reads.value(`/users/${checksum}/profile`, 1)), { name: "ada", langs: ["en"] });
      assert.deepEqual(plain(reads.value(`/users/${checksum}/profile`)), { name: "grace", langs: ["en"] });
      assert.equal(reads.value(`/users/${checksum}/profile/name`, 1), "ada");
      assert.equal(reads.value(`/users/${checksum}/profile/missing`), null);
      await store.close();
    }));

  it("refuses a future height, a pruned one, and a subtree over the limit", () =>
    withDir(async (dir) => {
      const retention: RetentionOptions = { retainStates: 3, retainBlocks: 0 };
      const store = new LmdbStore(dir, retention);
      const chain = await openChain(store);
      await writeBlocks(chain, 8, 7);
      await store.pruned(); // pruning runs just after each block, in a write of its own
      const reads = new StateReads(store, { maxValueLeaves: 2, maxProofLeaves: 2 });
      const path = `/users/${ACCOUNTS[0]}/never`;
      assert.throws(
        () => reads.value(path, 9),
        (error) => error instanceof StateUnavailableError && error.reason === "future" && error.height === 8,
      );
      assert.ok(store.statesFrom() > 0, "states were pruned");
      for (const read of [() => reads.value(path, 1), () => reads.prove(path, 0)]) {
        assert.throws(
          read,
          (error) =>
            error instanceof StateUnavailableError &&
            error.reason === "pruned" &&
            error.height === store.statesFrom(),
        );
      }
      assert.equal(reads.value(path, store.statesFrom()), null, "the lowest kept state is readable");
      // Eight funded accounts: /account holds more than 2 leaves, at the head and in the past.
      assert.throws(() => reads.value("/account"), TooManyLeavesError);
      assert.throws(() => reads.value("/account", 7), TooManyLeavesError);
      assert.throws(() => reads.prove("/account"), TooManyLeavesError);
      assert.equal(
        Object.keys(reads.value(`/account/${ACCOUNTS[5]}`) as object).length,
        1,
        "within the limit",
      );
      await store.close();
    }));

  it("forgets deleted paths with the states that could hold them", () =>
    withDir(async (dir) => {
      const store = new LmdbStore(dir, { retainStates: 2, retainBlocks: 0 });
      const chain = await openChain(store);
      const nonces = new Map<string, number>();
      for (let b = 0; b < 12; b++) {
        // Every block replaces account 0's object, deleting the leaves of the one before.
        await produce(chain, [userWrite(nonces, 0, "/obj", { [`k${b}`]: b })]);
      }
      await store.pruned(); // pruning runs just after each block, in a write of its own
      const deleted = [...store.deletedPathsBelow(`/users/${ACCOUNTS[0]}`)];
      // Only what the kept states (the head and its parent) could still hold is remembered.
      assert.ok(deleted.length <= 2, `deleted paths kept: ${deleted.join(", ")}`);
      const reads = new StateReads(store, LIMITS);
      assert.deepEqual(plain(reads.value(`/users/${ACCOUNTS[0]}/obj`, 11)), { k10: 10 });
      assert.deepEqual(plain(reads.value(`/users/${ACCOUNTS[0]}/obj`)), { k11: 11 });
      await store.close();
    }));

  it("lists subtrees only from where a store upgraded from before deletions were recorded", () =>
    withDir(async (dir) => {
      let store = new LmdbStore(dir, { retainStates: 0, retainBlocks: 0 });
      let chain = await openChain(store);
      const nonces = new Map<string, number>();
      await produce(chain, [userWrite(nonces, 0, "/obj", { a: 1 })]);
      await produce(chain, [userWrite(nonces, 0, "/obj", { b: 2 })]);
      await store.close();
      // As a store written before `state_deleted` existed: no marker.
      const raw = open({ path: dir, compression: false });
      await raw.openDB({ name: DATABASES.meta }).remove("deletions_from");
      await raw.close();
      store = new LmdbStore(dir, { retainStates: 0, retainBlocks: 0 });
      chain = await openChain(store);
      await produce(chain, [userWrite(nonces, 0, "/obj", { c: 3 })]);
      const reads = new StateReads(store, LIMITS);
      const obj = `/users/${ACCOUNTS[0]}/obj`;
      assert.equal(store.deletionsFrom(), 3);
      assert.deepEqual(plain(reads.value(obj, 2)), { b: 2 }, "the height before the first recorded one");
      assert.throws(
        () => reads.value(obj, 1),
        (error) => error instanceof StateUnavailableError && error.reason === "pruned" && error.height === 2,
      );
      assert.equal(reads.value(`${obj}/a`, 1), 1, "a leaf needs no listing");
      await store.close();
    }));
});
