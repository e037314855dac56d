import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { open } from "lmdb";
import type { Chain } from "../../../src/chain/index.ts";
import { toChecksumAddress } from "../../../src/crypto/index.ts";
import { DATABASES, LmdbStore, type RetentionOptions, SCHEMA_VERSION } from "../../../src/storage/index.ts";
import { ACCOUNTS, type Move, openChain, produce, transfer } from "../../helpers/smallChain.ts";
import { withTempDir } from "../../helpers/tempDir.ts";

/**
 * The history index (storage/historyIndex.ts, `tx_by_address`) on a real LMDB store: written in
 * each block's write (and commitTogether's), read newest first in pages, pruned with its blocks,
 * and rebuilt when a schema-5 directory is opened, also after that upgrade was killed halfway.
 * Expected lists are computed from the stored blocks, not with the code under test.
 */

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const withDir = (run: (dir: string) => Promise<void>) => withTempDir("history", run);
const ARCHIVE: RetentionOptions = { retainStates: 0, retainBlocks: 0 };

interface Position {
  block: number;
  index: number;
  hash: string;
}

/**
 * An account's history read straight from the stored blocks: the transactions it sent, and the
 * transfers to it that succeeded (the recipient is the third path segment), newest first.
 */
function expectedHistory(store: LmdbStore, address: string, from = 1): Position[] {
  const out: Position[] = [];
  const head = store.headNumber() ?? 0;
  for (let block = Math.max(from, store.blocksFrom()); block <= head; block++) {
    for (const [index, hash] of (store.getBlock(block)?.tx_hashes ?? []).entries()) {
      const confirmed = store.getConfirmedTx(hash);
      assert.ok(confirmed, `tx ${hash} of block ${block} is stored`);
      const segments = confirmed.tx.operation.ref.split("/");
      const received =
        confirmed.result.code === 0 &&
        segments[1] === "transfer" &&
        toChecksumAddress(segments[3] as string) === address;
      if (confirmed.tx.address === address || received) out.push({ block, index, hash });
    }
  }
  return out.reverse();
}

const everything = { fromBlock: 0, upTo: { block: 0xffffffff, index: 0xffffffff }, limit: 1_000_000 };

/** Blocks of transfers between the eight accounts; some fail (more than the sender holds). */
async function produceLoad(chain: Chain, blocks: number, nonces = new Map<string, number>()): Promise<void> {
  for (let b = 0; b < blocks; b++) {
    const moves: Move[] = [
      [b % 8, (b + 1) % 8, 3],
      [(b + 3) % 8, (b + 3) % 8, 1], // to itself: listed once
      [7, b % 7, b % 5 === 0 ? 5_000 : 2], // every fifth one fails: insufficient balance
    ];
    await produce(
      chain,
      moves.map((move) => transfer(nonces, move)),
    );
  }
}

function assertWholeIndex(store: LmdbStore, context: string): void {
  for (const address of ACCOUNTS) {
    assert.deepEqual(
      store.addressHistory(address, everything),
      expectedHistory(store, address),
      `${context}: history of ${address}`,
    );
  }
}

/** Entries in the whole `tx_by_address` table of the (closed) store at `dir`. */
function countEntries(dir: string): number {
  const raw = open({ path: dir, compression: false, readOnly: true });
  try {
    // Opened read-only, a database that does not exist (dropped) is undefined.
    const table = raw.openDB({ name: DATABASES.txByAddress, keyEncoding: "binary", encoding: "binary" }) as
      | ReturnType<typeof raw.openDB>
      | undefined;
    return table?.getCount() ?? 0;
  } finally {
    void raw.close();
  }
}

/** Makes the store at `dir` look like schema 5 wrote it: no history index, version 5. */
async function downgradeToSchema5(dir: string): Promise<void> {
  const raw = open({ path: dir, compression: false });
  await raw.openDB({ name: DATABASES.txByAddress, keyEncoding: "binary", encoding: "binary" }).drop();
  await raw.openDB<number, string>({ name: DATABASES.meta }).put("schema_version", 5);
  await raw.close();
}

