import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Worker } from "node:worker_threads";
import { describe, it } from "node:test";
import { Chain, type JsonValue, StateTrie, type Tx } from "../../../src/chain/index.ts";
import { TrieThread } from "../../../src/node/trieThread.ts";
import { LmdbStore } from "../../../src/storage/index.ts";
import { ALICE, BOB, selfCommit, testGenesis, unsignedTx, VALIDATOR } from "../../helpers/chainFixture.ts";
import { seededUint32 } from "../../helpers/seededRandom.ts";
import { withTempDir } from "../../helpers/tempDir.ts";

/**
 * The state's trie on a thread of its own (node/trieThread.ts, docs/decisions/024): a chain whose
 * trie is there must make exactly the blocks a chain with its trie on the event loop makes, through
 * every way a block ends (committed, handed over while the next executes, abandoned, reopened).
 * The thread keeps only the top level decoded (residentDepth 1), so that nearly every node of an
 * earlier block is read back from the store, after the write that stored it.
 */

const T0 = 1_700_000_000_000;
const GENESIS = testGenesis({
  accounts: [
    { address: ALICE, balance: 5_000_000 },
    { address: BOB, balance: 10 },
  ],
});

/** Alice's transaction `nonce`: a transfer to Bob, or a write (or, with null, a removal) of her data. */
const aliceTx = (nonce: number, ref: string, value: JsonValue): Tx =>
  unsignedTx(ALICE, nonce, ref, value, T0);

/** Blocks of 1–40 transactions: transfers, and writes and removals over 60 paths of Alice's. */
function randomBlocks(seed: number, count: number): Tx[][] {
  const random = seededUint32(seed);
  const blocks: Tx[][] = [];
  let nonce = 0;
  for (let b = 0; b < count; b++) {
    const txs: Tx[] = [];
    for (let n = 1 + (random() % 40); n > 0; n--) {
      const kind = random() % 4;
      const slot = random() % 60;
      if (kind === 0)
        txs.push(aliceTx(nonce, `/transfer/${ALICE}/${BOB}/t${nonce}/value`, 1 + (random() % 9)));
      else if (kind === 1) txs.push(aliceTx(nonce, `/users/${ALICE}/s${slot}`, null));
      else txs.push(aliceTx(nonce, `/users/${ALICE}/s${slot}`, { n: random() % 1000, at: b }));
      nonce++;
    }
    blocks.push(txs);
  }
  return blocks;
}

/** A chain on an LMDB store in `dir`, with its trie on `thread` if given. */
async function openChain(dir: string, thread?: TrieThread, writeThread = false) {
  const store = new LmdbStore(dir, undefined, { writeThread });
  const chain = new Chain(store, GENESIS, {
    writesAside: writeThread,
    ...(thread === undefined ? {} : { openTrie: (rootHex) => thread.open(store, rootHex) }),
  });
  await chain.open();
  return { store, chain };
}

/**
 * `ours` (trie on the thread) and `theirs` (on the event loop) are at the same head, and what the
 * thread's trie stored is the whole trie: opened from `ours`'s store here, it has the head's root.
 */
function assertSameHead(ours: { chain: Chain; store: LmdbStore }, theirs: { chain: Chain }): void {
  const head = ours.chain.head();
  assert.equal(head.hash, theirs.chain.head().hash);
  assert.equal(new StateTrie(ours.store, head.header.state_root).rootHex(), head.header.state_root);
}

const closeAll = async (thread: TrieThread, ...stores: LmdbStore[]): Promise<void> => {
  await thread.close();
  for (const store of stores) await store.close();
};

type OpenChain = Awaited<ReturnType<typeof openChain>>;

/**
 * Runs `run` with `a`, a chain whose trie is on `thread`, and `b`, a reference chain with its trie
 * on the event loop, each on an LMDB store of its own; then checks that both are at the same head
 * (assertSameHead), and closes everything, even on failure.
 */
async function withChainPair(
  run: (pair: { thread: TrieThread; a: OpenChain; b: OpenChain }) => Promise<void>,
  writeThread = false,
): Promise<void> {
  await withTempDir("trie-thread", async (dir) => {
    const thread = await TrieThread.start(join(dir, "a"), { residentDepth: 1 });
    const a = await openChain(join(dir, "a"), thread, writeThread);
    const b = await openChain(join(dir, "b"));
    try {
      await run({ thread, a, b });
      assertSameHead(a, b);
    } finally {
      await closeAll(thread, a.store, b.store);
    }
  });
}

