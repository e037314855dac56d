import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { Chain, type Commit, precommitVote, signVote } from "../../../src/chain/index.ts";
import { type DerivedAccount, hexToBytes } from "../../../src/crypto/index.ts";
import {
  backupHome,
  devAccounts,
  devGenesis,
  exportChain,
  importChain,
  saveKey,
} from "../../../src/node/index.ts";
import { LmdbStore } from "../../../src/storage/index.ts";
import { withTempDir } from "../../helpers/tempDir.ts";

/**
 * node/chainExport.ts and node/backup.ts on a home in a temporary directory: what they refuse
 * before writing anything, and what they leave behind.
 */

const accounts = devAccounts();
const validator = accounts[0] as DerivedAccount;
const genesis = devGenesis(accounts, 1_700_000_000_000);

/** A dev home with `blocks` empty blocks, each with its validator's certificate, and genesis.json. */
async function makeHome(home: string, blocks: number): Promise<void> {
  mkdirSync(join(home, "data"), { recursive: true });
  writeFileSync(join(home, "genesis.json"), JSON.stringify(genesis));
  const store = new LmdbStore(join(home, "data"));
  try {
    const chain = new Chain(store, genesis);
    await chain.open();
    for (let height = 1; height <= blocks; height++) {
      const executed = await chain.execute([], validator.address, genesis.genesis_time + height * 1000);
      const vote = precommitVote(genesis.chain_id, height, 0, executed.hash);
      const commit: Commit = {
        height,
        round: 0,
        block_hash: executed.hash,
        signatures: [signVote(vote, hexToBytes(validator.privateKey))],
      };
      await chain.commit(executed, commit, [validator.address]);
    }
  } finally {
    await store.close();
  }
}

describe("export and import (node/chainExport.ts)", () => {
  it("refuses an existing file, a range beyond the head, and a home without data; leaves no .partial", async () => {
    await withTempDir("export-refusals", async (dir) => {
      const home = join(dir, "home");
      await makeHome(home, 3);
      const out = join(dir, "chain.ndjson");
      await assert.rejects(exportChain({ home, out, to: 4 }), /--to 4 is above the home's head \(3\)/);
      await assert.rejects(exportChain({ home, out, from: 5, to: 3 }), /--from 5 is above --to 3/);
      await assert.rejects(exportChain({ home: join(dir, "none"), out }), /cannot read .*genesis\.json/);
      mkdirSync(join(dir, "empty"));
      writeFileSync(join(dir, "empty", "genesis.json"), JSON.stringify(genesis));
      await assert.rejects(exportChain({ home: join(dir, "empty"), out }), /holds no chain data/);
      assert.equal(existsSync(out) || existsSync(`${out}.partial`), false, "nothing written");

      const progress: number[] = [];
      const summary = await exportChain({ home, out, onProgress: (done) => progress.push(done) });
      assert.deepEqual([summary.from, summary.to, summary.blocks], [1, 3, 3]);
      assert.equal(progress.at(-1), 3);
      assert.equal(existsSync(`${out}.partial`), false);
      await assert.rejects(exportChain({ home, out }), /already exists: an export never overwrites/);

      // An empty range (from = to + 1) is a header alone: after blocks 1..3 it imports as nothing.
      const empty = join(dir, "empty.ndjson");
      assert.equal((await exportChain({ home, out: empty, from: 4 })).blocks, 0);
      const copy = join(dir, "copy");
      const all = await importChain({ home: copy, file: out });
      assert.deepEqual([all.imported, all.skipped, all.head, all.wroteGenesis], [3, 0, 3, true]);
      const none = await importChain({ home: copy, file: empty });
      assert.deepEqual([none.imported, none.skipped, none.head, none.wroteGenesis], [0, 0, 3, false]);
    });
  });

  it("refuses a missing and an empty file, writing nothing", async () => {
    await withTempDir("import-refusals", async (dir) => {
      const home = join(dir, "home");
      await assert.rejects(importChain({ home, file: join(dir, "missing") }), /does not exist/);
      writeFileSync(join(dir, "empty"), "");
      await assert.rejects(importChain({ home, file: join(dir, "empty") }), /is empty/);
      assert.equal(existsSync(home), false);
    });
  });
});

describe("backup (node/backup.ts)", () => {
  it("copies data, data/'s other files, genesis and config; keys only when asked, owner-only", async () => {
    await withTempDir("backup", async (dir) => {
      const home = join(dir, "home");
      await makeHome(home, 2);
      writeFileSync(join(home, "config.toml"), "[node]\nname = 'b'\n");
      writeFileSync(join(home, "data", "signing.jsonl"), '{"height":1}\n');
      saveKey(join(home, "keys", "validator.json"), validator.privateKey);

      const plain = await backupHome({ home, out: join(dir, "plain"), withKeys: false, compact: false });
      assert.deepEqual([plain.head, plain.with_keys, plain.chain_id], [2, false, 100]);
      assert.equal(existsSync(join(dir, "plain", "keys")), false);
      for (const file of [
        "genesis.json",
        "config.toml",
        "data/signing.jsonl",
        "data/data.mdb",
        "backup.json",
      ]) {
        assert.ok(existsSync(join(dir, "plain", file)), `${file} is in the backup`);
      }
      assert.equal(readFileSync(join(dir, "plain", "data", "signing.jsonl"), "utf8"), '{"height":1}\n');

      mkdirSync(join(dir, "keyed")); // an empty directory is fine
      const keyed = await backupHome({ home, out: join(dir, "keyed"), withKeys: true, compact: true });
      assert.equal(keyed.with_keys, true);
      const key = join(dir, "keyed", "keys", "validator.json");
      assert.equal(statSync(key).mode & 0o777, 0o600, "the key stays owner-only");
      assert.equal(statSync(join(dir, "keyed", "keys")).mode & 0o777, 0o700);

      // The copy is a home: it exports the same chain.
      await exportChain({ home, out: join(dir, "a.ndjson") });
      await exportChain({ home: join(dir, "keyed"), out: join(dir, "b.ndjson") });
      assert.ok(readFileSync(join(dir, "a.ndjson")).equals(readFileSync(join(dir, "b.ndjson"))));

      await assert.rejects(
        backupHome({ home, out: join(dir, "plain"), withKeys: false, compact: false }),
        /exists and is not an empty directory/,
      );
      assert.equal(existsSync(join(dir, "plain.partial")), false);
    });
  });
});
