/** Domain types shared by every layer. Field names follow the JSON-RPC interface (snake_case). */

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** The only operation type the chain accepts. */
export interface SetValueOperation {
  type: "SET_VALUE";
  ref: string;
  value: JsonValue;
}

/** The signed body of a transaction; nothing else is allowed in it. */
export interface TxBody {
  nonce: number;
  timestamp: number;
  operation: SetValueOperation;
  parent_tx_hash?: string;
}

/** What a client submits: the body plus the 97-byte signature beside it. */
export interface SignedTxInput {
  signature: string;
  transaction: TxBody;
}

/** A transaction whose signature has been checked; the form kept in the pool and in blocks. */
export interface Tx {
  hash: string;
  address: string;
  signature: string;
  timestamp: number;
  nonce: number;
  parent_tx_hash?: string;
  operation: SetValueOperation;
}

/** Outcome of executing a committed transaction: code 0 is success. */
export type TxResult = { code: 0 } | { code: number; reason: string };

export interface BlockHeader {
  parent_hash: string;
  number: number;
  /** Milliseconds since the Unix epoch. */
  timestamp: number;
  proposer: string;
  transactions_hash: string;
  state_root: string;
  last_commit_hash: string;
  /** Byte length of the canonical JSON of the block's transactions list. */
  size: number;
}

/** A precommit signed by one validator; the commit certificate is a set of these. */
export interface Vote {
  type: "precommit";
  chain_id: number;
  height: number;
  round: number;
  block_hash: string;
}

export interface Commit {
  height: number;
  round: number;
  block_hash: string;
  /** 97-byte signatures over the Vote body; the signers are recovered from them. */
  signatures: string[];
}

/** A block as stored: its header, hash, transaction hashes, results and certificate. */
export interface StoredBlock {
  header: BlockHeader;
  hash: string;
  tx_hashes: string[];
  /** Sorted addresses whose votes finalized the block (genesis: the genesis validators). */
  validators: string[];
  commit: Commit | null;
}

/** Where a committed transaction lives. */
export interface TxLocation {
  block_number: number;
  block_hash: string;
  index: number;
  result: TxResult;
}

export interface ConfirmedTx extends TxLocation {
  tx: Tx;
}

export interface Validator {
  address: string;
  stake: number;
}
