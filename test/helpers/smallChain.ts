import {
  Chain,
  type ChainStore,
  type Commit,
  type Genesis,
  type JsonValue,
  type Tx,
} from "../../src/chain/index.ts";
import { toChecksumAddress } from "../../src/crypto/index.ts";

/**
 * A small chain for state and store tests: eight funded accounts (1,000 each), one validator,
 * transfers built as block-form transactions (Chain.execute does not check signatures).
 */
const address = (i: number) => toChecksumAddress(`0x${(i + 1).toString(16).padStart(40, "0")}`);
export const ACCOUNTS = Array.from({ length: 8 }, (_, i) => address(i));
export const VALIDATOR = address(100);
const T0 = 1_700_000_000_000;

export const GENESIS: Genesis = {
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
export type Move = [from: number, to: number, amount: number];

let counter = 0;

/** An ordered transfer; `nonces` holds each sender's next nonce (one map per chain). */
export function transfer(nonces: Map<string, number>, [from, to, amount]: Move): Tx {
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

/** `count` SET_VALUEs of fresh paths `/users/<sender>/item<i>`, senders in turn, each of `valueAt(i)`. */
export function userWrites(
  nonces: Map<string, number>,
  count: number,
  valueAt: (i: number) => JsonValue,
): Tx[] {
  return Array.from({ length: count }, (_, i) => {
    const from = i % ACCOUNTS.length;
    const tx = transfer(nonces, [from, (from + 1) % ACCOUNTS.length, 1]);
    return {
      ...tx,
      operation: { type: "SET_VALUE" as const, ref: `/users/${ACCOUNTS[from]}/item${i}`, value: valueAt(i) },
    };
  });
}

export async function openChain(store: ChainStore): Promise<Chain> {
  const chain = new Chain(store, GENESIS);
  await chain.open();
  return chain;
}

/** Executes and commits one block (the certificate is not checked by Chain.commit); its state root. */
export async function produce(chain: Chain, txs: Tx[]): Promise<string> {
  const height = chain.head().header.number + 1;
  const executed = await chain.execute(txs, VALIDATOR, T0 + height * 1000);
  const commit: Commit = { height, round: 0, block_hash: executed.hash, signatures: [] };
  await chain.commit(executed, commit, [VALIDATOR]);
  return executed.header.state_root;
}
