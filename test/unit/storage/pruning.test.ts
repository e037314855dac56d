import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { open } from "lmdb";
import type { Chain, Tx } from "../../../src/chain/index.ts";
import { nonceOf, StateTrie } from "../../../src/chain/index.ts";
import { PRUNE_FLOOR } from "../../../src/storage/blockWritePlan.ts";
import { DATABASES, LmdbStore, type RetentionOptions, SCHEMA_VERSION } from "../../../src/storage/index.ts";
import { seededRandom } from "../../helpers/seededRandom.ts";
import { ACCOUNTS, openChain, produce, transfer } from "../../helpers/smallChain.ts";
import { withTempDir } from "../../helpers/tempDir.ts";
import { assertStateWhole } from "../../helpers/trieWalk.ts";

/**
 * Pruning (storage/pruning.ts, docs/decisions/011-pruning.md) on a real LMDB store under a load
 * that rewrites a fixed set of keys: the kept states stay whole, older ones are gone, the data
 * file stops growing, and pruned blocks leave with their transactions.
 */

const withDir = (run: (dir: string) => Promise<void>) => withTempDir("pruning", run);

/** The fixed set of keys: slots under each account's /users data. */
const SLOTS = 50;
const WRITES_PER_ACCOUNT = 6;

/** A block's worth of rewrites: every account sets a few of its slots, at random, to new values. */
function rewrites(nonces: Map<string, number>, random: () => number, height: number): Tx[] {
  return ACCOUNTS.flatMap((address, i) =>
    Array.from({ length: WRITES_PER_ACCOUNT }, () => {
      const slot = Math.floor(random() * SLOTS);
      const tx = transfer(nonces, [i, (i + 1) % ACCOUNTS.length, 1]);
      return {
        ...tx,
        operation: {
          type: "SET_VALUE" as const,
          ref: `/users/${address}/slot${slot}`,
          value: {
            height,
            noise: Math.floor(random() * 1e9)
              .toString(36)
              .repeat(4),
          },
        },
      };
    }),
  );
}

/** The state of block `height` is whole: every node its root reaches is stored. */
function assertWhole(store: LmdbStore, chain: Chain, height: number): void {
  const root = (store.getBlock(height) ?? chain.head()).header.state_root;
  assertStateWhole(store, root, `state ${height}`);
  // A trie opened at that root reads and re-roots without touching a missing node.
  const trie = new StateTrie(store, root);
  assert.equal(trie.rootHex(), root);
}

const BACKLOG_BLOCKS = 120;

/**
 * A store that kept BACKLOG_BLOCKS states, reopened to keep 2: everything those blocks retired is
 * a backlog for the next blocks' writes to delete. `backlog()` counts the trie node ids still
 * listed for deletion at those heights (through a second, read-only handle).
 */
function withBacklog(
  run: (store: LmdbStore, chain: Chain, backlog: () => number) => Promise<void>,
): Promise<void> {
  return withDir(async (dir) => {
    await runLoad(dir, { retainStates: BACKLOG_BLOCKS, retainBlocks: 0 }, BACKLOG_BLOCKS);
    const store = new LmdbStore(dir, { retainStates: 2, retainBlocks: 0 });
    const raw = open({ path: dir, compression: false, readOnly: true });
    const retired = raw.openDB<{ ids: Uint8Array }, number>({
      name: DATABASES.trieRetired,
      keyEncoding: "uint32",
    });
    const backlog = () => {
      raw.resetReadTxn(); // a fresh snapshot: the store committed since the last count
      let ids = 0;
      for (const { value } of retired.getRange({ end: BACKLOG_BLOCKS + 1 })) ids += value.ids.length / 6;
      return ids;
    };
    try {
      await run(store, await openChain(store), backlog);
    } finally {
      await store.close();
    }
  });
}

/** Runs `blocks` blocks of rewrites on a fresh store; calls `each` after every block. */
async function runLoad(
  dir: string,
  retention: RetentionOptions,
  blocks: number,
  each: (store: LmdbStore, chain: Chain, height: number) => void = () => {},
): Promise<{ pages: number[] }> {
  const store = new LmdbStore(dir, retention);
  const chain = await openChain(store);
  const nonces = new Map<string, number>();
  const random = seededRandom(7);
  const pages: number[] = [];
  try {
    for (let height = 1; height <= blocks; height++) {
      await produce(chain, rewrites(nonces, random, height));
      await store.pruned();
      each(store, chain, height);
      pages.push(store.usedPages().pages);
    }
  } finally {
    await store.close();
  }
  return { pages };
}

