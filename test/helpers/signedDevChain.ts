import { type Chain, precommitVote, signVote, type Tx } from "../../src/chain/index.ts";
import { type DerivedAccount, hexToBytes } from "../../src/crypto/index.ts";
import { devAccounts, devGenesis } from "../../src/node/index.ts";

/**
 * The dev chain's genesis and accounts, and blocks committed with the dev validator's real
 * precommit as their certificate: for tests whose checks verify certificates (snapshots, state
 * sync's trust), which smallChain's unsigned certificates would not pass.
 */
export const DEV_ACCOUNTS = devAccounts();
export const DEV_VALIDATOR = DEV_ACCOUNTS[0] as DerivedAccount;
export const DEV_GENESIS = devGenesis(DEV_ACCOUNTS, 1_700_000_000_000);

let counter = 0;

/** A block-form transfer (Chain.execute does not check signatures); unordered when nonce is -1. */
export function devTransfer(
  from: DerivedAccount,
  to: DerivedAccount,
  amount: number,
  nonce: number,
  timestamp = DEV_GENESIS.genesis_time,
): Tx {
  counter += 1;
  return {
    hash: `0x${counter.toString(16).padStart(64, "0")}`,
    address: from.address,
    signature: "0x",
    timestamp,
    nonce,
    operation: {
      type: "SET_VALUE",
      ref: `/transfer/${from.address}/${to.address}/k${counter}/value`,
      value: amount,
    },
  };
}

/** Executes and commits one block with the dev validator's signed precommit as its certificate. */
export async function produceSigned(chain: Chain, txs: Tx[]): Promise<void> {
  const height = chain.head().header.number + 1;
  const executed = await chain.execute(txs, DEV_VALIDATOR.address, DEV_GENESIS.genesis_time + height * 1000);
  const vote = precommitVote(DEV_GENESIS.chain_id, height, 0, executed.hash);
  const signature = signVote(vote, hexToBytes(DEV_VALIDATOR.privateKey));
  await chain.commit(executed, { height, round: 0, block_hash: executed.hash, signatures: [signature] }, [
    DEV_VALIDATOR.address,
  ]);
}
