import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setImmediate as nextTurn } from "node:timers/promises";
import type { Commit, ExecutedBlock, StoredBlock, Tx } from "../../../src/chain/index.ts";
import {
  type ProducerChain,
  type ProducerPool,
  SingleValidatorProducer,
} from "../../../src/consensus/index.ts";
import { privateKeyToAddress } from "../../../src/crypto/index.ts";
import { ManualScheduler } from "../../helpers/manualScheduler.ts";

/**
 * The dev chain's block producer (consensus/singleValidator.ts) on a manual clock: one block per
 * block time while blocks are not full, and the next block at once after a full one while the
 * pool holds more (docs/decisions/017-dev-blocks-back-to-back.md); the next block made while the
 * last is written (docs/decisions/021-next-block-while-the-last-is-written.md).
 */

const BLOCK_TIME = 1000;
const MAX_TXS = 10;
const privateKey = new Uint8Array(32).fill(7);
const key = { address: privateKeyToAddress(privateKey), privateKey };

/** Transactions that only need a hash and a size here. */
let counter = 0;
function txs(count: number, bytes = 100): Tx[] {
  return Array.from({ length: count }, () => {
    counter++;
    return { hash: `0x${counter.toString(16).padStart(64, "0")}`, bytes } as unknown as Tx;
  });
}

/**
 * A chain that executes nothing: a block is its transactions, its size their bytes. Its writes
 * land a turn after they begin, or, with `holdWrites`, when the test calls `land`.
 */
class FakeChain implements ProducerChain {
  /** Durable blocks. */
  readonly blocks: StoredBlock[];
  /** The numbers of the blocks executed, in order (a dropped block's too). */
  readonly executed: number[] = [];
  holdWrites = false;
  private underWay: StoredBlock | undefined;
  private lastWrite: Promise<unknown> = Promise.resolve();
  private readonly waiting: ((ok: boolean) => void)[] = [];

  constructor(genesisTime: number) {
    this.blocks = [this.block(0, genesisTime, [], 2)];
  }

  head(): StoredBlock {
    return this.blocks.at(-1) as StoredBlock;
  }

  tip(): StoredBlock {
    return this.underWay ?? this.head();
  }

  validators() {
    return [{ address: key.address, stake: 1 }];
  }

  validatorsAt() {
    return this.validators();
  }

  async execute(list: Tx[], proposer: string, timestamp: number): Promise<ExecutedBlock> {
    const size = list.reduce((sum, tx) => sum + (tx as unknown as { bytes: number }).bytes, 2);
    const block = this.block(this.tip().header.number + 1, timestamp, list, size);
    this.executed.push(block.header.number);
    return { header: { ...block.header, proposer }, hash: block.hash, txs: list } as ExecutedBlock;
  }

  async commitAside(
    executed: ExecutedBlock,
    commit: Commit,
    signers: string[],
  ): Promise<{ block: StoredBlock; durable: Promise<StoredBlock> }> {
    await this.lastWrite; // as Chain does: one write at a time
    if (executed.header.number !== this.head().header.number + 1) {
      throw new Error(`block ${executed.header.number} was executed on a block that was not stored`);
    }
    const block = {
      ...this.block(executed.header.number, executed.header.timestamp, executed.txs, executed.header.size),
      commit,
      validators: signers,
    };
    this.underWay = block;
    const landed = this.holdWrites
      ? new Promise<boolean>((resolve) => this.waiting.push(resolve))
      : nextTurn().then(() => true);
    const durable = landed.then((ok) => {
      this.underWay = undefined;
      if (!ok) throw new Error("disk full");
      this.blocks.push(block);
      return block;
    });
    this.lastWrite = durable.catch(() => undefined);
    return { block, durable };
  }

  /** Lands (or fails) the write under way. */
  land(ok = true): void {
    const next = this.waiting.shift();
    assert.ok(next !== undefined, "a write is under way");
    next(ok);
  }

  abandon(): void {}

  private block(number: number, timestamp: number, list: Tx[], size: number): StoredBlock {
    return {
      header: {
        parent_hash: "",
        number,
        timestamp,
        proposer: key.address,
        transactions_hash: "0x",
        state_root: "0x",
        last_commit_hash: "0x",
        size,
      },
      hash: `0x${number.toString(16).padStart(64, "0")}`,
      tx_hashes: list.map((tx) => tx.hash),
      validators: [],
      commit: null,
    };
  }
}

