import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  balanceOf,
  type BlockWrite,
  Chain,
  type ExecutedBlock,
  type StoredBlock,
  type Tx,
} from "../../../src/chain/index.ts";
import { ALICE, BOB, selfCommit, testGenesis, unsignedTx, VALIDATOR } from "../../helpers/chainFixture.ts";
import { MemoryStore } from "../../helpers/memoryStore.ts";

/**
 * Chain.commitAside (docs/decisions/021-next-block-while-the-last-is-written.md): the dev producer
 * hands a block to the store and executes the next one on top of it while it is written. These
 * tests hold each write until they let it land (or fail), and compare every block with the one
 * the same transactions make when each block is committed before the next executes.
 */

const T0 = 1_700_000_000_000;
const GENESIS = testGenesis({
  accounts: [
    { address: ALICE, balance: 5_000_000 },
    { address: BOB, balance: 10 },
  ],
});

/** Alice's transaction number `nonce`: a transfer to Bob, or with `stake` a stake of her own. */
function aliceTx(nonce: number, amount: number, stake = false): Tx {
  const ref = stake ? `/staking/${ALICE}/s${nonce}/value` : `/transfer/${ALICE}/${BOB}/t${nonce}/value`;
  return unsignedTx(ALICE, nonce, ref, amount, T0);
}

/** The validator's own certificate for `executed`, and its signers. */
const certify = (executed: ExecutedBlock) => ({ commit: selfCommit(executed), signers: [VALIDATOR] });

/** A store whose block writes wait, in order, until the test lands them (or fails them). */
class HeldStore extends MemoryStore {
  holding = false;
  private readonly waiting: ((ok: boolean) => void)[] = [];

  override async commitBlock(write: BlockWrite): Promise<void> {
    if (this.holding && !(await new Promise<boolean>((resolve) => this.waiting.push(resolve)))) {
      throw new Error("disk full");
    }
    return super.commitBlock(write);
  }

  /** Lands (or fails) the oldest write waiting; then lets its continuations run. */
  async land(ok = true): Promise<void> {
    await turns();
    // A chain in slices takes more turns to hand a block over (its trie work in pieces).
    for (let i = 0; i < 200 && this.waiting.length === 0; i++) await turns();
    const next = this.waiting.shift();
    assert.ok(next !== undefined, "a write is waiting");
    next(ok);
    await turns();
  }
}

const turns = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
};

/** `sliceMs`: the aside chain executes, numbers and releases its trie in slices (a dev node's). */
async function openChains(sliceMs?: number): Promise<{ aside: Chain; store: HeldStore; reference: Chain }> {
  const store = new HeldStore();
  const aside = new Chain(store, GENESIS, {
    writesAside: true,
    ...(sliceMs === undefined ? {} : { executionSliceMs: sliceMs }),
  });
  const reference = new Chain(new MemoryStore(), GENESIS);
  await Promise.all([aside.open(), reference.open()]);
  store.holding = true;
  return { aside, store, reference };
}

/** The blocks `batches` make on `chain` committed one at a time. */
async function oneAtATime(chain: Chain, batches: Tx[][]): Promise<StoredBlock[]> {
  const blocks: StoredBlock[] = [];
  for (const [i, txs] of batches.entries()) {
    const executed = await chain.execute(txs, VALIDATOR, T0 + 1000 * (i + 1));
    const { commit, signers } = certify(executed);
    blocks.push(await chain.commit(executed, commit, signers));
  }
  return blocks;
}

const BATCHES = [
  [aliceTx(0, 100), aliceTx(1, 200), aliceTx(2, 300)],
  [aliceTx(3, 400), aliceTx(4, 500)],
  [aliceTx(5, 600)],
];

