import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { describe, it } from "node:test";
import { open } from "lmdb";
import { pino } from "pino";
import {
  balanceOf,
  Chain,
  checkManifestChain,
  chunkInfo,
  chunkItems,
  decodeManifest,
  encodeManifest,
  manifestHash,
  nonceOf,
  SnapshotAssembler,
  SnapshotError,
  type SnapshotManifest,
} from "../../../src/chain/index.ts";
import { bytesToHex, canonicalJson, type DerivedAccount, keccak256 } from "../../../src/crypto/index.ts";
import { openSnapshotFile, writeSnapshotFile } from "../../../src/node/snapshotFile.ts";
import { NO_TEST_FAULTS } from "../../../src/faults/index.ts";
import { createSnapshot } from "../../../src/node/index.ts";
import { PeriodicSnapshots, SnapshotStore } from "../../../src/node/snapshots.ts";
import { saveGenesis } from "../../../src/node/home.ts";
import { ENVIRONMENT_OPTIONS, SCHEMA_VERSION } from "../../../src/storage/schema.ts";
import { LmdbStore, type StoreSnapshotView } from "../../../src/storage/index.ts";
import { DEV_ACCOUNTS, DEV_GENESIS, devTransfer, produceSigned } from "../../helpers/signedDevChain.ts";
import { withTempDir } from "../../helpers/tempDir.ts";

const ACCOUNTS = DEV_ACCOUNTS;
const GENESIS = DEV_GENESIS;
const transfer = devTransfer;
const produce = produceSigned;

/** The dev chain, opened (genesis committed) on a new store at `path`. */
async function openDevChain(path: string): Promise<{ store: LmdbStore; chain: Chain }> {
  const store = new LmdbStore(path);
  const chain = new Chain(store, GENESIS);
  await chain.open();
  return { store, chain };
}

/** A dev chain of three blocks of transfers (one unordered) in `dir`, snapshotted to `file`. */
async function chainWithSnapshot(
  dir: string,
  chunkTargetBytes?: number,
): Promise<{ file: string; manifest: SnapshotManifest; store: LmdbStore; chain: Chain }> {
  const { store, chain } = await openDevChain(join(dir, "source"));
  const [a, b, c] = ACCOUNTS.slice(1, 4) as [DerivedAccount, DerivedAccount, DerivedAccount];
  const t = GENESIS.genesis_time;
  await produce(chain, [transfer(a, b, 10, 0, t), transfer(b, c, 3, 0, t)]);
  await produce(chain, [transfer(a, c, 7, 1, t), transfer(c, a, 1, -1, t + 2000)]);
  await produce(chain, [transfer(a, b, 1, 2, t)]);
  const file = join(dir, "chain.snapshot");
  const view = store.snapshotView();
  try {
    const manifest = await writeSnapshotFile(
      view,
      GENESIS,
      file,
      chunkTargetBytes === undefined ? {} : { chunkTargetBytes },
    );
    return { file, manifest, store, chain };
  } finally {
    view.done();
  }
}

async function assemble(file: string): Promise<SnapshotAssembler> {
  const snapshot = await openSnapshotFile(file);
  try {
    const assembler = new SnapshotAssembler(snapshot.manifest);
    for (let i = 0; i < snapshot.manifest.chunks.length; i++) assembler.add(i, await snapshot.readChunk(i));
    return assembler;
  } finally {
    await snapshot.close();
  }
}