class FakePool implements ProducerPool {
  private pending: Tx[] = [];
  /** Transactions a block cannot take yet (as behind a nonce gap): never selected. */
  readonly held = new Set<string>();
  selections = 0;

  get size(): number {
    return this.pending.length;
  }

  add(list: Tx[]): void {
    this.pending.push(...list);
  }

  selectForBlock(skip?: ReadonlySet<string>): Tx[] {
    // A producer that retries at once spins in microtasks: stop it where the test can see it.
    if (++this.selections > 100) throw new Error("selected 100 times: the producer spins");
    return this.pending.filter((tx) => !this.held.has(tx.hash) && !skip?.has(tx.hash)).slice(0, MAX_TXS);
  }

  removeCommitted(hashes: readonly string[]): void {
    const gone = new Set(hashes);
    this.pending = this.pending.filter((tx) => !gone.has(tx.hash));
  }
}

/** A producer on a manual clock whose last block was made `sinceLastMs` ago. */
function setup(
  sinceLastMs: number,
  limits = { maxBlockTxs: MAX_TXS, maxBlockBytes: 1_000_000, maxTxBytes: 1000 },
) {
  const clock = new ManualScheduler();
  const errors: unknown[] = [];
  const heard: number[] = [];
  const chain = new FakeChain(clock.now() - sinceLastMs);
  const pool = new FakePool();
  const producer = new SingleValidatorProducer(
    chain,
    pool,
    key,
    { chainId: 1, blockTimeMs: BLOCK_TIME, limits },
    { onError: (error) => errors.push(error), onBlock: (block) => heard.push(block.header.number) },
    clock,
  );
  /** Lets production that can run without the clock moving run. */
  const settle = async () => {
    for (let i = 0; i < 20; i++) await nextTurn();
  };
  /** Transactions arrive as admission hands them over: the pool grows, the producer is told. */
  const arrive = async (list: Tx[]) => {
    pool.add(list);
    producer.notify();
    await settle();
  };
  /** Sizes and times (from `start`) of the blocks made since `from`. */
  const made = (from: number, start: number) =>
    chain.blocks.slice(from).map((b) => [b.tx_hashes.length, b.header.timestamp - start]);
  return { clock, chain, pool, producer, settle, arrive, made, errors, heard };
}

