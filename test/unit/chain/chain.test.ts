import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  balanceOf,
  blockSize,
  Chain,
  commitHash,
  type ExecutedBlock,
  GENESIS_PROPOSER,
  hashHeader,
  nonceOf,
  type StoredBlock,
  type Tx,
  transactionsHash,
  verifyCommit,
} from "../../../src/chain/index.ts";
import {
  ALICE,
  BOB,
  CHAIN_ID,
  selfCommit,
  testGenesis as genesis,
  VALIDATOR,
} from "../../helpers/chainFixture.ts";
import { MemoryStore } from "../../helpers/memoryStore.ts";

let txCounter = 0;
function transfer(nonce: number, amount: number): Tx {
  txCounter += 1;
  return {
    hash: `0x${txCounter.toString(16).padStart(64, "0")}`,
    address: ALICE,
    signature: "0x",
    timestamp: 1_700_000_000_000,
    nonce,
    operation: { type: "SET_VALUE", ref: `/transfer/${ALICE}/${BOB}/t${txCounter}/value`, value: amount },
  };
}

/** Executes `txs` on the head and commits it with the validator's own precommit. */
async function produce(
  chain: Chain,
  txs: Tx[],
  timestamp: number,
): Promise<{ executed: ExecutedBlock; block: StoredBlock }> {
  const executed = await chain.execute(txs, VALIDATOR, timestamp);
  const commit = selfCommit(executed);
  const check = verifyCommit(commit, CHAIN_ID, chain.validators());
  assert.ok(check.ok, `own commit verifies at height ${commit.height}`);
  const block = await chain.commit(executed, commit, check.signers);
  return { executed, block };
}

