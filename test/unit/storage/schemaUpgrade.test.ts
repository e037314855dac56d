import assert from "node:assert/strict";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { it } from "node:test";
import { open } from "lmdb";
import { loadGenesis } from "../../../src/node/index.ts";
import { DATABASES, SCHEMA_VERSION } from "../../../src/storage/index.ts";
import { type CallFn, historyFromBlocks, readAllPages } from "../../helpers/history.ts";
import { startTestNode } from "../../helpers/testNode.ts";
import { accountAt, commitOne, transfer } from "../../rpc/support.ts";

/**
 * The upgrade of a data directory written by the previous release (schema 4, commit 1dc2cbd; see
 * test/fixtures/schema4-dev-home/README.md): the node opens it, migrates it to the current schema
 * (5: pruning's lists; 6: the history index, rebuilt from the stored blocks), answers what the old
 * node answered, lists each account's history, and goes on making blocks, with pruning from then on.
 */

const FIXTURE = fileURLToPath(new URL("../../fixtures/schema4-dev-home", import.meta.url));
/** What the schema-4 node answered on that home, before the upgrade. */
const BEFORE = {
  head: 6,
  block6: "0x5e6fa2c5e7acbf4a8ba4615afbf38dbcef3a5955b0c63c16c47a8a792e2f5223",
  accounts: [
    { index: 1, balance: 999_999_999_958, nonce: 3 },
    { index: 2, balance: 1_000_000_000_012, nonce: 3 },
    { index: 3, balance: 1_000_000_000_030, nonce: 0 },
  ],
  /**
   * Each account's transactions then, by block, newest first: account 1 paid account 2 three
   * times (blocks 1, 3, 5), account 2 paid account 3 three times (blocks 2, 4, 6).
   */
  history: [
    { index: 1, blocks: [5, 3, 1] },
    { index: 2, blocks: [6, 5, 4, 3, 2, 1] },
    { index: 3, blocks: [6, 4, 2] },
  ],
};

it("opens a schema-4 home of the previous release, answers as it did, and goes on (pruning from then)", async () => {
  const home = mkdtempSync(join(tmpdir(), "chain-node-upgrade-"));
  try {
    cpSync(FIXTURE, home, { recursive: true });
    const t = await startTestNode({
      home,
      keepHome: true,
      genesis: () => loadGenesis(home),
      storage: { retainStates: 2, retainBlocks: 0 },
    });
    try {
      assert.equal(await t.result("chain_getRecentBlockNumber"), BEFORE.head);
      const block = await t.result<{ hash: string }>("chain_getBlockByNumber", { number: 6 });
      assert.equal(block.hash, BEFORE.block6);
      for (const { index, balance, nonce } of BEFORE.accounts) {
        const { address } = accountAt(t, index);
        assert.equal(await t.result("chain_getBalance", { address }), balance, `balance of account ${index}`);
        assert.equal(await t.result("chain_getNonce", { address }), nonce, `nonce of account ${index}`);
      }
      // The history index, which schema 4 did not have, was rebuilt from the stored blocks.
      const call: CallFn = (method, params) => t.result(method, params);
      for (const { index, blocks } of BEFORE.history) {
        const { address } = accountAt(t, index);
        const { txs } = await readAllPages(call, { address, limit: 2 });
        assert.deepEqual(
          txs.map((tx) => tx.block_number),
          blocks,
          `history of account ${index}`,
        );
        assert.deepEqual(
          txs.map((tx) => tx.hash),
          await historyFromBlocks(call, address),
          `account ${index}: what the blocks hold`,
        );
      }
      const sent: string[] = [];
      for (let i = 0; i < 4; i++) {
        sent.push((await commitOne(t, transfer(accountAt(t, 1), accountAt(t, 4).address, 1))).hash);
      }
      assert.ok((await t.result<number>("chain_getRecentBlockNumber")) >= BEFORE.head + 4);
      // Blocks after the upgrade are indexed as they commit.
      const recipient = await readAllPages(call, { address: accountAt(t, 4).address });
      assert.deepEqual(
        recipient.txs.map((tx) => tx.hash),
        sent.reverse(),
      );
    } finally {
      await t.stop();
    }
    const raw = open({ path: join(home, "data"), compression: false, readOnly: true });
    try {
      assert.equal(
        raw.openDB<number, string>({ name: DATABASES.meta }).get("schema_version"),
        SCHEMA_VERSION,
      );
      assert.equal(
        raw.openDB<number, string>({ name: DATABASES.meta }).get("history_rebuild_next"),
        undefined,
        "the rebuild finished",
      );
      const retired = [...raw.openDB({ name: DATABASES.trieRetired, keyEncoding: "uint32" }).getKeys()];
      const statesFrom = raw.openDB<number, string>({ name: DATABASES.meta }).get("states_from") ?? 0;
      // Blocks after the upgrade record what they retire, and the oldest of them were pruned.
      assert.ok(statesFrom > BEFORE.head, `states_from ${statesFrom}`);
      assert.ok(
        retired.every((height) => (height as number) > BEFORE.head),
        `retired lists ${retired}`,
      );
    } finally {
      await raw.close();
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});
