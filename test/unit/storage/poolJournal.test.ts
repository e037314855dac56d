import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { open } from "lmdb";
import {
  DATABASES,
  LmdbPoolJournal,
  LmdbStore,
  type PoolRecord,
  SCHEMA_VERSION,
} from "../../../src/storage/index.ts";
import { directWrites } from "../../../src/storage/writeBatch.ts";
import { openChain, produce, transfer } from "../../helpers/smallChain.ts";
import { withTempDir } from "../../helpers/tempDir.ts";

/**
 * The pool journal in LMDB (LmdbPoolJournal, the store's `journal`), keyed by arrival seq
 * (appended, read back in arrival order), with its hash → seq index: entries leave it when their block commits or the pool drops
 * them, a block that commits a transaction before its journal write lands keeps it out, and a
 * schema-3 directory (journal keyed by hash) is migrated when opened.
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

/** A journal on its own LMDB environment at `dir` (no store around it), with its table. */
function openRawJournal(dir: string) {
  const root = open({ path: dir, compression: false });
  const table = root.openDB<PoolRecord["tx"], number>({ name: DATABASES.journal });
  return { root, table, journal: new LmdbPoolJournal(root, table) };
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
        assert.deepEqual(hashesOf(store.journal.loadPending()), [other.hash]);
        await store.close();
      }));
  }

  it("forgets the removals of a commitTogether only once its write commits", () =>
    withDir(async (dir) => {
      const { store, chain, nonces } = await openStoreChain(dir);
      const tx = transfer(nonces, [0, 1, 5]);
      await store.journal.savePending([{ seq: 0, tx }]);
      await chain.commitTogether([tx], async (committed) => {
        await produce(chain, [committed]);
        // Inside the range's write the entry is gone for readers of this thread too.
        assert.deepEqual(store.journal.loadPending(), []);
        return true;
      });
      assert.deepEqual(store.journal.loadPending(), []);
      await store.close();
      const reopened = new LmdbStore(dir);
      assert.deepEqual(reopened.journal.loadPending(), []);
      await reopened.close();
    }));

  it("writes nothing of a journal write that fails part way, and the index agrees", () =>
    withDir(async (dir) => {
      const { root, table, journal } = openRawJournal(dir);
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
      await root.close();
    }));

  it("keeps an entry indexed when the transaction that removed it fails (index and table agree)", () =>
    withDir(async (dir) => {
      const { root, journal } = openRawJournal(dir);
      const tx = transfer(new Map(), [0, 1, 1]);
      await journal.savePending([{ seq: 0, tx }]);
      assert.throws(() =>
        root.transactionSync(() => {
          assert.deepEqual(journal.removeInWrite(directWrites, [tx.hash, "0xnot-journaled"]), [tx.hash]);
          throw new Error("the block's write failed");
        }),
      );
      assert.deepEqual(hashesOf(journal.loadPending()), [tx.hash], "the entry is still in the table");
      // Still in the index too: a removal by hash finds it (forget was never called).
      await journal.removePending([tx.hash]);
      assert.deepEqual(journal.loadPending(), []);
      await root.close();
    }));

  it("while the writer thread removes an entry, a journal write puts it back until the removal has committed", () =>
    withDir(async (dir) => {
      const { root, table, journal } = openRawJournal(dir);
      const nonces = new Map<string, number>();
      const [a, b, c, d] = [0, 1, 2, 3].map((i) => transfer(nonces, [i, i + 1, 1])) as PoolRecord["tx"][];
      let committed = false;
      // The block's write is planned (and the entries leave the index) before the journal write
      // runs: with the removal not committed, the entries are written (a kill of the block's
      // write must not lose an acknowledged transaction).
      const saving = journal.savePending([
        { seq: 0, tx: a as PoolRecord["tx"] },
        { seq: 1, tx: b as PoolRecord["tx"] },
      ]);
      const failed = journal.removeAside([a?.hash as string, b?.hash as string], () => committed);
      await saving;
      assert.deepEqual(hashesOf(journal.loadPending()), [a?.hash, b?.hash]);
      // That block's write fails: the entries stay, indexed (a removal by hash finds them).
      failed.settle(false);
      await journal.removePending([b?.hash as string]);
      assert.deepEqual(hashesOf(journal.loadPending()), [a?.hash]);

      // The removal commits after the put (as the writer thread's transaction would): nothing stale.
      const removal = journal.removeAside([a?.hash as string], () => committed);
      await root.transaction(() => table.remove(0));
      committed = true;
      removal.settle(true);
      await journal.writesEnded();
      assert.deepEqual(journal.loadPending(), []);

      // A journal write after the removal committed does not write the entry back.
      committed = false;
      const late = journal.savePending([{ seq: 2, tx: c as PoolRecord["tx"] }]);
      const done = journal.removeAside([c?.hash as string], () => committed);
      committed = true;
      await late;
      done.settle(true);
      assert.deepEqual(journal.loadPending(), []);

      // Put in the moment between the removal's commit and `committed` saying so: the entry of a
      // committed transaction, which settling removes.
      committed = false;
      const between = journal.savePending([{ seq: 3, tx: d as PoolRecord["tx"] }]);
      const settled = journal.removeAside([d?.hash as string], () => committed);
      await between;
      assert.deepEqual(hashesOf(journal.loadPending()), [d?.hash]);
      settled.settle(true);
      await journal.writesEnded();
      assert.deepEqual(journal.loadPending(), []);
      await root.close();
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