describe("Chain", () => {
  it("open() on an empty store writes block 0 from genesis", async () => {
    const store = new MemoryStore();
    const chain = new Chain(store, genesis());
    await chain.open();
    const head = chain.head();
    assert.equal(store.commits, 1, "genesis is one commit");
    assert.equal(head.header.number, 0);
    assert.equal(head.header.parent_hash, "");
    assert.equal(head.header.proposer, GENESIS_PROPOSER);
    assert.equal(GENESIS_PROPOSER, "0x0000000000000000000000000000000000000000");
    assert.equal(head.header.last_commit_hash, "");
    assert.equal(head.header.timestamp, 1_700_000_000_000);
    assert.equal(head.header.size, 2, "an empty transaction list is []");
    assert.equal(head.header.transactions_hash, transactionsHash([]));
    assert.equal(head.hash, hashHeader(head.header), "hash is keccak of the header's canonical JSON");
    assert.equal(head.commit, null);
    assert.deepEqual(head.validators, [VALIDATOR]);
    assert.equal(store.getBlock(0)?.hash, head.hash, "block 0 stored");
    assert.equal(store.getBlockNumber(head.hash), 0);
    assert.equal(balanceOf(chain.state(), ALICE), 1000, "genesis balance in state");
    assert.equal(chain.state().getLeaf("/chain/chain_id"), CHAIN_ID);
  });

  it("builds the same genesis hash on every store, and another for another chain id", async () => {
    const a = new Chain(new MemoryStore(), genesis());
    const b = new Chain(new MemoryStore(), genesis());
    const c = new Chain(new MemoryStore(), genesis({ chain_id: 101 }));
    await Promise.all([a.open(), b.open(), c.open()]);
    assert.equal(a.head().hash, b.head().hash, "deterministic block 0");
    assert.notEqual(c.head().hash, a.head().hash, "chain id is part of block 0");
  });

  it("executes and commits blocks linked by parent_hash and last_commit_hash", async () => {
    const store = new MemoryStore();
    const chain = new Chain(store, genesis());
    await chain.open();
    const block0 = chain.head();

    const txs1 = [transfer(0, 100), transfer(1, 5000), transfer(2, 50)];
    const { executed: ex1, block: block1 } = await produce(chain, txs1, 1_700_000_001_000);
    assert.equal(block1.header.number, 1);
    assert.equal(block1.header.parent_hash, block0.hash, "block 1 links to block 0");
    assert.equal(block1.header.last_commit_hash, "", "block 0 has no commit");
    assert.equal(block1.header.proposer, VALIDATOR);
    assert.equal(block1.header.timestamp, 1_700_000_001_000);
    assert.notEqual(block1.header.state_root, block0.header.state_root, "state root changed");
    assert.equal(block1.header.transactions_hash, transactionsHash(txs1.map((t) => t.hash)));
    assert.equal(block1.header.size, blockSize(txs1));
    assert.equal(block1.hash, hashHeader(block1.header));
    assert.deepEqual(
      block1.tx_hashes,
      txs1.map((t) => t.hash),
    );
    assert.deepEqual(block1.validators, [VALIDATOR]);
    assert.deepEqual(ex1.results, [{ code: 0 }, { code: 1, reason: "insufficient_balance" }, { code: 0 }]);
    assert.equal(chain.head().hash, block1.hash, "block 1 is the head");
    assert.equal(store.headNumber(), 1);
    assert.equal(balanceOf(chain.state(), ALICE), 850, "committed balance");
    assert.equal(balanceOf(chain.state(), BOB), 160);
    assert.equal(nonceOf(chain.state(), ALICE), 3, "failed transfer consumed its nonce");
    const second = store.getConfirmedTx(txs1[1]?.hash ?? "");
    assert.deepEqual(
      second && {
        block_number: second.block_number,
        block_hash: second.block_hash,
        index: second.index,
        result: second.result,
      },
      {
        block_number: 1,
        block_hash: block1.hash,
        index: 1,
        result: { code: 1, reason: "insufficient_balance" },
      },
      "confirmed tx location and result",
    );

    const { block: block2 } = await produce(chain, [transfer(3, 1)], 1_700_000_002_000);
    assert.equal(block2.header.parent_hash, block1.hash, "block 2 links to block 1");
    assert.equal(
      block2.header.last_commit_hash,
      commitHash(block1.commit),
      "block 2 carries block 1's commit hash",
    );
    assert.notEqual(block2.header.last_commit_hash, "");
    assert.notEqual(block2.header.state_root, block1.header.state_root);
  });

  it("gives an empty block the parent's state root", async () => {
    const chain = new Chain(new MemoryStore(), genesis());
    await chain.open();
    const root0 = chain.head().header.state_root;
    const { block } = await produce(chain, [], 1_700_000_001_000);
    assert.equal(block.header.state_root, root0, "no transactions, no state change");
    assert.equal(block.header.size, 2);
  });

  it("refuses a second execute before commit, and abandon() drops the executed block", async () => {
    const store = new MemoryStore();
    const chain = new Chain(store, genesis());
    await chain.open();
    const root0 = chain.head().header.state_root;
    const txs = [transfer(0, 10)];
    const executed = await chain.execute(txs, VALIDATOR, 1_700_000_001_000);
    await assert.rejects(chain.execute([], VALIDATOR, 1_700_000_001_000), /already being executed/);
    chain.abandon();
    assert.equal(chain.head().header.number, 0, "head unchanged");
    assert.equal(balanceOf(chain.state(), ALICE), 1000, "nothing committed");
    const again = await chain.execute(txs, VALIDATOR, 1_700_000_001_000);
    assert.notEqual(again.header.state_root, root0);
    assert.equal(
      again.header.state_root,
      executed.header.state_root,
      "re-executing after abandon gives the same root",
    );
    chain.abandon();
  });

  it("keeps the previous head when the store fails to commit, and can retry", async () => {
    const store = new MemoryStore();
    const chain = new Chain(store, genesis());
    await chain.open();
    const block0 = chain.head();
    const txs = [transfer(0, 10)];
    const executed = await chain.execute(txs, VALIDATOR, 1_700_000_001_000);
    store.failNext = true;
    await assert.rejects(chain.commit(executed, selfCommit(executed), [VALIDATOR]), /disk full/);
    assert.equal(chain.head().hash, block0.hash, "head unchanged after a failed commit");
    assert.equal(store.headNumber(), 0);
    const { block } = await produce(chain, txs, 1_700_000_001_000);
    assert.equal(block.hash, executed.hash, "the retried block is the same block");
    assert.equal(balanceOf(chain.state(), ALICE), 990);
  });

  it("reopening on the same store resumes at the head and continues as if never closed", async () => {
    const blocks = [[transfer(0, 100)], [transfer(1, 100), transfer(2, 1)], [transfer(3, 7)]];
    const times = [1_700_000_001_000, 1_700_000_002_000, 1_700_000_003_000];

    const control = new Chain(new MemoryStore(), genesis());
    await control.open();
    const expected: StoredBlock[] = [];
    for (const [i, txs] of blocks.entries())
      expected.push((await produce(control, txs, times[i] ?? 0)).block);

    const store = new MemoryStore();
    const first = new Chain(store, genesis());
    await first.open();
    await produce(first, blocks[0] ?? [], times[0] ?? 0);
    const { block: block2 } = await produce(first, blocks[1] ?? [], times[1] ?? 0);
    const commitsBefore = store.commits;

    const reopened = new Chain(store, genesis());
    await reopened.open();
    assert.equal(store.commits, commitsBefore, "reopening writes nothing");
    assert.equal(reopened.head().hash, block2.hash, "resumes at the stored head");
    assert.equal(reopened.head().header.number, 2);
    assert.equal(balanceOf(reopened.state(), ALICE), 799);

    // The reopened trie continues from the stored root and nodes.
    const { block: block3 } = await produce(reopened, blocks[2] ?? [], times[2] ?? 0);
    assert.equal(block3.header.parent_hash, block2.hash);
    assert.equal(
      block3.header.state_root,
      expected[2]?.header.state_root,
      "same state root as an uninterrupted chain",
    );
    assert.equal(block3.hash, expected[2]?.hash, "same block hash as an uninterrupted chain");
  });

  it("refuses to open a store that holds another chain's genesis", async () => {
    const store = new MemoryStore();
    await new Chain(store, genesis()).open();
    const other = new Chain(store, genesis({ chain_id: 7 }));
    await assert.rejects(other.open(), /another chain/);
    const otherBalances = new Chain(store, genesis({ accounts: [{ address: ALICE, balance: 1 }] }));
    await assert.rejects(otherBalances.open(), /another chain/);
  });

  it("with genesisHash, compares the stored block 0 with it instead of building block 0 again", async () => {
    const store = new MemoryStore();
    const first = new Chain(store, genesis());
    await first.open();
    const block0 = first.head().hash;
    // The hash is what is compared: a genesis that would build another block 0 is not built at
    // all (the caller vouches that the hash is this genesis's, node/genesisCheck.ts), ...
    const vouched = new Chain(store, genesis({ chain_id: 7 }), { genesisHash: block0 });
    await vouched.open();
    assert.equal(vouched.head().hash, block0);
    // ... and a hash that is not the stored block 0's is another chain, as a built one would be.
    const other = new Chain(store, genesis(), { genesisHash: `0x${"ab".repeat(32)}` });
    await assert.rejects(other.open(), /another chain \(genesis 0x[0-9a-f]{64}, expected 0x(ab){32}\)/);
    // A new store builds block 0 whatever it is told: its write needs the genesis trie.
    const fresh = new Chain(new MemoryStore(), genesis(), { genesisHash: `0x${"ab".repeat(32)}` });
    await fresh.open();
    assert.equal(fresh.head().hash, block0);
  });
});