// Slices of 0 ms: every piece of the work is followed by a turn of the event loop.
for (const sliceMs of [undefined, 0]) {
  describe(`Chain.commitAside: the next block executes while the last is written${sliceMs === undefined ? "" : ", in slices"}`, () => {
    it("makes the blocks and roots of one block at a time; reads and listeners see a block once it is durable", async () => {
      const { aside, store, reference } = await openChains(sliceMs);
      const expected = await oneAtATime(reference, BATCHES);
      const heard: number[] = [];
      aside.committed.add((block) => heard.push(block.header.number));

      const ex1 = await aside.execute(BATCHES[0] as Tx[], VALIDATOR, T0 + 1000);
      const first = await aside.commitAside(ex1, certify(ex1).commit, [VALIDATOR]);
      assert.equal(first.block.hash, expected[0]?.hash);
      assert.equal(aside.head().header.number, 0, "the head is the last durable block");
      assert.equal(aside.tip().header.number, 1, "the next block builds on the one being written");
      assert.equal(balanceOf(aside.state(), BOB), 10, "reads see durable state only");

      // Block 2's nonces 3 and 4 succeed only on block 1's state, which is not stored yet.
      const ex2 = await aside.execute(BATCHES[1] as Tx[], VALIDATOR, T0 + 2000);
      assert.deepEqual(ex2.results, [{ code: 0 }, { code: 0 }]);
      assert.equal(ex2.header.parent_hash, first.block.hash);
      let secondHandedOver = false;
      const second = aside.commitAside(ex2, certify(ex2).commit, [VALIDATOR]).then((handed) => {
        secondHandedOver = true;
        return handed;
      });
      await store.land();
      assert.equal((await first.durable).header.number, 1);
      assert.deepEqual(heard, [1], "listeners hear of block 1 once it is durable");
      assert.equal(balanceOf(aside.state(), BOB), 610);
      const { durable } = await second;
      assert.ok(secondHandedOver, "block 2's write began only after block 1's landed");
      assert.deepEqual(heard, [1]);

      const ex3 = await aside.execute(BATCHES[2] as Tx[], VALIDATOR, T0 + 3000);
      const third = aside.commitAside(ex3, certify(ex3).commit, [VALIDATOR]);
      await store.land();
      await durable;
      await store.land();
      await (await third).durable;
      assert.deepEqual(heard, [1, 2, 3]);
      assert.deepEqual(
        [1, 2, 3].map((n) => store.getBlock(n)?.header),
        expected.map((b) => b.header),
        "the same headers (state roots included) as one block at a time",
      );
      assert.equal(aside.head().hash, aside.tip().hash);
    });

    it("drops the block executed on a block whose write failed, and goes on from the store's head", async () => {
      const { aside, store, reference } = await openChains(sliceMs);
      const expected = await oneAtATime(reference, BATCHES.slice(0, 2));

      const ex1 = await aside.execute(BATCHES[0] as Tx[], VALIDATOR, T0 + 1000);
      const first = await aside.commitAside(ex1, certify(ex1).commit, [VALIDATOR]);
      const ex2 = await aside.execute(BATCHES[1] as Tx[], VALIDATOR, T0 + 2000);
      const firstFails = assert.rejects(first.durable, /disk full/);
      const secondFails = assert.rejects(
        aside.commitAside(ex2, certify(ex2).commit, [VALIDATOR]),
        /block 1's write failed/,
      );
      await store.land(false);
      await firstFails;
      await secondFails;
      assert.equal(aside.head().header.number, 0);
      assert.equal(aside.tip().header.number, 0, "nothing is under way");

      // The same transactions again, from the store's state: the trie was read again from it.
      store.holding = false;
      assert.deepEqual(
        (await oneAtATime(aside, BATCHES.slice(0, 2))).map((b) => b.header),
        expected.map((b) => b.header),
      );
    });

    it("after a write fails with no block executing, the next block executes on the store's head", async () => {
      const { aside, store, reference } = await openChains(sliceMs);
      const [expected] = await oneAtATime(reference, BATCHES.slice(0, 1));
      const ex1 = await aside.execute(BATCHES[0] as Tx[], VALIDATOR, T0 + 1000);
      const { durable } = await aside.commitAside(ex1, certify(ex1).commit, [VALIDATOR]);
      const fails = assert.rejects(durable, /disk full/);
      await store.land(false);
      await fails;
      store.holding = false;
      const [again] = await oneAtATime(aside, BATCHES.slice(0, 1));
      assert.deepEqual(again?.header, expected?.header);
    });

    it("commits a block that changes stakes before the next executes (its validator set is read from the store)", async () => {
      const { aside, store } = await openChains(sliceMs);
      const ex1 = await aside.execute([aliceTx(0, 2_000_000, true)], VALIDATOR, T0 + 1000);
      assert.equal(ex1.stakeChanges.size, 1);
      const handing = aside.commitAside(ex1, certify(ex1).commit, [VALIDATOR]);
      await store.land();
      const { block, durable } = await handing;
      assert.equal(aside.head().hash, block.hash, "durable when commitAside returned");
      assert.equal(await durable, block);
      assert.equal(aside.validatorsAt(3).length, 2, "Alice validates from height 3");
    });
  });
}

// Not in the loop above: a chain without writesAside does not slice its commit either.
it("Chain.commitAside commits as `commit` does when the store writes on the caller's thread", async () => {
  const store = new MemoryStore();
  const chain = new Chain(store, GENESIS);
  await chain.open();
  const ex1 = await chain.execute(BATCHES[0] as Tx[], VALIDATOR, T0 + 1000);
  const { block } = await chain.commitAside(ex1, certify(ex1).commit, [VALIDATOR]);
  assert.equal(chain.head().hash, block.hash);
  assert.equal(store.head, 1);
});
