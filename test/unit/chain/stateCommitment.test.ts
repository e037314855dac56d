import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import fc from "fast-check";
import {
  balanceOf,
  Chain,
  type ChainStore,
  type Commit,
  type Genesis,
  type Tx,
} from "../../../src/chain/index.ts";
import { toChecksumAddress } from "../../../src/crypto/index.ts";
import { LmdbStore } from "../../../src/storage/index.ts";
import { MemoryStore } from "../../helpers/memoryStore.ts";

/**
 * The state root through the whole block path (Chain.execute → Chain.commit → store): a chain on
 * LMDB that is closed and reopened between blocks reaches the same roots as one kept in memory.
 */

const address = (i: number) => toChecksumAddress(`0x${(i + 1).toString(16).padStart(40, "0")}`);
const ACCOUNTS = Array.from({ length: 8 }, (_, i) => address(i));
const VALIDATOR = address(100);
const T0 = 1_700_000_000_000;

const genesis: Genesis = {
  chain_id: 7,
  network_id: 0,
  genesis_time: T0,
  accounts: ACCOUNTS.map((a) => ({ address: a, balance: 1_000 })),
  validators: [{ address: VALIDATOR, stake: 1_000 }],
  consensus: {
    block_time_ms: 1000,
    min_validator_stake: 1,
    max_validators: 10,
    max_block_txs: 100,
    max_block_bytes: 1024 * 1024,
    max_tx_bytes: 100 * 1024,
  },
};

/** A transfer of `amount` from account `from` to account `to` (may fail for lack of balance). */
type Move = [from: number, to: number, amount: number];

let counter = 0;
function transfer(nonces: Map<string, number>, [from, to, amount]: Move): Tx {
  const sender = ACCOUNTS[from] as string;
  const nonce = nonces.get(sender) ?? 0;
  nonces.set(sender, nonce + 1);
  counter += 1;
  return {
    hash: `0x${counter.toString(16).padStart(64, "0")}`,
    address: sender,
    signature: "0x",
    timestamp: T0,
    nonce,
    operation: {
      type: "SET_VALUE",
      ref: `/transfer/${sender}/${ACCOUNTS[to]}/k${counter}/value`,
      value: amount,
    },
  };
}

/** Executes and commits one block (the certificate is not checked by Chain.commit). */
async function produce(chain: Chain, txs: Tx[]): Promise<string> {
  const height = chain.head().header.number + 1;
  const executed = await chain.execute(txs, VALIDATOR, T0 + height * 1000);
  const commit: Commit = { height, round: 0, block_hash: executed.hash, signatures: [] };
  await chain.commit(executed, commit, [VALIDATOR]);
  return executed.header.state_root;
}

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
