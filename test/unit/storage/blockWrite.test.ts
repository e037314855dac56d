import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { BlockWrite, Commit, JsonValue, StoredBlock, Tx } from "../../../src/chain/index.ts";
import { LmdbStore } from "../../../src/storage/index.ts";
import { ACCOUNTS, openChain, produce, transfer, userWrites, VALIDATOR } from "../../helpers/smallChain.ts";
import { withTempDir } from "../../helpers/tempDir.ts";
import { turnsWhile } from "../../helpers/turns.ts";

/**
 * A block's write (LmdbStore.commitBlock): planned on the node's thread, made by the store's
 * writer thread (blockWriter.ts). The node's thread stays free meanwhile, and nothing it reads
 * shows the block before the write's promise resolves (the chain moves its head then); blocks
 * written there and by commitTogether on the node's thread read back whole; pruning, planned
 * before the write, leaves alone what the same write puts.
 */

const withDir = (run: (dir: string) => Promise<void>) => withTempDir("block-write", run);

describe("a block's write (storage/lmdbStore.ts commitBlock)", () => {
  // writeSliceMs 0: the plan yields after each step and goes to the thread in parts (a dev node's).
  for (const writeSliceMs of [undefined, 0]) {
    const sliced = writeSliceMs === undefined ? "in one piece" : "planned in slices, sent in parts";
    it(`leaves the thread free while LMDB writes, and shows the block to reads only once it resolves (${sliced})`, () =>
      withDir(async (dir) => {
        const store = new LmdbStore(dir, undefined, {
          writeThread: true,
          ...(writeSliceMs === undefined ? {} : { writeSliceMs }),
        });
        const chain = await openChain(store);
        const nonces = new Map<string, number>();
        await produce(
          chain,
          userWrites(nonces, 10, () => "x".repeat(200)),
        );
        const txs = userWrites(nonces, 3_000, () => "x".repeat(200));
        const executed = await chain.execute(txs, VALIDATOR, chain.head().header.timestamp + 1000);
        const commit: Commit = { height: 2, round: 0, block_hash: executed.hash, signatures: [] };
        const path = (tx: Tx) => (tx.operation as { ref: string }).ref;
        const before = () => ({
          head: store.headNumber(),
          block: store.getBlock(2),
          tx: store.getConfirmedTx((txs.at(-1) as Tx).hash),
          leaf: store.getLeaf(path(txs.at(-1) as Tx)),
          below: [...store.leafPathsBelow(`/users/${ACCOUNTS[0]}`)].length,
        });
        const expected = before();
        assert.equal(expected.head, 1);
        // Turns of this thread while the write is under way: each reads the store as before it.
        const turns = await turnsWhile(chain.commit(executed, commit, [VALIDATOR]), (turn) => {
          assert.deepEqual(
            before(),
            expected,
            `turn ${turn}: the block is visible before its write resolved`,
          );
        });
        assert.ok(turns > 0, "the thread was blocked for the whole write");
        assert.equal(store.headNumber(), 2);
        assert.equal(store.getBlock(2)?.hash, executed.hash);
        assert.equal(store.getConfirmedTx((txs.at(-1) as Tx).hash)?.block_number, 2);
        assert.equal(store.getLeaf(path(txs.at(-1) as Tx)), "x".repeat(200));
        await store.close();
        // And it is durable, whole: a reopened store holds it.
        const reopened = new LmdbStore(dir, undefined, { writeThread: true });
        assert.equal(reopened.headNumber(), 2);
        for (const tx of txs) assert.equal(reopened.getConfirmedTx(tx.hash)?.block_number, 2);
        const reread = await openChain(reopened);
        assert.equal(reread.head().header.state_root, executed.header.state_root);
        await reopened.close();
      }));
  }

  it("reads back whole what the writer thread and this thread's commitTogether wrote, in turns (shared msgpack structures)", () =>
    withDir(async (dir) => {
      const store = new LmdbStore(dir, undefined, { writeThread: true });
      const chain = await openChain(store);
      const nonces = new Map<string, number>();
      const written: Tx[] = [];
      // Each turn brings transactions whose values have new shapes, so each writer adds record
      // structures of its own to the tables (txs, blocks) the other wrote before.
      const shapes = (turn: number): Tx[] => [
        ...userWrites(nonces, 3, (i) => ({
          [`turn${turn}`]: i,
          nested: { [`k${turn}`]: [i, `v${turn}`] },
        })).map((tx) => ({
          ...tx,
          operation: { ...tx.operation, ref: `${(tx.operation as { ref: string }).ref}-${turn}` },
        })),
        transfer(nonces, [turn % 8, (turn + 1) % 8, 1]),
      ];
      for (let turn = 0; turn < 6; turn++) {
        const txs = shapes(turn);
        written.push(...txs);
        if (turn % 2 === 0)
          await produce(chain, txs); // the writer thread
        else await chain.commitTogether([txs], async (range) => Boolean(await produce(chain, range)));
      }
      const check = (from: LmdbStore, when: string) => {
        for (const tx of written) {
          assert.deepEqual(from.getConfirmedTx(tx.hash)?.tx, tx, `${when}: ${tx.hash}`);
        }
        for (let n = 1; n <= 6; n++) assert.equal(from.getBlock(n)?.header.number, n, `${when}: block ${n}`);
      };
      check(store, "as written");
      await store.close();
      const reopened = new LmdbStore(dir, undefined, { writeThread: true });
      check(reopened, "after a reopen");
      await reopened.close();
    }));

  // Pruning runs in the block's own write on the writer thread (and in commitTogether), in a
  // write of its own just after the block's otherwise: both must keep the new record.
  for (const writeThread of [true, false]) {
    it(`keeps a deletion record the block's write makes when pruning drops the old one of that path (${writeThread ? "pruning in the block's write" : "pruning in a write of its own"})`, () =>
      withDir(async (dir) => {
        // Two kept states; one old block retires so many nodes that pruning (about 2,000 deletions
        // per quiet block) is still behind when a later block deletes the same path again.
        const store = new LmdbStore(dir, { retainStates: 2, retainBlocks: 0 }, { writeThread });
        const commit = async (blockWrite: BlockWrite): Promise<void> => {
          await store.commitBlock(blockWrite);
          await store.pruned();
        };
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
        await commit(write(0, 1, 0));
        const parent = path.slice(0, path.lastIndexOf("/"));
        await commit(write(1, 2, 5_000)); // retires 5,000 nodes
        await commit(write(2, null, 0)); // deletes the path (recorded at 2); prunes 2,002 (twice 1 node, and the floor)
        await commit(write(3, 3, 0)); // the path again; pruning: 2,002 more of block 1's
        assert.deepEqual([...store.deletedPathsBelow(parent)], [path]);
        assert.equal(store.statesFrom(), 1, "block 1's nodes are not all deleted yet");
        // Block 4 deletes it again. Its pruning deletes the rest of block 1's nodes and then reaches
        // block 2's record of the path, which a read before the write still finds: the record must
        // be block 4's now, not gone.
        await commit(write(4, null, 0));
        assert.equal(store.statesFrom(), 3);
        assert.deepEqual([...store.deletedPathsBelow(parent)], [path]);
        await store.close();
      }));
  }
});