describe("history index (storage/historyIndex.ts)", () => {
  it("lists every account's transactions, newest first, as the blocks hold them", () =>
    withDir(async (dir) => {
      const store = new LmdbStore(dir, ARCHIVE);
      try {
        const chain = await openChain(store);
        await produceLoad(chain, 12);
        assertWholeIndex(store, "after 12 blocks");
        const sevens = expectedHistory(store, ACCOUNTS[7] as string);
        assert.ok(sevens.length >= 12, "account 7 sent a transfer in every block");
        // A failed transfer is its sender's only.
        const failed = store.getConfirmedTx(store.getBlock(1)?.tx_hashes[2] as string);
        assert.equal(failed?.result.code === 0, false, "block 1's third transfer failed");
        assert.ok(!expectedHistory(store, ACCOUNTS[0] as string).some((p) => p.hash === failed?.tx.hash));
        // Any case of the address reads the same entries.
        const lower = (ACCOUNTS[7] as string).toLowerCase();
        assert.deepEqual(store.addressHistory(lower, everything), sevens);
        assert.deepEqual(store.addressHistory(`0x${"ee".repeat(20)}`, everything), [], "an unknown account");
      } finally {
        await store.close();
      }
    }));

  it("bounds a read by lowest block, newest position (inclusive) and limit", () =>
    withDir(async (dir) => {
      const store = new LmdbStore(dir, ARCHIVE);
      try {
        await produceLoad(await openChain(store), 10);
        const address = ACCOUNTS[7] as string;
        const all = expectedHistory(store, address);
        // Pages of 3 from the top, each starting at the entry after the last one: all of them, once.
        const paged: Position[] = [];
        let upTo = everything.upTo;
        for (;;) {
          const page = store.addressHistory(address, { fromBlock: 0, upTo, limit: 4 });
          paged.push(...page.slice(0, 3));
          if (page.length < 4) break;
          upTo = page[3] as Position;
        }
        assert.deepEqual(paged, all);
        assert.deepEqual(
          store.addressHistory(address, { fromBlock: 4, upTo: { block: 7, index: 0xffffffff }, limit: 100 }),
          all.filter((p) => p.block >= 4 && p.block <= 7),
          "blocks 4..7",
        );
        const middle = all[5] as Position;
        assert.deepEqual(
          store.addressHistory(address, { fromBlock: 0, upTo: middle, limit: 2 }),
          all.slice(5, 7),
          "from a position, inclusive",
        );
        assert.deepEqual(
          store.addressHistory(address, { fromBlock: 8, upTo: { block: 7, index: 0 }, limit: 5 }),
          [],
        );
        assert.deepEqual(store.addressHistory(address, { ...everything, limit: 0 }), []);
      } finally {
        await store.close();
      }
    }));

  it("indexes the blocks commitTogether writes", () =>
    withDir(async (dir) => {
      const store = new LmdbStore(dir, ARCHIVE);
      try {
        const chain = await openChain(store);
        const nonces = new Map<string, number>();
        await chain.commitTogether([1, 2, 3, 4], async () => {
          await produceLoad(chain, 1, nonces);
          return true;
        });
        assert.equal(store.headNumber(), 4);
        assertWholeIndex(store, "after commitTogether");
      } finally {
        await store.close();
      }
    }));

  it("deletes a pruned block's entries with it; the kept blocks' stay", () =>
    withDir(async (dir) => {
      const store = new LmdbStore(dir, { retainStates: 0, retainBlocks: 3 });
      const chain = await openChain(store);
      const nonces = new Map<string, number>();
      const perBlock: number[] = [];
      try {
        for (let height = 1; height <= 10; height++) {
          await produceLoad(chain, 1, nonces);
          await store.pruned();
          perBlock[height] = ACCOUNTS.reduce(
            (sum, address) =>
              sum + expectedHistory(store, address, height).filter((p) => p.block === height).length,
            0,
          );
          assert.equal(store.blocksFrom(), Math.max(1, height - 2), `blocks_from after block ${height}`);
          assertWholeIndex(store, `after block ${height}`);
        }
      } finally {
        await store.close();
      }
      // Nothing of the pruned blocks is left anywhere in the table.
      const kept = perBlock.slice(8).reduce((a, b) => a + b, 0);
      assert.equal(countEntries(dir), kept, "entries of blocks 8..10 only");
    }));

  it("rebuilds the index when a schema-5 directory is opened, from the first kept block", () =>
    withDir(async (dir) => {
      let store = new LmdbStore(dir, { retainStates: 0, retainBlocks: 5 });
      await produceLoad(await openChain(store), 9);
      await store.close();
      const before = countEntries(dir);
      await downgradeToSchema5(dir);
      assert.equal(countEntries(dir), 0);

      store = new LmdbStore(dir, { retainStates: 0, retainBlocks: 5 }, { historyRebuildBatchTxs: 4 });
      try {
        assert.equal(store.blocksFrom(), 5, "blocks 1..4 were pruned before the upgrade");
        assertWholeIndex(store, "after the upgrade");
        await produceLoad(await openChain(store), 2, nonceMap(store));
        assertWholeIndex(store, "after two more blocks");
      } finally {
        await store.close();
      }
      assert.ok(before > 0);
      const raw = open({ path: dir, compression: false, readOnly: true });
      const meta = raw.openDB<number, string>({ name: DATABASES.meta });
      assert.equal(meta.get("schema_version"), SCHEMA_VERSION);
      assert.equal(meta.get("history_rebuild_next"), undefined, "no marker once done");
      await raw.close();
    }));

  it("resumes an upgrade killed between its writes, from where the last one ended", () =>
    withDir(async (dir) => {
      const store = new LmdbStore(dir, ARCHIVE);
      await produceLoad(await openChain(store), 8);
      await store.close();
      const whole = countEntries(dir);
      await downgradeToSchema5(dir);

      // Three transactions a block, batches of 4 (two blocks each): killed after the second batch.
      const child = spawnSync(
        process.execPath,
        [
          "--import",
          "tsx",
          "--input-type=module",
          "-e",
          `import { armFailpoint, parseFailpoint } from "./src/faults/index.ts";
           import { LmdbStore } from "./src/storage/index.ts";
           armFailpoint(parseFailpoint("upgrade.afterHistoryBatch:2"));
           new LmdbStore(${JSON.stringify(dir)}, undefined, { historyRebuildBatchTxs: 4 });
           process.stdout.write("opened\\n");`,
        ],
        { cwd: ROOT, encoding: "utf8", timeout: 60_000 },
      );
      assert.equal(child.signal, "SIGKILL", child.stderr);
      assert.equal(child.stdout, "", "it died before the store was open");

      const raw = open({ path: dir, compression: false, readOnly: true });
      const meta = raw.openDB<number, string>({ name: DATABASES.meta });
      assert.equal(meta.get("history_rebuild_next"), 5, "blocks 1..4 done, in two writes");
      assert.equal(meta.get("schema_version"), SCHEMA_VERSION, "a schema-5 node can no longer open it");
      await raw.close();
      const partial = countEntries(dir);
      assert.ok(partial > 0 && partial < whole, `${partial} of ${whole} entries before the resume`);

      const resumed = new LmdbStore(dir, ARCHIVE, { historyRebuildBatchTxs: 4 });
      try {
        assertWholeIndex(resumed, "after the resumed upgrade");
      } finally {
        await resumed.close();
      }
      assert.equal(countEntries(dir), whole, "the same entries as written block by block");
    }));
});

/** Each account's next nonce as the store holds it (to go on making blocks after a reopen). */
function nonceMap(store: LmdbStore): Map<string, number> {
  const nonces = new Map<string, number>();
  for (const address of ACCOUNTS) {
    const nonce = store.getLeaf(`/account/${address}/nonce`);
    nonces.set(address, typeof nonce === "number" ? nonce : 0);
  }
  return nonces;
}