describe("snapshot format (src/chain/snapshot.ts, src/node/snapshotFile.ts)", () => {
  it("cuts items into chunks no larger than the target (unless one item is), in order, losing none", () => {
    const leaves = Array.from({ length: 50 }, (_, i) => [`/a/${String(i).padStart(3, "0")}`, i * 7] as const);
    const chunks = [...chunkItems(leaves, 100)];
    assert.ok(chunks.length > 5, `50 leaves of ~15 bytes make several 100-byte chunks, got ${chunks.length}`);
    const back: unknown[] = [];
    chunks.forEach((chunk, i) => {
      assert.ok(chunk.bytes.length <= 100, `chunk ${i}: ${chunk.bytes.length} bytes`);
      const items = JSON.parse(Buffer.from(chunk.bytes).toString("utf8")) as unknown[];
      assert.equal(items.length, chunk.items, `chunk ${i} holds what it says`);
      back.push(...items);
    });
    assert.deepEqual(
      back,
      leaves.map(([p, v]) => [p, v]),
    );
    const big = [["/big", "x".repeat(500)] as const];
    assert.equal([...chunkItems(big, 100)].length, 1, "an item over the target makes a chunk of its own");
    const info = chunkInfo("state", chunks[0] as { bytes: Uint8Array; items: number });
    assert.equal(info.hash, bytesToHex(keccak256((chunks[0] as { bytes: Uint8Array }).bytes)));
    assert.equal(info.bytes, chunks[0]?.bytes.length);
  });

  it("round-trips: the file's manifest decodes to what was written, every chunk checks, the root rebuilds", async () => {
    await withTempDir("snapshot-unit", async (dir) => {
      const { file, manifest, store, chain } = await chainWithSnapshot(dir, 200);
      try {
        assert.equal(manifest.height, 3);
        assert.ok(manifest.chunks.filter((c) => c.kind === "state").length > 1, "small chunks: several");
        const again = decodeManifest(encodeManifest(manifest));
        assert.deepEqual(again, manifest, "encode then decode gives the manifest back");
        const restore = (await assemble(file)).finish();
        // Assembled without a known genesis: the genesis chunks give it back whole.
        assert.deepEqual(restore.genesis, GENESIS);
        assert.equal(restore.block.hash, chain.head().hash);
        assert.equal(restore.leaves.size, manifest.leaf_count);
        const hashes = restore.txs.map((c) => c.tx.hash);
        assert.ok(
          chain.head().tx_hashes.every((h) => hashes.includes(h)),
          "the head block's transactions",
        );
        assert.ok(
          restore.txs.some((c) => c.tx.nonce === -1),
          "the recent unordered transaction, so that it cannot be replayed on the restored node",
        );

        // Into a new store: the chain opens at the head with no blocks between 1 and head-1.
        const target = new LmdbStore(join(dir, "target"));
        try {
          target.restoreSnapshot(restore);
          const restored = new Chain(target, GENESIS);
          await restored.open();
          assert.equal(restored.head().hash, chain.head().hash);
          assert.equal(target.getBlock(1), undefined, "no block below the snapshot");
          assert.equal(target.blocksFrom(), 3);
          assert.equal(target.statesFrom(), 3);
          for (const account of ACCOUNTS) {
            assert.equal(
              balanceOf(target, account.address),
              balanceOf(store, account.address),
              account.address,
            );
            assert.equal(nonceOf(target, account.address), nonceOf(store, account.address), account.address);
          }
          assert.deepEqual(restored.validators(), chain.validators());
          // The history index holds the kept block's transactions only: not the older unordered
          // one the snapshot carries for the replay check (its block 2 is not here).
          const [, a, b, c] = ACCOUNTS as [DerivedAccount, DerivedAccount, DerivedAccount, DerivedAccount];
          const everything = { fromBlock: 0, upTo: { block: 2 ** 32 - 1, index: 2 ** 32 - 1 }, limit: 100 };
          const head = chain.head();
          assert.deepEqual(target.addressHistory(a.address, everything), [
            { block: 3, index: 0, hash: head.tx_hashes[0] },
          ]);
          assert.deepEqual(target.addressHistory(b.address, everything), [
            { block: 3, index: 0, hash: head.tx_hashes[0] },
          ]);
          assert.deepEqual(target.addressHistory(c.address, everything), []);
          // Both make the same next block.
          const [d, e] = ACCOUNTS.slice(4, 6) as [DerivedAccount, DerivedAccount];
          const next = transfer(d, e, 5, 0, GENESIS.genesis_time);
          await produce(restored, [next]);
          await produce(chain, [next]);
          assert.equal(restored.head().hash, chain.head().hash, "block 4 is the same on both");
          assert.deepEqual(
            target.addressHistory(e.address, everything).map((entry) => entry.block),
            [4],
            "blocks after the restore are indexed",
          );
          assert.throws(() => target.restoreSnapshot(restore), /already holds chain data/);
        } finally {
          await target.close();
        }
      } finally {
        await store.close();
      }
    });
  });

  it("refuses another format version, another chain, a changed chunk, and a state that is not the block's", async () => {
    await withTempDir("snapshot-unit", async (dir) => {
      const { file, manifest, store } = await chainWithSnapshot(dir);
      try {
        const json = (change: (m: Record<string, unknown>) => void): Uint8Array => {
          const raw = JSON.parse(canonicalJson(manifest)) as Record<string, unknown>;
          change(raw);
          return Buffer.from(JSON.stringify(raw));
        };
        const refuses = (bytes: Uint8Array, code: string, message: RegExp) =>
          assert.throws(
            () => decodeManifest(bytes),
            (e: unknown) => e instanceof SnapshotError && e.code === code && message.test(e.message),
          );
        refuses(
          json((m) => {
            m.version = 2;
          }),
          "unsupported_version",
          /version 2; this node reads version 1/,
        );
        refuses(
          json((m) => {
            m.format = "other";
          }),
          "not_a_snapshot",
          /not a chain-node-snapshot/,
        );
        // The certificate's signatures are bound to the chain id (v), so another id fails them.
        refuses(
          json((m) => {
            m.chain_id = 5;
          }),
          "bad_manifest",
          /commit certificate of block 3 does not verify/,
        );
        refuses(
          json((m) => {
            m.chunks = (m.chunks as { kind: string }[]).filter((c) => c.kind !== "genesis");
          }),
          "bad_manifest",
          /no genesis chunk/,
        );
        refuses(
          json((m) => {
            m.height = 2;
          }),
          "bad_manifest",
          /block 3 is not the height 2/,
        );
        refuses(
          json((m) => {
            m.leaf_count = 1;
          }),
          "bad_manifest",
          /leaf_count/,
        );

        assert.throws(
          () => checkManifestChain(manifest, { ...GENESIS, chain_id: 101 }),
          /snapshot is of chain id 100; this home's genesis has chain id 101/,
        );
        assert.throws(
          () => checkManifestChain(manifest, { ...GENESIS, genesis_time: 1 }),
          (e: unknown) => e instanceof SnapshotError && e.code === "wrong_chain",
        );

        const snapshot = await openSnapshotFile(file);
        // The first state chunk (the genesis chunks come first).
        const at = manifest.chunks.findIndex((c) => c.kind === "state");
        const first = await snapshot.readChunk(at);
        await snapshot.close();
        const changed = Uint8Array.from(first);
        changed[changed.length - 2] = (changed[changed.length - 2] ?? 0) ^ 1;
        assert.throws(
          () => new SnapshotAssembler(manifest).add(at, changed),
          (e: unknown) =>
            e instanceof SnapshotError &&
            e.code === "chunk_mismatch" &&
            new RegExp(`chunk ${at}`).test(e.message),
        );

        // A liar's manifest: a leaf changed and the chunk's hash recomputed; the root gives it away.
        const items = JSON.parse(Buffer.from(first).toString("utf8")) as [string, unknown][];
        const balance = items.findIndex(([path]) => path.endsWith("/balance"));
        (items[balance] as [string, unknown])[1] = 1;
        const forged = Buffer.from(canonicalJson(items));
        const lying: SnapshotManifest = {
          ...manifest,
          chunks: manifest.chunks.map((c, i) =>
            i === at ? chunkInfo("state", { bytes: forged, items: items.length }) : c,
          ),
        };
        const assembler = new SnapshotAssembler(decodeManifest(encodeManifest(lying)));
        assembler.add(at, forged);
        const rest = await openSnapshotFile(file);
        for (let i = 0; i < manifest.chunks.length; i++)
          if (i !== at) assembler.add(i, await rest.readChunk(i));
        await rest.close();
        assert.throws(
          () => assembler.finish(),
          (e: unknown) =>
            e instanceof SnapshotError && e.code === "state_root_mismatch" && /state_root/.test(e.message),
        );

        // A truncated file is no snapshot.
        const truncated = join(dir, "truncated.snapshot");
        writeFileSync(truncated, readFileSync(file).subarray(0, 100));
        await assert.rejects(openSnapshotFile(truncated), /not a complete chain-node-snapshot file/);
      } finally {
        await store.close();
      }
    });
  });

  it("yields to the event loop while it walks the blocks for unordered transactions", async () => {
    // The join bench found it: a validator's snapshot read two hours of blocks' transactions
    // (160,000) in one turn and stalled its RPC and consensus. Here each block read takes ~2 ms,
    // so a walk of 40 blocks that never yields would see no turn of the event loop pass.
    await withTempDir("snapshot-unit", async (dir) => {
      const { store, chain } = await openDevChain(join(dir, "source"));
      const [a, b] = ACCOUNTS.slice(1, 3) as [DerivedAccount, DerivedAccount];
      for (let n = 0; n < 40; n++) await produce(chain, [transfer(a, b, 1, -1, GENESIS.genesis_time + n)]);
      let turns = 0;
      let counting = true;
      const count = (): void => {
        turns++;
        if (counting) setImmediate(count);
      };
      setImmediate(count);
      const turnsAtRead: number[] = [];
      const view = store.snapshotView();
      const slow: StoreSnapshotView = {
        ...view,
        leaves: () => view.leaves(),
        validatorSetChanges: () => view.validatorSetChanges(),
        getBlock: (number) => {
          turnsAtRead.push(turns);
          const until = performance.now() + 2;
          while (performance.now() < until);
          return view.getBlock(number);
        },
      };
      try {
        const manifest = await writeSnapshotFile(slow, GENESIS, join(dir, "slow.snapshot"));
        const txItems = manifest.chunks.filter((c) => c.kind === "txs").reduce((n, c) => n + c.items, 0);
        assert.equal(txItems, 40, "every block's unordered transaction is in the snapshot");
        const walk = turnsAtRead.slice(2); // the head and genesis are read before the walk
        const during = (walk.at(-1) ?? 0) - (walk[0] ?? 0);
        assert.ok(during >= 3, `the event loop turned ${during} times during an ~80 ms walk`);
      } finally {
        counting = false;
        view.done();
        await store.close();
      }
    });
  });

  it("snapshot create opens a home read-only: one of an older schema is refused, not upgraded beside its node", async () => {
    // Opened writable, a newer binary's `snapshot create` upgraded the schema of a home whose
    // (older) node was running on it.
    await withTempDir("snapshot-unit", async (home) => {
      saveGenesis(home, GENESIS);
      const { store, chain } = await openDevChain(join(home, "data"));
      const [a, b] = ACCOUNTS.slice(1, 3) as [DerivedAccount, DerivedAccount];
      await produce(chain, [transfer(a, b, 1, 0)]);
      await store.close();
      const schemaVersion = async (set?: number): Promise<number> => {
        const env = open({ path: join(home, "data"), ...ENVIRONMENT_OPTIONS });
        const meta = env.openDB<number, string>({ name: "meta" });
        if (set !== undefined) await meta.put("schema_version", set);
        const version = meta.get("schema_version") as number;
        await env.close();
        return version;
      };
      const out = join(home, "out.snapshot");
      const made = await createSnapshot({ home, out, faults: NO_TEST_FAULTS });
      assert.equal(made.manifest.height, 1, "a current home is snapshotted");
      await schemaVersion(SCHEMA_VERSION - 1);
      await assert.rejects(
        createSnapshot({ home, out: join(home, "old.snapshot"), faults: NO_TEST_FAULTS }),
        new RegExp(`schema version ${SCHEMA_VERSION - 1}; this node reads ${SCHEMA_VERSION}`),
      );
      assert.equal(await schemaVersion(), SCHEMA_VERSION - 1, "left as it was");
    });
  });

  it("periodic snapshots are written on their own thread, each of exactly its block though the next commits at once", async () => {
    await withTempDir("snapshot-unit", async (home) => {
      saveGenesis(home, GENESIS);
      const { store, chain } = await openDevChain(join(home, "data"));
      const periodic = new PeriodicSnapshots({
        store,
        home,
        settings: { interval: 2, keep: 2 },
        log: pino({ level: "silent" }),
        failpoint: undefined,
        chunkTargetBytes: undefined,
      });
      chain.committed.add((block) => periodic.committed(block));
      try {
        const [a, b] = ACCOUNTS.slice(1, 3) as [DerivedAccount, DerivedAccount];
        const snapshots = new SnapshotStore(home);
        const until = async (heights: number[]) => {
          for (const deadline = Date.now() + 20_000; snapshots.list().join() !== heights.join(); ) {
            assert.ok(
              Date.now() < deadline,
              `snapshots ${heights.join(", ")} within 20 s: ${snapshots.list().join(", ")}`,
            );
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
        };
        // Back to back: the thread starts (loads its modules) while block 3 is made, so block 2's
        // snapshot is of block 2 only because block 3's write waits for its read transaction to
        // open (LmdbStore.holdWritesUntil).
        let nonce = 0;
        for (; nonce < 3; nonce++) await produce(chain, [transfer(a, b, 1, nonce)]);
        await until([2]);
        for (; nonce < 5; nonce++) await produce(chain, [transfer(a, b, 1, nonce)]);
        await until([2, 4]);
        for (const height of [2, 4]) {
          const manifest = await snapshots.readManifest(height);
          assert.equal(
            manifest.block_hash,
            store.getBlock(height)?.hash,
            `snapshot ${height} is of block ${height}`,
          );
          assert.equal(manifest.leaf_count > 0, true);
        }
      } finally {
        await periodic.stop();
        await store.close();
      }
    });
  });

  it("takes block 0's hash from the caller when given, instead of recomputing the genesis root", async () => {
    await withTempDir("snapshot-unit", async (dir) => {
      const { store, chain } = await openDevChain(join(dir, "source"));
      const [a, b] = ACCOUNTS.slice(1, 3) as [DerivedAccount, DerivedAccount];
      await produce(chain, [transfer(a, b, 1, 0)]);
      const view = store.snapshotView();
      try {
        // A wrong hash is what is compared with block 0: refused.
        await assert.rejects(
          writeSnapshotFile(view, GENESIS, join(dir, "wrong.snapshot"), {
            genesisHash: `0x${"00".repeat(32)}`,
          }),
          /another chain than genesis.json/,
        );
        const given = await writeSnapshotFile(view, GENESIS, join(dir, "given.snapshot"), {
          genesisHash: store.getBlock(0)?.hash as string,
        });
        const computed = await writeSnapshotFile(view, GENESIS, join(dir, "computed.snapshot"));
        assert.equal(manifestHash(given), manifestHash(computed), "the same snapshot either way");
      } finally {
        view.done();
        await store.close();
      }
    });
  });
});
