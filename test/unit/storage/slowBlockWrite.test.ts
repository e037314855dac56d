import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { type Database, type Key, open, type RootDatabase } from "lmdb";
import { BlockWriter, type SlowBlockWrite } from "../../../src/storage/blockWriter.ts";
import { ENVIRONMENT_OPTIONS, openTable } from "../../../src/storage/schema.ts";
import { WriteBatch } from "../../../src/storage/writeBatch.ts";
import { holdWriteLock } from "../../helpers/lmdbLock.ts";

/**
 * The writer thread's slow-write report (node.ts logs it): a block write that waits says so, and
 * says whether it waits for LMDB's write lock. Here another process holds that lock, as a second
 * writer on the same home would.
 */

describe("BlockWriter's slow-write report", () => {
  const dirs: string[] = [];
  const roots: RootDatabase[] = [];
  const children: ChildProcess[] = [];
  after(async () => {
    for (const child of children) child.kill("SIGKILL");
    for (const root of roots) await root.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  const setUp = (slowMs: number) => {
    const path = mkdtempSync(join(tmpdir(), "chain-node-slow-write-"));
    dirs.push(path);
    const root = open({ path, ...ENVIRONMENT_OPTIONS });
    roots.push(root);
    const meta = openTable<number, string>(root, "meta");
    const reports: SlowBlockWrite[] = [];
    const tables = new Map([["meta" as const, meta as Database<unknown, Key>]]);
    const writer = new BlockWriter(path, tables, (report) => reports.push(report), slowMs);
    const batch = (value: number) => {
      const b = new WriteBatch();
      b.put(meta, "value", value);
      return b;
    };
    return { path, meta, writer, reports, batch };
  };

  it("reports nothing for a write that commits in time", async () => {
    const { meta, writer, reports, batch } = setUp(2_000);
    await writer.write(batch(1)).done;
    assert.equal(meta.get("value"), 1);
    await writer.close();
    assert.deepEqual(reports, []);
  });

  it("reports a write that waits for LMDB's write lock, while it waits, then lets it commit", async () => {
    const { path, meta, writer, reports, batch } = setUp(150);
    await writer.write(batch(1)).done; // the thread is up: what follows times only the wait
    // Held well past the 700 ms looked at below: under a loaded machine's timers, a hold of
    // 1,200 ms once ended before the look, and a report then saw the thread's own transaction.
    const holder = holdWriteLock(path, 3_000);
    children.push(holder.child);
    await holder.locked;
    let committed = false;
    const { done } = writer.write(batch(2));
    done.then(() => {
      committed = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 700));
    const waiting = [...reports];
    // What the reports were, in every message: a failure under a loaded run says which it was.
    const seen = JSON.stringify(waiting);
    assert.equal(committed, false, `not committed while the lock is held (reports ${seen})`);
    assert.ok(waiting.length >= 2, `reported every 150 ms while it waited (${seen})`);
    assert.ok(
      waiting.every((r) => !r.lockHeld),
      `each report says the thread waits for the lock (${seen})`,
    );
    assert.ok((waiting[1]?.elapsedMs ?? 0) > (waiting[0]?.elapsedMs ?? 0), "elapsed time grows");
    await done;
    assert.equal(meta.get("value"), 2);
    const count = reports.length;
    await new Promise((resolve) => setTimeout(resolve, 400));
    assert.equal(reports.length, count, "no report after the commit");
    await writer.close();
  });
});
