import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { type Database, open } from "lmdb";
import {
  DATABASES,
  JOURNAL_FILE,
  LmdbPoolJournal,
  LmdbStore,
  type PoolRecord,
  SCHEMA_VERSION,
} from "../../../src/storage/index.ts";
import { openChain, produce, transfer } from "../../helpers/smallChain.ts";
import { holdWriteLock } from "../../helpers/lmdbLock.ts";
import { withTempDir } from "../../helpers/tempDir.ts";

/**
 * The pool journal in LMDB (LmdbPoolJournal, the store's `journal`), in an environment of its own
 * (JOURNAL_FILE beside the chain's), keyed by arrival seq (appended, read back in arrival order),
 * with its hash → seq index: entries leave it once their block is durable or when the pool drops
 * them, a block that commits a transaction before its journal write lands keeps it out, the
 * journal of a chain environment from before is moved into its own when opened, and so is a
 * schema-3 directory's (journal keyed by hash).
 */

const withDir = (run: (dir: string) => Promise<void>) => withTempDir("journal", run);

/**
 * A store at `dir` with the small chain opened on it, and a fresh nonce map for its transfers;
 * `writeThread`: blocks written by the store's writer thread (a dev node's), else in this thread.
 */
async function openStoreChain(dir: string, writeThread = false) {
  const store = new LmdbStore(dir, undefined, { writeThread });
  return { store, chain: await openChain(store), nonces: new Map<string, number>() };
}

const hashesOf = (records: readonly PoolRecord[]) => records.map((r) => r.tx.hash);

/** A journal in `dir` with no store around it, and its table (its own, reached for fault tests). */
function openRawJournal(dir: string) {
  const journal = new LmdbPoolJournal(join(dir, JOURNAL_FILE));
  const table = (journal as unknown as { journal: Database<PoolRecord["tx"], number> }).journal;
  return { table, journal };
}