describe("pruning (storage/pruning.ts)", () => {
  it("keeps exactly the last retain_states states whole and removes the older roots", () =>
    withDir(async (dir) => {
      const retain = 4;
      await runLoad(dir, { retainStates: retain, retainBlocks: 0 }, 30, (store, chain, height) => {
        const keepFrom = Math.max(0, height - retain + 1);
        if (height >= retain) assert.equal(store.statesFrom(), keepFrom, `states_from after block ${height}`);
        for (let h = keepFrom; h <= height; h++) assertWhole(store, chain, h);
        for (let h = 1; h < keepFrom; h++) {
          const root = store.getBlock(h)?.header.state_root as string;
          assert.equal(store.getTrieRoot(root), undefined, `state ${h}'s root entry is gone`);
        }
        assert.equal(store.blocksFrom(), 1, "no block is pruned with retain_blocks = 0");
      });
    }));

  it("keeps pace with blocks written back to back, with no idle moment for the pruning writes", () =>
    withDir(async (dir) => {
      const retain = 4;
      const store = new LmdbStore(dir, { retainStates: retain, retainBlocks: retain });
      const chain = await openChain(store);
      const nonces = new Map<string, number>();
      const random = seededRandom(11);
      try {
        for (let height = 1; height <= 30; height++) {
          // No await of pruned() and no timer turn between blocks (an import makes them so): the
          // block's write makes the pruning the block before it owes first.
          await produce(chain, rewrites(nonces, random, height));
          const due = height - retain + 1;
          if (due > 1) {
            assert.ok(
              store.statesFrom() >= due - 1,
              `states_from ${store.statesFrom()} after block ${height}`,
            );
            assert.ok(
              store.blocksFrom() >= due - 1,
              `blocks_from ${store.blocksFrom()} after block ${height}`,
            );
          }
        }
      } finally {
        await store.close();
      }
    }));

  it("stops the data file growing, and grows at most 0.6× an archive's under the same load", () =>
    withDir(async (dir) => {
      const blocks = 120;
      const warm = 40;
      const pruned = await runLoad(`${dir}/pruned`, { retainStates: 16, retainBlocks: 0 }, blocks);
      const archive = await runLoad(`${dir}/archive`, { retainStates: 0, retainBlocks: 0 }, blocks);
      const growth = (pages: number[]) => (pages.at(-1) as number) - (pages[warm - 1] as number);
      // Blocks and transactions are kept by both: only the trie's old states differ.
      assert.ok(
        growth(pruned.pages) <= 0.6 * growth(archive.pages),
        `pruned grew ${growth(pruned.pages)} pages, archive ${growth(archive.pages)}`,
      );
      const prunedStates = await runLoad(`${dir}/both`, { retainStates: 16, retainBlocks: 16 }, blocks);
      const late = prunedStates.pages.slice(warm);
      // With blocks pruned too, nothing accumulates: the extent stays within a few pages of flat.
      assert.ok(
        (late.at(-1) as number) - (late[0] as number) <= 0.05 * (late[0] as number),
        `pages from block ${warm}: ${late[0]} → ${late.at(-1)}`,
      );
    }));

  it("prunes blocks with their transactions and hash index; block 0 stays", () =>
    withDir(async (dir) => {
      const retain = 3;
      const seen: { hash: string; txs: string[] }[] = [];
      await runLoad(dir, { retainStates: 0, retainBlocks: retain }, 12, (store, chain, height) => {
        const block = chain.head();
        seen[height] = { hash: block.hash, txs: block.tx_hashes };
        const keepFrom = Math.max(1, height - retain + 1);
        assert.equal(store.blocksFrom(), keepFrom, `blocks_from after block ${height}`);
        assert.ok(store.getBlock(0) !== undefined, "block 0 is kept");
        for (let h = 1; h <= height; h++) {
          const { hash, txs } = seen[h] as { hash: string; txs: string[] };
          const kept = h >= keepFrom;
          assert.equal(store.getBlock(h) !== undefined, kept, `block ${h}`);
          assert.equal(store.getBlockNumber(hash) !== undefined, kept, `block ${h}'s hash index`);
          for (const tx of txs)
            assert.equal(store.getConfirmedTx(tx) !== undefined, kept, `a tx of block ${h}`);
        }
        assert.equal(store.statesFrom(), 0, "no state is pruned with retain_states = 0");
      });
    }));

  it("an idle chain catches up with a backlog a bounded amount per block when retention is lowered", () =>
    withBacklog(async (store, chain, backlog) => {
      const marks: number[] = [];
      // Empty blocks retire nothing, so states_from stops at the backlog's last height.
      while (backlog() > 0) {
        assert.ok(marks.length < 20, `caught up within 20 blocks (${marks})`);
        // Empty blocks: what a chain makes while no one sends it anything.
        await produce(chain, []);
        await store.pruned();
        marks.push(store.statesFrom());
        // The lowest kept state is the one a partly deleted backlog would break first.
        assertWhole(store, chain, store.statesFrom());
      }
      // The backlog (~120 blocks of retired nodes) is more than one block's budget.
      assert.ok(marks.length > 1, `took ${marks.length} blocks: ${marks}`);
      for (let i = 1; i < marks.length; i++) assert.ok((marks[i] as number) >= (marks[i - 1] as number));
      assert.equal(marks.at(-1), BACKLOG_BLOCKS, "every state of the backlog pruned");
    }));

  it("prunes after each block in a write of its own, not in the block's: twice what the block wrote and a floor more", () =>
    withBacklog(async (store, chain, backlog) => {
      const nonces = new Map<string, number>();
      for (const address of ACCOUNTS) nonces.set(address, nonceOf(store, address));
      const random = seededRandom(8);
      const before = backlog();
      // 48 rewrites: the block writes a few hundred entries (transactions, history, trie nodes).
      await produce(chain, rewrites(nonces, random, chain.head().header.number + 1));
      assert.equal(backlog(), before, "the block's own write deleted nothing of the backlog");
      await store.pruned();
      const afterBusy = backlog();
      const busy = before - afterBusy;
      assert.ok(busy >= PRUNE_FLOOR * 0.9, `the block's pruning took the floor (${busy} nodes)`);
      assert.ok(busy < 2 * PRUNE_FLOOR, `and twice a few hundred entries more at most (${busy} nodes)`);
      assertWhole(store, chain, store.statesFrom());
      // Blocks committed together (a synced range) prune in their own write, without the floor.
      const together = [rewrites(nonces, random, chain.head().header.number + 1)];
      await store.commitTogether(together, async (txs) => {
        await produce(chain, txs);
        return true;
      });
      const inBlock = afterBusy - backlog();
      assert.ok(
        inBlock > 0 && inBlock < PRUNE_FLOOR / 2,
        `a block committed together pruned ${inBlock} nodes`,
      );
      await store.pruned();
      assert.equal(backlog(), afterBusy - inBlock, "and owes no pruning write");
      assertWhole(store, chain, store.statesFrom());
    }));

  it("a pruning write that fails: told to onPruneError and tried after the next block; unset, the next block's write rejects", () =>
    withDir(async (dir) => {
      await runLoad(dir, { retainStates: 0, retainBlocks: 0 }, 3);
      // A record of what block 1 retired that no pruning write can read.
      const raw = open({ path: dir, compression: false });
      await raw.openDB<unknown, number>({ name: DATABASES.trieRetired, keyEncoding: "uint32" }).put(1, null);
      await raw.close();
      const errors: unknown[] = [];
      let store = new LmdbStore(
        dir,
        { retainStates: 2, retainBlocks: 0 },
        { onPruneError: (e) => errors.push(e) },
      );
      let chain = await openChain(store);
      try {
        await produce(chain, []);
        await store.pruned();
        assert.equal(errors.length, 1, "told once");
        await new Promise((resolve) => setTimeout(resolve, 100));
        assert.equal(errors.length, 1, "not tried again before a block");
        await produce(chain, []);
        await store.pruned();
        assert.equal(errors.length, 2, "tried again after the next block");
        assert.equal(store.statesFrom(), 0, "nothing pruned past the bad record");
      } finally {
        await store.close().catch(() => {});
      }
      store = new LmdbStore(dir, { retainStates: 2, retainBlocks: 0 });
      chain = await openChain(store);
      try {
        await produce(chain, []);
        await store.pruned();
        await assert.rejects(produce(chain, []), TypeError, "the next block's write rejects with the error");
      } finally {
        await store.close().catch(() => {});
      }
    }));

  it("migrates a schema-4 directory: old states stay, blocks from then on are pruned", () =>
    withDir(async (dir) => {
      // What the previous release wrote: no trie_retired table, schema_version 4.
      await runLoad(dir, { retainStates: 0, retainBlocks: 0 }, 10);
      const raw = open({ path: dir, compression: false });
      await raw.openDB<number, string>({ name: DATABASES.meta }).put("schema_version", 4);
      await raw.close();

      const store = new LmdbStore(dir, { retainStates: 2, retainBlocks: 0 });
      const chain = await openChain(store);
      assert.equal(
        open({ path: dir, compression: false, readOnly: true })
          .openDB<number, string>({ name: DATABASES.meta })
          .get("schema_version"),
        SCHEMA_VERSION,
      );
      const nonces = new Map<string, number>();
      for (const address of ACCOUNTS) nonces.set(address, nonceOf(store, address));
      const random = seededRandom(9);
      try {
        for (let i = 0; i < 5; i++) await produce(chain, rewrites(nonces, random, 11 + i));
        await store.pruned();
        assert.equal(store.statesFrom(), 14, "states of blocks after the upgrade are pruned");
        for (let h = 14; h <= 15; h++) assertWhole(store, chain, h);
      } finally {
        await store.close();
      }
    }));
});
