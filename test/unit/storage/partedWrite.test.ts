import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { type Database, type Key, open, type RootDatabase } from "lmdb";
import { BlockWriter } from "../../../src/storage/blockWriter.ts";
import { ENVIRONMENT_OPTIONS, openTable } from "../../../src/storage/schema.ts";
import { WriteBatch } from "../../../src/storage/writeBatch.ts";

/**
 * A write sent to the block writer thread in parts (BlockWriter.begin, used by a dev node's
 * sliced write plan): the parts and the rest are made in one transaction, in the order sent; a
 * part that did not reach the thread fails the write instead of leaving the rest written alone;
 * parts of a write that was begun and never made are not made with the next one.
 */
describe("BlockWriter, a write in parts", () => {
  const dirs: string[] = [];
  const roots: RootDatabase[] = [];
  const writers: BlockWriter[] = [];
  after(async () => {
    for (const writer of writers) await writer.close();
    for (const root of roots) await root.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  const setUp = () => {
    const path = mkdtempSync(join(tmpdir(), "chain-node-parted-write-"));
    dirs.push(path);
    const root = open({ path, ...ENVIRONMENT_OPTIONS });
    roots.push(root);
    const meta = openTable<number, string>(root, "meta");
    const writer = new BlockWriter(path, new Map([["meta" as const, meta as Database<unknown, Key>]]));
    writers.push(writer);
    return { meta, writer };
  };

  it("makes the parts and the rest in one transaction, in the order sent", async () => {
    const { meta, writer } = setUp();
    const batch = new WriteBatch();
    const parted = writer.begin();
    batch.put(meta, "a", 1);
    batch.put(meta, "b", 1);
    parted.sendPart(batch);
    assert.equal(batch.size, 0, "a part leaves the batch");
    batch.put(meta, "b", 2); // a later part's write of the same key wins
    batch.remove(meta, "a");
    parted.sendPart(batch);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(meta.get("b"), undefined, "nothing is made before the write's last part");
    batch.put(meta, "c", 3);
    await parted.write(batch).done;
    assert.deepEqual([meta.get("a"), meta.get("b"), meta.get("c")], [undefined, 2, 3]);
  });

  it("fails the write, and makes none of it, when a part did not reach the thread", async () => {
    const { meta, writer } = setUp();
    const batch = new WriteBatch();
    const parted = writer.begin();
    batch.put(meta, "lost", 1);
    parted.sendPart(batch);
    await writer.close(); // the thread that held the part ends; the write starts another
    batch.put(meta, "rest", 1);
    await assert.rejects(parted.write(batch).done, /1 parts were sent ahead of the write and 0 arrived/);
    assert.equal(meta.get("lost"), undefined);
    assert.equal(meta.get("rest"), undefined);
    // The writer goes on: the next write is made.
    const next = new WriteBatch();
    next.put(meta, "next", 1);
    await writer.write(next).done;
    assert.equal(meta.get("next"), 1);
  });

  it("does not make the parts of a write begun and never made with the next write", async () => {
    const { meta, writer } = setUp();
    const abandoned = new WriteBatch();
    abandoned.put(meta, "abandoned", 1);
    writer.begin().sendPart(abandoned); // its plan failed: the write is never sent
    const batch = new WriteBatch();
    batch.put(meta, "made", 1);
    await writer.write(batch).done;
    assert.equal(meta.get("made"), 1);
    assert.equal(meta.get("abandoned"), undefined);
  });
});
