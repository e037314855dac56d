import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  Chain,
  type Commit,
  type Genesis,
  isQuorum,
  precommitVote,
  selectValidators,
  signVote,
  stakeChangesOf,
  type Tx,
  VALIDATOR_SET_DELAY,
  verifyCommit,
} from "../../../src/chain/index.ts";
import { hexToBytes, privateKeyToAddress } from "../../../src/crypto/index.ts";
import { MemoryStore } from "../../helpers/memoryStore.ts";

const CHAIN_ID = 100;
const KEY_A = hexToBytes("0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80");
const KEY_B = hexToBytes("0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d");
const A = privateKeyToAddress(KEY_A);
const B = privateKeyToAddress(KEY_B);
const A_LOW = "0x000000000000000000000000000000000000000a";
const Z_HIGH = "0xFFfFfFffFFfffFFfFFfFFFFFffFFFffffFfFFFfF";

describe("selectValidators", () => {
  it("keeps stakes at or above the minimum, sorted by address", () => {
    const set = selectValidators(
      [
        { address: Z_HIGH, stake: 10 },
        { address: A_LOW, stake: 5 },
        { address: A, stake: 4 },
      ],
      5,
      10,
    );
    assert.deepEqual(
      set.map((v) => v.address),
      [A_LOW, Z_HIGH],
    );
  });

  it("takes the largest stakes up to the maximum, ties broken by address", () => {
    const set = selectValidators(
      [
        { address: Z_HIGH, stake: 7 },
        { address: A_LOW, stake: 7 },
        { address: A, stake: 9 },
      ],
      1,
      2,
    );
    assert.deepEqual(
      set.map((v) => v.address),
      [A_LOW, A].sort(),
    );
  });

  it("never selects a zero stake, even with a zero minimum", () => {
    assert.deepEqual(selectValidators([{ address: A, stake: 0 }], 0, 5), []);
  });
});

describe("isQuorum", () => {
  it("is strictly more than two thirds", () => {
    assert.equal(isQuorum(2, 3), false);
    assert.equal(isQuorum(3, 4), true);
    assert.equal(isQuorum(67, 100), true);
    assert.equal(isQuorum(66, 100), false);
  });
});

describe("stakeChangesOf", () => {
  it("finds stake leaves among state changes; a deleted stake is 0", () => {
    const changes = new Map<string, number | null>([
      [`/account/${A}/stake`, 50],
      [`/account/${B}/stake`, null],
      [`/account/${A}/balance`, 10],
      [`/staking/${A}/k1/value`, 50],
    ]);
    assert.deepEqual(
      [...stakeChangesOf(changes)],
      [
        [A, 50],
        [B, 0],
      ],
    );
  });
});

function genesis(): Genesis {
  return {
    chain_id: CHAIN_ID,
    network_id: 1,
    genesis_time: 1_700_000_000_000,
    accounts: [{ address: B, balance: 10_000 }],
    validators: [{ address: A, stake: 1_000 }],
    consensus: {
      block_time_ms: 1000,
      min_validator_stake: 500,
      max_validators: 10,
      max_block_txs: 100,
      max_block_bytes: 1024 * 1024,
      max_tx_bytes: 100 * 1024,
    },
  };
}

let counter = 0;
function stake(address: string, amount: number): Tx {
  counter += 1;
  return {
    hash: `0x${counter.toString(16).padStart(64, "0")}`,
    address,
    signature: "0x",
    timestamp: 1_700_000_000_000,
    nonce: -1,
    operation: { type: "SET_VALUE", ref: `/staking/${address}/s${counter}/value`, value: amount },
  };
}

/** Commits a block signed by whichever of A and B the set of its height holds. */
async function produce(chain: Chain, txs: Tx[]): Promise<void> {
  const height = chain.head().header.number + 1;
  const executed = await chain.execute(txs, A, 1_700_000_000_000 + height * 1000);
  const vote = precommitVote(CHAIN_ID, height, 0, executed.hash);
  const keys = new Map([
    [A, KEY_A],
    [B, KEY_B],
  ]);
  const signatures = chain.validatorsAt(height).map((v) => {
    const key = keys.get(v.address);
    assert.ok(key, `test holds the key of ${v.address}`);
    return signVote(vote, key);
  });
  const commit: Commit = { height, round: 0, block_hash: executed.hash, signatures };
  const check = verifyCommit(commit, CHAIN_ID, chain.validatorsAt(height));
  assert.ok(check.ok, `commit of height ${height} verifies`);
  await chain.commit(executed, commit, check.signers);
}

describe("Chain validator set from state", () => {
  it("is the genesis set at heights 1 and 2", async () => {
    const chain = new Chain(new MemoryStore(), genesis());
    await chain.open();
    assert.deepEqual(chain.validatorsAt(1), [{ address: A, stake: 1_000 }]);
    assert.deepEqual(chain.validatorsAt(2), [{ address: A, stake: 1_000 }]);
    assert.deepEqual(chain.validators(), [{ address: A, stake: 1_000 }]);
  });

  it(`admits a staker ${VALIDATOR_SET_DELAY} blocks after the block that staked, and drops it after unstaking`, async () => {
    const store = new MemoryStore();
    const chain = new Chain(store, genesis());
    await chain.open();
    await produce(chain, [stake(B, 600)]); // block 1
    assert.deepEqual(
      chain.validatorsAt(2),
      [{ address: A, stake: 1_000 }],
      "block 2 still signed by the old set",
    );
    const joined = [
      { address: A, stake: 1_000 },
      { address: B, stake: 600 },
    ].sort((x, y) => (x.address < y.address ? -1 : 1));
    assert.deepEqual(chain.validatorsAt(3), joined, "from block 3 on B is a validator");
    await produce(chain, []); // block 2: A alone
    await produce(chain, []); // block 3: A and B must both sign (A alone is 1000/1600 < 2/3)
    assert.deepEqual([...store.stakers()].find((v) => v.address === B)?.stake, 600);

    await produce(chain, [stake(B, -200)]); // block 4: B falls below the minimum of 500
    assert.deepEqual(chain.validatorsAt(5), joined);
    assert.deepEqual(chain.validatorsAt(6), [{ address: A, stake: 1_000 }]);
    await produce(chain, []);
    await produce(chain, []);
    assert.deepEqual(chain.validators(), [{ address: A, stake: 1_000 }]);
  });

  it("keeps the set when a change would leave it empty", async () => {
    const chain = new Chain(new MemoryStore(), genesis());
    await chain.open();
    await produce(chain, [stake(A, -1_000)]);
    assert.deepEqual(chain.validatorsAt(3), [{ address: A, stake: 1_000 }]);
  });

  it("keeps the sets across a reopen of the same store", async () => {
    const store = new MemoryStore();
    const chain = new Chain(store, genesis());
    await chain.open();
    await produce(chain, [stake(B, 700)]);
    const reopened = new Chain(store, genesis());
    await reopened.open();
    assert.equal(reopened.validatorsAt(3).length, 2);
    assert.equal(reopened.validatorsAt(2).length, 1);
  });
});
