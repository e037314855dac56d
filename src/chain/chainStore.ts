import type { StateChanges, StateReader } from "./state.ts";
import type { TrieNodeReader, TrieWrite } from "./stateTrie.ts";
import type { ConfirmedTx, StoredBlock, Validator } from "./types.ts";
import type { ValidatorSetChange } from "./validatorSet.ts";

/** Everything one block commits, in one durable write (DESIGN.md §8). */
export interface BlockWrite {
  block: StoredBlock;
  txs: ConfirmedTx[];
  /**
   * By transaction, what execution found a successful transfer credited (ExecutedBlock.credited):
   * the history index's recipients, the same as historyAddresses computes from the transaction.
   */
  credited?: readonly (string | undefined)[];
  /**
   * Transactions (by hash) whose pool-journal entries are removed in the same transaction as the
   * block: the block's own, so that a restart never re-admits a committed transaction and a crash
   * before the write keeps them pending. Hashes the journal does not hold are skipped.
   */
  journalRemovals: readonly string[];
  stateChanges: StateChanges;
  /** The state trie's new nodes and root (docs/decisions/008-state-commitment.md). */
  trie: TrieWrite;
  /** Accounts whose stake changed, with the new stake (0: no longer staking). */
  stakeChanges: ReadonlyMap<string, number>;
  /** Present when the block changes the validator set of a later height. */
  validatorSet?: ValidatorSetChange;
  /**
   * The parent rewritten with the certificate this block carries: a node first stores the
   * precommits it saw, then adopts the proposer's, so every node ends up with the same one.
   */
  parent?: StoredBlock;
}

/** What the chain needs from storage. Reads see committed data only. */
export interface ChainStore extends StateReader, TrieNodeReader {
  headNumber(): number | undefined;
  getBlock(number: number): StoredBlock | undefined;
  getBlockNumber(hash: string): number | undefined;
  getConfirmedTx(hash: string): ConfirmedTx | undefined;
  /** Every account with a non-zero stake, as of the head. */
  stakers(): Iterable<Validator>;
  /** The validator set in force at `height` (the latest change at or below it). */
  validatorSetAt(height: number): Validator[] | undefined;
  /**
   * Durable once the promise resolves; all or nothing on a crash. No other event-loop turn may
   * see the write before the promise resolves, so the chain's head moves in the same tick.
   */
  commitBlock(write: BlockWrite): Promise<void>;
  /**
   * Runs `step` on each of `items` in order until one returns false, and returns how many
   * returned true. The commitBlock calls of the steps share durable writes (sync commits a
   * fetched range so: a few store commits instead of one per block): each block stays all or
   * nothing, reads see the blocks committed so far, and all of them are durable when the
   * returned promise resolves. The store decides where one write ends and the next begins, only
   * ever between two steps. A step that throws ends the run (the blocks before it are kept) and
   * this rejects with its error; a write that fails rejects, and the blocks of that write are
   * not stored. Optional: without it each block is durable on its own.
   */
  commitTogether?<T>(items: readonly T[], step: (item: T) => Promise<boolean>): Promise<number>;
}

/** The leaf paths a committed block wrote. */
export interface StateChangeEvent {
  block: StoredBlock;
  paths: readonly string[];
}