describe("LmdbPoolJournal (the store's pool journal)", () => {
  it("reads entries back in seq order, whatever order they were written in, after a reopen", () =>
    withDir(async (dir) => {
      const nonces = new Map<string, number>();
      const txs = [0, 1, 2, 3].map((i) => transfer(nonces, [i, i + 1, 1]));
      const store = new LmdbStore(dir);
      await store.journal.savePending([
        { seq: 7, tx: txs[0] as PoolRecord["tx"] },
        { seq: 2, tx: txs[1] as PoolRecord["tx"] },
      ]);
      await store.journal.savePending([{ seq: 300_000_000_000, tx: txs[2] as PoolRecord["tx"] }]);
      await store.journal.savePending([{ seq: 5, tx: txs[3] as PoolRecord["tx"] }]);
      await store.close();

      const reopened = new LmdbStore(dir);
      const records = reopened.journal.loadPending();
      assert.deepEqual(
        records.map((r) => r.seq),
        [2, 5, 7, 300_000_000_000],
      );
      assert.deepEqual(records[0]?.tx, txs[1], "the transaction comes back whole");
      // The index is rebuilt by loadPending: removals by hash work after a restart.
      await reopened.journal.removePending([txs[0]?.hash as string, "0xnot-journaled"]);
      assert.deepEqual(
        hashesOf(reopened.journal.loadPending()),
        [txs[1], txs[3], txs[2]].map((t) => t?.hash),
      );
      await reopened.close();
    }));

  for (const writeThread of [false, true]) {
    const mode = writeThread ? " (writer thread)" : "";
    it(`drops the entries of a committed block's transactions, keeps the others${mode}`, () =>
      withDir(async (dir) => {
        const { store, chain, nonces } = await openStoreChain(dir, writeThread);
        const [a, b, c] = [
          transfer(nonces, [0, 1, 5]),
          transfer(nonces, [1, 2, 5]),
          transfer(nonces, [2, 3, 5]),
        ];
        await store.journal.savePending([a, b, c].map((tx, seq) => ({ seq, tx })));
        await produce(chain, [a, c]);
        await store.journal.writesEnded(); // the removal follows the block's write
        assert.deepEqual(hashesOf(store.journal.loadPending()), [b.hash]);
        await store.close();
        const reopened = new LmdbStore(dir);
        assert.deepEqual(hashesOf(reopened.journal.loadPending()), [b.hash]);
        await reopened.close();
      }));

    it(`removes exactly the entries the block write names in journalRemovals${mode}`, () =>
      withDir(async (dir) => {
        const { store, chain, nonces } = await openStoreChain(dir, writeThread);
        const [a, b] = [transfer(nonces, [0, 1, 5]), transfer(nonces, [1, 2, 5])];
        await store.journal.savePending([a, b].map((tx, seq) => ({ seq, tx })));
        // The store reads the field, not the block's transactions: name b while committing a.
        const commitBlock = store.commitBlock.bind(store);
        store.commitBlock = (write) => commitBlock({ ...write, journalRemovals: [b.hash] });
        await produce(chain, [a]);
        await store.journal.writesEnded();
        assert.deepEqual(hashesOf(store.journal.loadPending()), [a.hash]);
        await store.close();
      }));

    it(`does not write back an entry whose block committed before its journal write ran${mode}`, () =>
      withDir(async (dir) => {
        const { store, chain, nonces } = await openStoreChain(dir, writeThread);
        const tx = transfer(nonces, [0, 1, 5]);
        const other = transfer(nonces, [3, 4, 5]);
        // savePending's write runs in a later turn; the block is written before or after it.
        const journaled = store.journal.savePending([
          { seq: 0, tx },
          { seq: 1, tx: other },
        ]);
        await produce(chain, [tx]);
        await journaled;
        await store.journal.writesEnded();
        assert.deepEqual(hashesOf(store.journal.loadPending()), [other.hash]);
        await store.close();
      }));
  }

  it("journals while another writer holds the chain environment's write lock (a block's write)", () =>
    withDir(async (dir) => {
      const store = new LmdbStore(dir);
      const tx = transfer(new Map(), [0, 1, 5]);
      // Another process holds the chain's writer for 3 s, as a large block's write would.
      const { child, locked } = holdWriteLock(dir, 3_000);
      try {
        await locked;
        const started = performance.now();
        await store.journal.savePending([{ seq: 0, tx }]);
        const ms = performance.now() - started;
        assert.ok(ms < 1_500, `the journal write waited ${Math.round(ms)} ms for the chain's writer`);
        assert.deepEqual(hashesOf(store.journal.loadPending()), [tx.hash]);
      } finally {
        child.kill("SIGKILL");
        await store.close();
      }
    }));

  it("removes the entries of a commitTogether's blocks only once its write commits", () =>
    withDir(async (dir) => {
      const { store, chain, nonces } = await openStoreChain(dir);
      const tx = transfer(nonces, [0, 1, 5]);
      await store.journal.savePending([{ seq: 0, tx }]);
      await chain.commitTogether([tx], async (committed) => {
        await produce(chain, [committed]);
        // Inside the range's write the block is not durable: its transaction stays journaled.
        assert.deepEqual(hashesOf(store.journal.loadPending()), [tx.hash]);
        return true;
      });
      await store.journal.writesEnded();
      assert.deepEqual(store.journal.loadPending(), []);
      await store.close();
      const reopened = new LmdbStore(dir);
      assert.deepEqual(reopened.journal.loadPending(), []);
      await reopened.close();
    }));

  it("writes nothing of a journal write that fails part way, and the index agrees", () =>
    withDir(async (dir) => {
      const { table, journal } = openRawJournal(dir);
      const nonces = new Map<string, number>();
      const [a, b] = [0, 1].map((i) => transfer(nonces, [i, i + 1, 1])) as PoolRecord["tx"][];
      const put = table.put.bind(table);
      let puts = 0;
      table.put = ((...args: Parameters<typeof put>) => {
        puts += 1;
        if (puts === 2) throw new Error("the second put fails");
        return put(...args);
      }) as typeof table.put;
      await assert.rejects(
        journal.savePending([
          { seq: 0, tx: a as PoolRecord["tx"] },
          { seq: 1, tx: b as PoolRecord["tx"] },
        ]),
        /the second put fails/,
      );
      assert.deepEqual(journal.loadPending(), [], "the first put went with the failed write");
      table.put = put;
      // Neither is indexed: a removal finds nothing, and a later write journals them again.
      await journal.removePending([a?.hash as string]);
      await journal.savePending([{ seq: 2, tx: a as PoolRecord["tx"] }]);
      assert.deepEqual(hashesOf(journal.loadPending()), [a?.hash]);
      await journal.close();
    }));

  it("keeps an entry indexed when its removal fails (index and table agree)", () =>
    withDir(async (dir) => {
      const { table, journal } = openRawJournal(dir);
      const tx = transfer(new Map(), [0, 1, 1]);
      await journal.savePending([{ seq: 0, tx }]);
      const remove = table.remove.bind(table);
      table.remove = (() => {
        throw new Error("the removal fails");
      }) as typeof table.remove;
      await assert.rejects(journal.removePending([tx.hash, "0xnot-journaled"]), /the removal fails/);
      table.remove = remove;
      assert.deepEqual(hashesOf(journal.loadPending()), [tx.hash], "the entry is still in the table");
      // Still in the index too: a removal by hash finds it.
      await journal.removePending([tx.hash]);
      assert.deepEqual(journal.loadPending(), []);
      await journal.close();
    }));

  it("moves the journal of a chain environment from before into its own when opened", () =>
    withDir(async (dir) => {
      const nonces = new Map<string, number>();
      const txs = [0, 1].map((i) => transfer(nonces, [i, i + 1, 1]));
      await new LmdbStore(dir).close();
      // The journal as a table of the chain's environment, as the store kept it until 2026-11-27.
      const old = open({ path: dir, compression: false, maxDbs: 32 });
      const table = old.openDB<PoolRecord["tx"], number>({ name: DATABASES.journal });
      await old.transaction(() => {
        table.put(4, txs[0] as PoolRecord["tx"]);
        table.put(9, txs[1] as PoolRecord["tx"]);
      });
      await old.close();

      const store = new LmdbStore(dir);
      assert.deepEqual(
        store.journal.loadPending().map((r) => [r.seq, r.tx.hash]),
        [
          [4, txs[0]?.hash],
          [9, txs[1]?.hash],
        ],
      );
      await store.close();
      const raw = open({ path: dir, compression: false, maxDbs: 32 });
      assert.equal(raw.openDB({ name: DATABASES.journal }).getCount(), 0, "the old table is emptied");
      await raw.close();
      const reopened = new LmdbStore(dir);
      assert.equal(reopened.journal.loadPending().length, 2, "moved once, kept");
      await reopened.close();
    }));

  it("migrates a schema-3 journal (keyed by hash) into the seq-keyed one when opened", () =>
    withDir(async (dir) => {
      const nonces = new Map<string, number>();
      const txs = [0, 1, 2].map((i) => transfer(nonces, [i, i + 1, 1]));
      // A schema-3 directory as that version left it: the journal in `pool`, hash → {seq, tx}.
      const old = open({ path: dir, compression: false });
      const meta = old.openDB<number, string>({ name: DATABASES.meta });
      const pool = old.openDB<PoolRecord, string>({ name: DATABASES.legacyPool });
      await old.transaction(() => {
        meta.put("schema_version", 3);
        for (const [i, seq] of [40, 3, 17].entries()) {
          const tx = txs[i] as PoolRecord["tx"];
          pool.put(tx.hash, { seq, tx });
        }
      });
      await old.close();

      const store = new LmdbStore(dir);
      const records = store.journal.loadPending();
      assert.deepEqual(
        records.map((r) => [r.seq, r.tx.hash]),
        [
          [3, txs[1]?.hash],
          [17, txs[2]?.hash],
          [40, txs[0]?.hash],
        ],
      );
      await store.journal.removePending([txs[2]?.hash as string]);
      await store.close();

      const raw = open({ path: dir, compression: false });
      assert.equal(
        raw.openDB<number, string>({ name: DATABASES.meta }).get("schema_version"),
        SCHEMA_VERSION,
      );
      assert.equal(raw.openDB({ name: DATABASES.legacyPool }).getCount(), 0, "the old table is dropped");
      await raw.close();
      const reopened = new LmdbStore(dir);
      assert.deepEqual(hashesOf(reopened.journal.loadPending()), [txs[1]?.hash, txs[0]?.hash]);
      await reopened.close();
    }));

  it("refuses a directory of a schema it does not know", () =>
    withDir(async (dir) => {
      const old = open({ path: dir, compression: false });
      await old.openDB<number, string>({ name: DATABASES.meta }).put("schema_version", 2);
      await old.close();
      assert.throws(
        () => new LmdbStore(dir),
        new RegExp(`schema version 2; this node reads ${SCHEMA_VERSION}`),
      );
    }));
});