describe("dev block producer (consensus/singleValidator.ts), manual clock", () => {
  it("makes at most one block per block time while its blocks are not full", async () => {
    const { clock, producer, settle, arrive, made } = setup(5_000);
    const start = clock.now();
    producer.start();
    await arrive(txs(4));
    await arrive(txs(3));
    assert.deepEqual(made(1, start), [[4, 0]], "the second batch waits for the block time");
    clock.fireNext(start + BLOCK_TIME - 1);
    await settle();
    assert.equal(made(1, start).length, 1, "not before the block time");
    clock.fireNext();
    await settle();
    assert.deepEqual(made(1, start), [
      [4, 0],
      [3, BLOCK_TIME],
    ]);
    await producer.stop();
  });

  it("makes the next block at once after a full one, until a block is not full", async () => {
    const { clock, pool, producer, settle, arrive, made } = setup(5_000);
    const start = clock.now();
    pool.add(txs(25));
    producer.start();
    await settle();
    // Full, full, then the rest: the clock did not move (timestamps are parent + 1 ms).
    assert.deepEqual(made(1, start), [
      [10, 0],
      [10, 1],
      [5, 2],
    ]);
    // The last block was not full: fewer than a block's worth wait for the block time again.
    await arrive(txs(8));
    assert.equal(made(1, start).length, 3);
    clock.fireNext();
    await settle();
    assert.deepEqual(made(4, start), [[8, 2 + BLOCK_TIME]]);
    await producer.stop();
  });

  it("makes the next block at once when the pool holds a full block's worth, after a block that was not", async () => {
    const { clock, pool, producer, settle, arrive, made } = setup(5_000);
    const start = clock.now();
    pool.add(txs(4));
    producer.start();
    await settle();
    await arrive(txs(6));
    assert.deepEqual(made(1, start), [[4, 0]], "six wait for the block time");
    await arrive(txs(4));
    // Fourteen wait: a full block's worth goes at once (its timestamp the parent's + 1 ms).
    assert.deepEqual(made(1, start), [
      [4, 0],
      [10, 1],
    ]);
    await producer.stop();
  });

  it("waits the block time when the pool is full of transactions no block can take", async () => {
    const { clock, pool, producer, settle, arrive, made, errors } = setup(5_000);
    const start = clock.now();
    const stuck = txs(12);
    for (const tx of stuck) pool.held.add(tx.hash);
    pool.add(stuck);
    producer.start();
    await settle();
    assert.deepEqual(made(1, start), [], "nothing to take");
    assert.deepEqual(errors, [], "no spinning on the full pool");
    assert.equal(pool.selections, 1);
    await arrive(txs(1));
    assert.deepEqual(made(1, start), [[1, 0]]);
    await arrive(txs(1));
    assert.equal(made(1, start).length, 1, "the pool's size is no reason: its transactions cannot go");
    clock.fireNext();
    await settle();
    assert.deepEqual(made(1, start), [
      [1, 0],
      [1, BLOCK_TIME],
    ]);
    await producer.stop();
  });

  it("counts a block without room for one more transaction of the largest size as full", async () => {
    // Blocks of at most 1,000 bytes and transactions of up to 300: a block of 3 × 250 + 2 bytes
    // has no room for a fourth of 300, though it holds fewer than MAX_TXS.
    const { clock, pool, producer, settle, arrive, made } = setup(5_000, {
      maxBlockTxs: MAX_TXS,
      maxBlockBytes: 1000,
      maxTxBytes: 300,
    });
    const start = clock.now();
    pool.add(txs(3, 250));
    producer.start();
    await settle();
    await arrive(txs(2, 100));
    assert.deepEqual(made(1, start), [
      [3, 0],
      [2, 1],
    ]);
    await producer.stop();
  });

  it("makes the next block while the last is written, without its transactions; they leave the pool once it is durable", async () => {
    const { chain, pool, producer, settle, made, heard } = setup(5_000);
    chain.holdWrites = true;
    const start = chain.head().header.timestamp + 5_000;
    const sent = txs(25);
    pool.add(sent);
    producer.start();
    await settle();
    assert.deepEqual(chain.executed, [1, 2], "block 2 executed while block 1 is written");
    assert.deepEqual(made(1, start), [], "nothing durable yet");
    assert.equal(pool.size, 25, "block 1's transactions stay pending until it is durable");
    chain.land();
    await settle();
    assert.deepEqual(made(1, start), [[10, 0]]);
    assert.deepEqual(heard, [1], "onBlock hears of a block once it is durable");
    assert.equal(pool.size, 15);
    assert.deepEqual(chain.executed, [1, 2, 3], "block 3 executes while block 2 is written");
    chain.land();
    await settle();
    chain.land();
    await settle();
    assert.deepEqual(made(1, start), [
      [10, 0],
      [10, 1],
      [5, 2],
    ]);
    assert.deepEqual(
      chain.blocks.slice(1).flatMap((b) => b.tx_hashes),
      sent.map((tx) => tx.hash),
      "each transaction in one block, in arrival order",
    );
    assert.deepEqual(heard, [1, 2, 3]);
    assert.equal(pool.size, 0);
    await producer.stop();
  });

  it("after a failed write, reports it and the block built on it, and makes both again a block time later", async () => {
    const { clock, chain, pool, producer, settle, made, errors } = setup(5_000);
    chain.holdWrites = true;
    const start = clock.now();
    const sent = txs(15);
    pool.add(sent);
    producer.start();
    await settle();
    assert.deepEqual(chain.executed, [1, 2]);
    chain.land(false);
    await settle();
    assert.equal(errors.length, 2, "the failed write, and the block executed on top of it");
    assert.match(String(errors[0]), /disk full/);
    assert.match(String(errors[1]), /not stored/);
    assert.equal(pool.size, 15, "every transaction still pending");
    assert.deepEqual(made(1, start), []);
    chain.holdWrites = false;
    clock.fireNext(start + BLOCK_TIME);
    await settle();
    assert.deepEqual(made(1, start), [
      [10, BLOCK_TIME],
      [5, BLOCK_TIME + 1],
    ]);
    assert.deepEqual(
      chain.blocks.slice(1).flatMap((b) => b.tx_hashes),
      sent.map((tx) => tx.hash),
    );
    await producer.stop();
  });

  it("stop() waits for the write under way", async () => {
    const { chain, pool, producer, settle } = setup(5_000);
    chain.holdWrites = true;
    pool.add(txs(3));
    producer.start();
    await settle();
    let stopped = false;
    const stopping = producer.stop().then(() => {
      stopped = true;
    });
    await settle();
    assert.equal(stopped, false, "the block is not durable yet");
    chain.land();
    await stopping;
    assert.equal(chain.blocks.length, 2);
  });
});
