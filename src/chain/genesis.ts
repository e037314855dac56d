import { type Static, Type } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { isAddress, MAX_CHAIN_ID, toChecksumAddress } from "../crypto/index.ts";
import { GENESIS_PROPOSER, hashHeader, transactionsHash } from "./block.ts";
import { balancePath, stakePath } from "./path.ts";
import type { BlockWrite } from "./chainStore.ts";
import { buildStateTrie } from "./stateTrie.ts";
import type { BlockHeader, JsonValue, StoredBlock, Validator } from "./types.ts";

const Amount = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });

/** genesis.json: everything that defines block 0 and the rules every node must share. */
const GenesisSchema = Type.Object(
  {
    chain_id: Type.Integer({ minimum: 0, maximum: MAX_CHAIN_ID }),
    network_id: Type.Union([Type.Literal(0), Type.Literal(1)]),
    /** Milliseconds since the Unix epoch: block 0's timestamp. */
    genesis_time: Amount,
    accounts: Type.Array(
      Type.Object({ address: Type.String(), balance: Amount }, { additionalProperties: false }),
    ),
    validators: Type.Array(
      Type.Object({ address: Type.String(), stake: Amount }, { additionalProperties: false }),
      {
        minItems: 1,
      },
    ),
    consensus: Type.Object(
      {
        /** Minimum interval between blocks, ms. */
        block_time_ms: Type.Integer({ minimum: 1 }),
        min_validator_stake: Amount,
        max_validators: Type.Integer({ minimum: 1 }),
        max_block_txs: Type.Integer({ minimum: 1 }),
        max_block_bytes: Type.Integer({ minimum: 1024 }),
        max_tx_bytes: Type.Integer({ minimum: 256 }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export type Genesis = Static<typeof GenesisSchema>;

const genesisCheck = TypeCompiler.Compile(GenesisSchema);

/** Validates a parsed genesis.json and normalises its addresses; throws with the first problem. */
export function parseGenesis(raw: unknown): Genesis {
  if (!genesisCheck.Check(raw)) {
    const first = genesisCheck.Errors(raw).First();
    throw new Error(`genesis: ${first?.path || "/"} ${first?.message ?? "is invalid"}`);
  }
  const normalize = (address: string): string => {
    if (!isAddress(address)) throw new Error(`genesis: ${address} is not an address`);
    return toChecksumAddress(address);
  };
  return {
    ...raw,
    accounts: raw.accounts.map((a) => ({ address: normalize(a.address), balance: a.balance })),
    validators: raw.validators.map((v) => ({ address: normalize(v.address), stake: v.stake })),
  };
}

/** The leaves of block 0's state: balances, stakes and the chain's own parameters. */
function genesisLeaves(genesis: Genesis): Map<string, JsonValue> {
  const leaves = new Map<string, JsonValue>();
  for (const { address, balance } of genesis.accounts) {
    leaves.set(
      balancePath(address),
      ((leaves.get(balancePath(address)) as number | undefined) ?? 0) + balance,
    );
  }
  for (const { address, stake } of genesis.validators) {
    leaves.set(stakePath(address), stake);
  }
  // The chain's identity lives in state, so block 0's hash differs between networks.
  leaves.set("/chain/chain_id", genesis.chain_id);
  leaves.set("/chain/network_id", genesis.network_id);
  for (const [key, value] of Object.entries(genesis.consensus)) leaves.set(`/chain/consensus/${key}`, value);
  return leaves;
}

function genesisValidators(genesis: Genesis): Validator[] {
  return [...genesis.validators].sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
}

function genesisHeader(genesis: Genesis, stateRoot: string): BlockHeader {
  return {
    parent_hash: "",
    number: 0,
    timestamp: genesis.genesis_time,
    proposer: GENESIS_PROPOSER,
    transactions_hash: transactionsHash([]),
    state_root: stateRoot,
    last_commit_hash: "",
    size: 2, // "[]"
  };
}

/**
 * Block 0 as Chain.open stores it, built from genesis alone (its trie's nodes are not kept): what
 * a snapshot's genesis must reproduce.
 */
export function genesisBlock(genesis: Genesis): StoredBlock {
  return genesisWrite(genesis, 0, false).block;
}

/**
 * Block 0's write, built from genesis alone (not from what a store holds), so that it can also be
 * compared with a stored block 0. Its trie's nodes are numbered from `nextId`; without
 * `keepNodes` only the root is computed and the write holds no nodes.
 */
export function genesisWrite(genesis: Genesis, nextId: number, keepNodes: boolean): BlockWrite {
  const leaves = genesisLeaves(genesis);
  const trie = buildStateTrie(leaves, nextId, keepNodes);
  const header = genesisHeader(genesis, trie.rootHex);
  const validators = genesisValidators(genesis);
  return {
    block: {
      header,
      hash: hashHeader(header),
      tx_hashes: [],
      validators: validators.map((v) => v.address),
      commit: null,
    },
    txs: [],
    journalRemovals: [],
    stateChanges: leaves,
    trie: trie.write,
    stakeChanges: new Map(validators.map((v) => [v.address, v.stake])),
    validatorSet: { fromHeight: 1, validators },
  };
}
