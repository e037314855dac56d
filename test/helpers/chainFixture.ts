import type { Commit, ExecutedBlock, Genesis, JsonValue, Tx } from "../../src/chain/index.ts";
import { precommitVote, signVote } from "../../src/chain/index.ts";
import { hexToBytes, privateKeyToAddress } from "../../src/crypto/index.ts";

/** The chain unit tests' one-validator chain: its id, the validator's key, two accounts. */
export const CHAIN_ID = 100;
export const VALIDATOR_KEY = hexToBytes("0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80");
export const VALIDATOR = privateKeyToAddress(VALIDATOR_KEY);
export const ALICE = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
export const BOB = "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC";

/** Alice with 1,000 and Bob with 10, the validator staking 1,000,000; `overrides` replace fields. */
export function testGenesis(overrides: Partial<Genesis> = {}): Genesis {
  return {
    chain_id: CHAIN_ID,
    network_id: 1,
    genesis_time: 1_700_000_000_000,
    accounts: [
      { address: ALICE, balance: 1000 },
      { address: BOB, balance: 10 },
    ],
    validators: [{ address: VALIDATOR, stake: 1_000_000 }],
    consensus: {
      block_time_ms: 1000,
      min_validator_stake: 1_000_000,
      max_validators: 100,
      max_block_txs: 100,
      max_block_bytes: 1024 * 1024,
      max_tx_bytes: 100 * 1024,
    },
    ...overrides,
  };
}

/** The validator's own round-0 precommit for `executed`: with the whole stake, its certificate. */
export function selfCommit(executed: ExecutedBlock): Commit {
  const vote = precommitVote(CHAIN_ID, executed.header.number, 0, executed.hash);
  return {
    height: vote.height,
    round: 0,
    block_hash: executed.hash,
    signatures: [signVote(vote, VALIDATOR_KEY)],
  };
}

/**
 * A transaction of `address` setting `ref` to `value`, as the chain executes it in unit tests that
 * call `execute` directly (no signature is checked there); its hash is made from its nonce.
 */
export function unsignedTx(
  address: string,
  nonce: number,
  ref: string,
  value: JsonValue,
  timestamp: number,
): Tx {
  return {
    hash: `0x${(nonce + 1).toString(16).padStart(64, "0")}`,
    address,
    signature: "0x",
    timestamp,
    nonce,
    operation: { type: "SET_VALUE", ref, value },
  };
}
