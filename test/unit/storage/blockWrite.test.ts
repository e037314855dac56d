import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { BlockWrite, JsonValue, StoredBlock } from "../../../src/chain/index.ts";
import { LmdbStore } from "../../../src/storage/index.ts";
import { VALIDATOR } from "../../helpers/smallChain.ts";
import { withTempDir } from "../../helpers/tempDir.ts";

/**
 * A block's write (LmdbStore.commitBlock) prunes inside it: pruning an old entry must leave alone
 * what the same write puts (a write planned before it is made, as tried for an off-thread write,
 * reads the store as it was and must say so explicitly).
 */

const withDir = (run: (dir: string) => Promise<void>) => withTempDir("block-write", run);

describe("a block's write (storage/lmdbStore.ts commitBlock)", () => {
  it("keeps a deletion record the same write makes when pruning drops the old one of that path", () =>
    withDir(async (dir) => {
      // Two kept states; one old block retires so many nodes that pruning (about 2,000 deletions
      // per quiet block) is still behind when a later block deletes the same path again.
      const store = new LmdbStore(dir, { retainStates: 2, retainBlocks: 0 });
      const path = "/users/0x0000000000000000000000000000000000000001/p";
      let nextId = 1_000_000;
      const write = (number: number, leaf: JsonValue | null, retired: number): BlockWrite => {
        const block: StoredBlock = {
          header: {
            parent_hash: number === 0 ? "" : `0xblock${number - 1}`,
            number,
            timestamp: number,
            proposer: VALIDATOR,
            transactions_hash: "0x",
            state_root: `0xroot${number}`,
            last_commit_hash: "0x",
            size: 2,
          },
          hash: `0xblock${number}`,
          tx_hashes: [],
          validators: [VALIDATOR],
          commit: null,
        };
        const id = nextId++;
        return {
          block,
          txs: [],
          journalRemovals: [],
          stateChanges: new Map([[path, leaf]]),
          trie: {
            nodes: [[id, Uint8Array.of(1)]],
            root: { hash: `0xroot${number}`, id },
            retired: Array.from({ length: retired }, (_, i) => i + 1 + number * 10_000),
            ...(number === 0 ? {} : { parent: { hash: `0xroot${number - 1}`, id: id - 1 } }),
          },
          stakeChanges: new Map(),
        };
      };
      await store.commitBlock(write(0, 1, 0));
      const parent = path.slice(0, path.lastIndexOf("/"));
      await store.commitBlock(write(1, 2, 5_000)); // retires 5,000 nodes
      await store.commitBlock(write(2, null, 0)); // deletes the path (recorded at 2); prunes 2,002
      await store.commitBlock(write(3, 3, 0)); // the path again; pruning: 2,002 more of block 1's
      assert.deepEqual([...store.deletedPathsBelow(parent)], [path]);
      assert.equal(store.statesFrom(), 1, "block 1's nodes are not all deleted yet");
      // Block 4 deletes it again. Its pruning deletes the rest of block 1's nodes and then reaches
      // block 2's record of the path, which a read before the write still finds: the record must
      // be block 4's now, not gone.
      await store.commitBlock(write(4, null, 0));
      assert.equal(store.statesFrom(), 3);
      assert.deepEqual([...store.deletedPathsBelow(parent)], [path]);
      await store.close();
    }));
});
