import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import fc from "fast-check";
import { balanceOf, Chain, type ChainStore } from "../../../src/chain/index.ts";
import { LmdbStore } from "../../../src/storage/index.ts";
import { MemoryStore } from "../../helpers/memoryStore.ts";
import { ACCOUNTS, GENESIS as genesis, produce, transfer } from "../../helpers/smallChain.ts";

/**
 * The state root through the whole block path (Chain.execute → Chain.commit → store): a chain on
 * LMDB that is closed and reopened between blocks reaches the same roots as one kept in memory.
 */

const moveArb = fc.tuple(fc.nat(7), fc.nat(7), fc.integer({ min: 1, max: 400 }));
const blocksArb = fc.array(fc.array(moveArb, { maxLength: 12 }), { minLength: 1, maxLength: 6 });

describe("state commitment across restarts", () => {
  it("a chain on LMDB, reopened after every other block, reaches the roots of one in memory (property)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "chain-node-state-"));
    try {
      let run = 0;
      await fc.assert(
        fc.asyncProperty(blocksArb, async (blocks) => {
          run += 1;
          const path = join(dir, `run${run}`);
          const memory = new Chain(new MemoryStore(), genesis);
          await memory.open();
          let store: ChainStore & { close(): Promise<void> } = new LmdbStore(path);
          let disk = new Chain(store, genesis);
          await disk.open();
          const nonces = new Map<string, number>();
          try {
            for (const [height, moves] of blocks.entries()) {
              const txs = moves.map((m) => transfer(nonces, m));
              const expected = await produce(memory, txs);
              const actual = await produce(disk, txs);
              assert.equal(actual, expected, `state root of block ${height + 1}`);
              if (height % 2 === 0) {
                await store.close();
                store = new LmdbStore(path);
                disk = new Chain(store, genesis);
                await disk.open();
                assert.equal(disk.head().header.state_root, expected, "reopens at the stored root");
              }
            }
            for (const account of ACCOUNTS) {
              assert.equal(balanceOf(disk.state(), account), balanceOf(memory.state(), account));
            }
          } finally {
            await store.close();
          }
        }),
        { numRuns: 15 },
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