const certify = (chain: Chain, txs: Tx[], height: number) =>
  chain
    .execute(txs, VALIDATOR, T0 + height * 1000)
    .then((executed) => ({ executed, commit: selfCommit(executed) }));

/**
 * The thread dies as a worker does on an uncaught error (a test-only reach inside), and `chain`'s
 * block at `height` fails with that cause.
 */
async function diesUnder(thread: TrieThread, chain: Chain, txs: Tx[], height: number): Promise<void> {
  await (thread as unknown as { worker: Worker }).worker.terminate();
  await assert.rejects(certify(chain, txs, height), /the trie thread exited/);
}

describe("the state's trie on a thread of its own", () => {
  for (const writeThread of [false, true]) {
    it(`makes the blocks a chain with its trie on the event loop makes (${writeThread ? "handed over while the next executes" : "each committed before the next"})`, async () => {
      await withChainPair(async ({ a, b }) => {
        const random = seededUint32(7);
        let durable: Promise<unknown> = Promise.resolve();
        for (const [i, txs] of randomBlocks(3, 30).entries()) {
          const height = i + 1;
          const theirs = await certify(b.chain, txs, height);
          // Now and then another block is executed and abandoned first (a proposal that lost its
          // round): it writes a path that no block writes, so its root is no block's.
          if (random() % 5 === 0) {
            const first = txs[0] as Tx;
            const lost = aliceTx(first.nonce, `/users/${ALICE}/lost/b${height}`, height);
            await a.chain.execute([lost], VALIDATOR, T0);
            a.chain.abandon();
          }
          const ours = await certify(a.chain, txs, height);
          assert.equal(ours.executed.header.state_root, theirs.executed.header.state_root, `block ${height}`);
          assert.equal(ours.executed.hash, theirs.executed.hash);
          await b.chain.commit(theirs.executed, theirs.commit, [VALIDATOR]);
          const handed = await a.chain.commitAside(ours.executed, ours.commit, [VALIDATOR]);
          durable = handed.durable;
        }
        await durable;
      }, writeThread);
    });
  }

  it("goes on from the stored head after the node restarts", async () => {
    await withTempDir("trie-thread", async (dir) => {
      const blocks = randomBlocks(11, 12);
      const reference = await openChain(join(dir, "b"));
      const path = join(dir, "a");
      try {
        for (const [run, range] of [
          [0, [0, 6]],
          [1, [6, 12]],
        ] as const) {
          const thread = await TrieThread.start(path, { residentDepth: 1 });
          const a = await openChain(path, thread);
          try {
            for (let i = range[0]; i < range[1]; i++) {
              const txs = blocks[i] as Tx[];
              if (run === 0) {
                const theirs = await certify(reference.chain, txs, i + 1);
                await reference.chain.commit(theirs.executed, theirs.commit, [VALIDATOR]);
              }
              const ours = await certify(a.chain, txs, i + 1);
              await a.chain.commit(ours.executed, ours.commit, [VALIDATOR]);
            }
          } finally {
            await thread.close();
            await a.store.close();
          }
          if (run === 1) {
            for (let i = 6; i < 12; i++) {
              const theirs = await certify(reference.chain, blocks[i] as Tx[], i + 1);
              await reference.chain.commit(theirs.executed, theirs.commit, [VALIDATOR]);
            }
          }
        }
        const reopened = new LmdbStore(path);
        try {
          const head = reopened.getBlock(reopened.headNumber() ?? -1);
          assert.equal(head?.hash, reference.chain.head().hash);
        } finally {
          await reopened.close();
        }
      } finally {
        await reference.store.close();
      }
    });
  });

  it("does not start where the store cannot be opened (the node then keeps its trie on the event loop)", async () => {
    await withTempDir("trie-thread", async (dir) => {
      const file = join(dir, "not-a-directory");
      writeFileSync(file, "");
      await assert.rejects(TrieThread.start(join(file, "data")));
    });
  });

  it("fails the next block with the cause once the thread is gone", async () => {
    await withTempDir("trie-thread", async (dir) => {
      const thread = await TrieThread.start(dir);
      const { store, chain } = await openChain(dir, thread);
      try {
        await thread.close();
        await assert.rejects(certify(chain, randomBlocks(1, 1)[0] as Tx[], 1), /the trie thread is closed/);
        // The chain is not left busy: the next block fails the same way, not as "already executing".
        await assert.rejects(certify(chain, randomBlocks(1, 1)[0] as Tx[], 1), /the trie thread is closed/);
      } finally {
        await store.close();
      }
    });
  });

  it("starts again after its thread died: the block that met the dead thread fails, the next is made from the head", async () => {
    await withChainPair(async ({ thread, a, b }) => {
      const blocks = randomBlocks(9, 6);
      for (const [i, txs] of blocks.entries()) {
        const height = i + 1;
        if (height === 4) await diesUnder(thread, a.chain, txs, height);
        const theirs = await certify(b.chain, txs, height);
        await b.chain.commit(theirs.executed, theirs.commit, [VALIDATOR]);
        const ours = await certify(a.chain, txs, height);
        await a.chain.commit(ours.executed, ours.commit, [VALIDATOR]);
      }
    });
  });

  it("gives the thread up after it died again at three starts in a row, and goes on with the trie on the event loop", async () => {
    await withChainPair(async ({ thread, a, b }) => {
      const causes: Error[] = [];
      thread.onGaveUp = (cause) => causes.push(cause);
      const dies = (height: number, txs: Tx[]) => diesUnder(thread, a.chain, txs, height);
      for (const [i, txs] of randomBlocks(9, 8).entries()) {
        const height = i + 1;
        // Once each at heights 2–4, with a block applied between: the count starts again each time.
        if (height >= 2 && height <= 4) await dies(height, txs);
        if (height === 5) {
          for (let start = 1; start <= 3; start++) await dies(height, txs);
          assert.equal(causes.length, 0, "three starts in a row are still made");
          await dies(height, txs);
          assert.equal(causes.length, 1, "the fourth death in a row gives the thread up");
          assert.match(causes[0]?.message ?? "", /the trie thread exited/);
        }
        const theirs = await certify(b.chain, txs, height);
        await b.chain.commit(theirs.executed, theirs.commit, [VALIDATOR]);
        const ours = await certify(a.chain, txs, height);
        await a.chain.commit(ours.executed, ours.commit, [VALIDATOR]);
      }
      assert.equal(causes.length, 1, "told once");
    });
  });

  it("ends the thread with the cause when a message other than an apply fails on it; the next open starts another", async () => {
    await withTempDir("trie-thread", async (dir) => {
      const thread = await TrieThread.start(dir);
      const store = new LmdbStore(dir);
      try {
        thread.post({ op: "written" }); // no trie is open on the thread yet
        await assert.rejects(
          thread.request(new Map()),
          /the trie thread failed: the trie thread has no trie open/,
        );
        assert.equal(thread.failed, true);
        const changes = new Map<string, JsonValue>([["/a", 1]]);
        const root = await thread.open(store, undefined).apply(changes);
        assert.equal(root, await new StateTrie(store).apply(changes));
      } finally {
        await closeAll(thread, store);
      }
    });
  });

  it("commits ranges of blocks in one write each, as sync does (the range's nodes stay with the thread until it lands)", async () => {
    await withChainPair(async ({ a, b }) => {
      const blocks = randomBlocks(5, 24);
      for (let start = 0; start < blocks.length; start += 8) {
        const range = blocks.slice(start, start + 8);
        const committed = await a.chain.commitTogether(range, async (txs) => {
          const height = a.chain.head().header.number + 1;
          const theirs = await certify(b.chain, txs, height);
          await b.chain.commit(theirs.executed, theirs.commit, [VALIDATOR]);
          const ours = await certify(a.chain, txs, height);
          assert.equal(ours.executed.header.state_root, theirs.executed.header.state_root, `block ${height}`);
          await a.chain.commit(ours.executed, ours.commit, [VALIDATOR]);
          return true;
        });
        assert.equal(committed, range.length);
      }
    });
  });
});
