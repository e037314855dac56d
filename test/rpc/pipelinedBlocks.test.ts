import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { DerivedAccount } from "../../src/crypto/index.ts";
import { readBlocks, replayDevChain } from "../helpers/crash.ts";
import { signTx, startTestNode, type TestNode, transferBody, waitFor } from "../helpers/testNode.ts";

/**
 * A dev node whose blocks are written on the store's thread makes the next block while the last
 * is written (docs/decisions/021-next-block-while-the-last-is-written.md). Blocks of 40 and a
 * backlog of 400 ordered transfers make full blocks back to back, each executed on the state of
 * one not yet stored (a sender's next nonce is in it). Every transfer must commit exactly once, in
 * nonce order, and the chain must replay to the same headers on a chain that committed each
 * block before executing the next.
 */

const BLOCK_TXS = 40;
const SENDERS = 8;
const PER_SENDER = 50; // within the pool's 64 per account

describe("dev node with storage.write_thread: the next block executes while the last is written", () => {
  let t: TestNode;
  before(async () => {
    t = await startTestNode({
      storage: { writeThread: true },
      // A block time no backlog waits for: full blocks follow each other at once.
      blockTimeMs: 60_000,
      genesis: (genesis) => ({ ...genesis, consensus: { ...genesis.consensus, max_block_txs: BLOCK_TXS } }),
    });
  });
  after(async () => {
    await t?.stop();
  });

  it("commits a backlog in full blocks back to back, each transfer once, replaying to the same headers", async () => {
    const [validator, ...rest] = t.accounts as DerivedAccount[];
    const senders = rest.slice(0, SENDERS);
    const recipient = (t.accounts[9] as DerivedAccount).address;
    const batches = senders.map((sender) =>
      Array.from({ length: PER_SENDER }, (_, nonce) =>
        signTx(sender.privateKey, transferBody(sender.address, recipient, 1, nonce, `p${nonce}`)),
      ),
    );
    const sent = (
      await Promise.all(
        batches.map((tx_list) => t.result<string[]>("chain_sendSignedTransactionBatch", { tx_list })),
      )
    ).flat();
    assert.equal(sent.length, SENDERS * PER_SENDER);

    const head = await waitFor(
      "every transfer to commit",
      async () => {
        const pending = await t.result<unknown[]>("chain_getPendingTransactions");
        return pending.length === 0 ? await t.result<number>("chain_getRecentBlockNumber") : undefined;
      },
      30_000,
    );
    const blocks = await readBlocks(t.url, 0, head);
    const included = blocks.flatMap((block) => block.transactions.map((tx) => tx.hash));
    assert.equal(new Set(included).size, included.length, "no transfer in two blocks");
    assert.deepEqual(new Set(included), new Set(sent), "every acknowledged transfer, and nothing else");
    const full = blocks.filter((block) => block.transactions.length === BLOCK_TXS).length;
    assert.ok(full >= (SENDERS * PER_SENDER) / BLOCK_TXS - 1, `full blocks back to back (${full})`);
    for (const sender of senders) {
      assert.equal(await t.result("chain_getNonce", { address: sender.address }), PER_SENDER);
    }
    await replayDevChain(
      t.genesis,
      validator as DerivedAccount,
      blocks,
      "blocks made while the last was written",
    );
  });
});
