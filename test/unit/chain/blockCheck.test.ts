import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  Chain,
  type Commit,
  type Genesis,
  InvalidBlockError,
  type ProposedBlock,
  precommitVote,
  type SignedTxInput,
  signVote,
  type Tx,
  verifySignedTx,
} from "../../../src/chain/index.ts";
import { type DerivedAccount, deriveAccounts, hexToBytes } from "../../../src/crypto/index.ts";
import { MemoryStore } from "../../helpers/memoryStore.ts";
import { signTx, transferBody } from "../../helpers/testNode.ts";

const CHAIN_ID = 5;
const MNEMONIC = "test test test test test test test test test test test junk";
const [VALIDATOR, ALICE, BOB] = deriveAccounts(MNEMONIC, 3) as [
  DerivedAccount,
  DerivedAccount,
  DerivedAccount,
];
const LIMITS = { maxTxBytes: 100 * 1024 };

const genesis: Genesis = {
  chain_id: CHAIN_ID,
  network_id: 0,
  genesis_time: 1_700_000_000_000,
  accounts: [{ address: ALICE.address, balance: 1_000 }],
  validators: [{ address: VALIDATOR.address, stake: 1_000 }],
  consensus: {
    block_time_ms: 1000,
    min_validator_stake: 1,
    max_validators: 10,
    max_block_txs: 3,
    max_block_bytes: 1024 * 1024,
    max_tx_bytes: 100 * 1024,
  },
};

function transfer(nonce: number, amount = 1): Tx {
  const signed = signTx(ALICE.privateKey, transferBody(ALICE.address, BOB.address, amount, nonce), CHAIN_ID);
  return verifySignedTx(signed as unknown as SignedTxInput, { chainId: CHAIN_ID, ...LIMITS });
}

async function open(): Promise<Chain> {
  const chain = new Chain(new MemoryStore(), genesis);
  await chain.open();
  return chain;
}

function certify(height: number, hash: string): Commit {
  const vote = precommitVote(CHAIN_ID, height, 0, hash);
  return {
    height,
    round: 0,
    block_hash: hash,
    signatures: [signVote(vote, hexToBytes(VALIDATOR.privateKey))],
  };
}

/** A block built by a proposer chain at the same head; the proposer's copy is abandoned. */
async function propose(txs: Tx[], lastCommit: Commit | null = null): Promise<ProposedBlock> {
  const proposer = await open();
  const executed = await proposer.execute(txs, VALIDATOR.address, 1_700_000_001_000, {
    commit: lastCommit,
    signers: [],
  });
  proposer.abandon();
  return { header: executed.header, txs, last_commit: lastCommit };
}

async function assertInvalid(block: ProposedBlock, pattern: RegExp): Promise<void> {
  const chain = await open();
  await assert.rejects(chain.executeProposed(block, LIMITS), (error: unknown) => {
    assert.ok(error instanceof InvalidBlockError, String(error));
    assert.match(error.message, pattern);
    return true;
  });
  // The chain is free again: a valid block still executes.
  const valid = await propose([]);
  await chain.executeProposed(valid, LIMITS);
  chain.abandon();
}

describe("Chain.executeProposed", () => {
  it("accepts a block that reproduces its header", async () => {
    const block = await propose([transfer(0), transfer(1)]);
    const chain = await open();
    const executed = await chain.executeProposed(block, LIMITS);
    assert.equal(executed.header.state_root, block.header.state_root);
    chain.abandon();
  });

  it("refuses a header execution does not reproduce (state root, size)", async () => {
    const block = await propose([transfer(0)]);
    await assertInvalid(
      { ...block, header: { ...block.header, state_root: `0x${"0".repeat(64)}` } },
      /state_root/,
    );
    await assertInvalid({ ...block, header: { ...block.header, size: block.header.size + 1 } }, /size/);
  });

  it("refuses a block that does not follow the head", async () => {
    const block = await propose([]);
    await assertInvalid({ ...block, header: { ...block.header, number: 2 } }, /does not follow/);
    await assertInvalid(
      { ...block, header: { ...block.header, parent_hash: `0x${"1".repeat(64)}` } },
      /parent_hash/,
    );
    await assertInvalid(
      { ...block, header: { ...block.header, timestamp: genesis.genesis_time } },
      /timestamp/,
    );
    await assertInvalid({ ...block, header: { ...block.header, proposer: BOB.address } }, /proposer/);
  });

  it("refuses transactions out of nonce order, twice in a block, over the count, or with a bad signature", async () => {
    const [t0, t1] = [transfer(0), transfer(1)];
    await assertInvalid(await propose([t1]), /nonce 1, expected 0/);
    await assertInvalid(await propose([t0, t0]), /appears twice/);
    await assertInvalid(await propose([t0, t1, transfer(2), transfer(3)]), /holds 4 transactions/);
    const forged = { ...t0, address: BOB.address };
    await assertInvalid(await propose([forged]), /does not match its signature/);
    const tampered = { ...t0, operation: { ...t0.operation, value: 999 } };
    await assertInvalid(await propose([tampered]), /transaction/);
  });

  it("refuses a commit of genesis in block 1", async () => {
    const block = await propose([]);
    await assertInvalid({ ...block, last_commit: certify(0, `0x${"1".repeat(64)}`) }, /commit of genesis/);
  });

  it("checks the parent's certificate from block 2 on", async () => {
    const chain = await open();
    const first = await propose([]);
    const executed = await chain.executeProposed(first, LIMITS);
    await chain.commit(executed, certify(1, executed.hash), [VALIDATOR.address]);
    const next = async (lastCommit: Commit | null) => {
      const builder = new Chain(new MemoryStore(), genesis);
      await builder.open();
      const again = await builder.executeProposed(first, LIMITS);
      await builder.commit(again, certify(1, again.hash), [VALIDATOR.address]);
      const built = await builder.execute([], VALIDATOR.address, 1_700_000_002_000, {
        commit: lastCommit,
        signers: [],
      });
      builder.abandon();
      return { header: built.header, txs: [], last_commit: lastCommit };
    };
    await assert.rejects(chain.executeProposed(await next(null), LIMITS), /last_commit is missing/);
    const wrongHeight = certify(2, executed.hash);
    await assert.rejects(chain.executeProposed(await next(wrongHeight), LIMITS), /not for the parent/);
    const forged = { ...certify(1, executed.hash), signatures: [] };
    await assert.rejects(chain.executeProposed(await next(forged), LIMITS), /commit holds 0/);
    const good = await chain.executeProposed(await next(certify(1, executed.hash)), LIMITS);
    assert.equal(good.header.number, 2);
    chain.abandon();
  });
});
