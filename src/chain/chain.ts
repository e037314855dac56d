import { blockSize, commitHash, hashHeader, transactionsHash } from "./block.ts";
import {
  type BlockCheckContext,
  checkProposedBlock,
  InvalidBlockError,
  includableTxs,
  type ProposedBlock,
} from "./blockCheck.ts";
import { executeTx } from "./execute.ts";
import { failpoint } from "../faults/index.ts";
import { Listeners } from "./listeners.ts";
import { type Genesis, genesisHeader, genesisLeaves, genesisValidators } from "./genesis.ts";
import { type StateChanges, StateOverlay, type StateReader } from "./state.ts";
import { buildStateTrie, StateTrie, type TrieNodeReader, type TrieWrite } from "./stateTrie.ts";
import { TimeSlices } from "./timeSlices.ts";
import type { BlockHeader, Commit, ConfirmedTx, StoredBlock, Tx, TxResult, Validator } from "./types.ts";
import {
  sameValidators,
  selectValidators,
  stakeChangesOf,
  VALIDATOR_SET_DELAY,
  type ValidatorSetChange,
} from "./validatorSet.ts";

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

/** A block that has been executed against the head state but not committed. */
export interface ExecutedBlock {
  header: BlockHeader;
  hash: string;
  txs: Tx[];
  results: TxResult[];
  /** By transaction: the account a successful transfer credited (chain/history.ts), if any. */
  credited: (string | undefined)[];
  changes: StateChanges;
  stakeChanges: Map<string, number>;
  validatorSet?: ValidatorSetChange;
  /** The parent's certificate this block carries, and its signers. */
  lastCommit: { commit: Commit | null; signers: string[] };
}

export interface ChainOptions {
  /**
   * When set, block execution holds the event loop at most about this long at a time
   * (TimeSlices): requests and signature results that arrive meanwhile are handled in between.
   * Only for a node without consensus deadlines (the dev node): between slices a validator's
   * loop runs whatever else is queued (a flood of gossip under load), and a proposal that took
   * that long to check missed its round (four validators across hosts stopped committing under
   * full load, test/load/wanNetwork.test.ts). Unset: a block executes in one piece.
   */
  executionSliceMs?: number;
}

/**
 * The chain core: owns the head, executes blocks on top of it, and commits them with their
 * certificate through the store. Not concurrent: one block is executed and committed at a time
 * (the consensus layer calls it from one loop); while one is executed in slices (ChainOptions),
 * other turns of the event loop run and see the head and state as before it.
 */
export class Chain {
  readonly genesis: Genesis;
  private readonly store: ChainStore;
  private trie: StateTrie;
  private headBlock: StoredBlock | undefined;
  private busy = false;
  /** Told of every block after it is stored and became the head (RPC subscriptions, metrics). */
  readonly committed = new Listeners<StoredBlock>();
  /**
   * Told, right after `committed`, of the leaf paths each block wrote (RPC's "value"
   * subscriptions). A path may be listed that held nothing before or after (SET_VALUE clears
   * its target before writing it): listeners compare values, not paths.
   */
  readonly stateChanged = new Listeners<StateChangeEvent>();
  private readonly executionSliceMs: number | undefined;

  constructor(store: ChainStore, genesis: Genesis, options: ChainOptions = {}) {
    this.store = store;
    this.genesis = genesis;
    this.trie = new StateTrie(store);
    this.executionSliceMs = options.executionSliceMs;
  }

  /** Opens the chain: writes block 0 on a new store, or checks the stored one matches genesis. */
  async open(): Promise<void> {
    const headNumber = this.store.headNumber();
    // On a store that has block 0 the genesis is only compared: its trie nodes are not kept.
    const built = await this.buildGenesis(headNumber === undefined);
    if (headNumber === undefined) {
      await this.store.commitBlock(built.write);
      this.headBlock = built.write.block;
      this.trie = new StateTrie(this.store, built.write.block.header.state_root);
      return;
    }
    const stored = this.store.getBlock(0);
    if (stored?.hash !== built.write.block.hash) {
      throw new Error(
        `the data directory holds another chain (genesis ${stored?.hash}, expected ${built.write.block.hash})`,
      );
    }
    const head = this.store.getBlock(headNumber);
    if (head === undefined) throw new Error(`head block ${headNumber} is missing from storage`);
    this.headBlock = head;
    this.trie = new StateTrie(this.store, head.header.state_root);
  }

  head(): StoredBlock {
    if (this.headBlock === undefined) throw new Error("chain is not open");
    return this.headBlock;
  }

  /** Committed state, for reads. */
  state(): StateReader {
    return this.store;
  }

  /** The validator set that must sign the next block. */
  validators(): Validator[] {
    return this.validatorsAt(this.head().header.number + 1);
  }

  /**
   * The validator set of `height`, known up to head + VALIDATOR_SET_DELAY: block n's stake
   * changes decide the set from n + VALIDATOR_SET_DELAY on.
   */
  validatorsAt(height: number): Validator[] {
    const set = this.store.validatorSetAt(height);
    if (set === undefined) throw new Error(`no validator set is stored for height ${height}`);
    return set;
  }

  /**
   * Executes `txs` in order on the head state. Nothing is written until `commit`. `lastCommit`
   * is the parent's certificate the block carries; by default the one stored with the parent.
   */
  async execute(
    txs: Tx[],
    proposer: string,
    timestamp: number,
    lastCommit?: { commit: Commit | null; signers: string[] },
  ): Promise<ExecutedBlock> {
    if (this.busy) throw new Error("a block is already being executed");
    this.busy = true;
    try {
      const parent = this.head();
      const carried = lastCommit ?? { commit: parent.commit, signers: parent.validators };
      const overlay = new StateOverlay(this.store);
      const credited: (string | undefined)[] = txs.map(() => undefined);
      const results: TxResult[] = [];
      const slices = this.executionSliceMs === undefined ? undefined : new TimeSlices(this.executionSliceMs);
      for (const [i, tx] of txs.entries()) {
        results.push(
          executeTx(overlay, tx, (address) => {
            credited[i] = address;
          }),
        );
        if (slices !== undefined && i % 16 === 15) await slices.pause();
      }
      const changes = overlay.changes();
      const stateRoot = await this.trie.apply(
        changes,
        slices === undefined ? undefined : () => slices.pause(),
      );
      const stakeChanges = stakeChangesOf(changes);
      const validatorSet = this.nextValidatorSet(parent.header.number + 1, stakeChanges);
      const header: BlockHeader = {
        parent_hash: parent.hash,
        number: parent.header.number + 1,
        timestamp,
        proposer,
        transactions_hash: transactionsHash(txs.map((tx) => tx.hash)),
        state_root: stateRoot,
        last_commit_hash: commitHash(carried.commit),
        size: blockSize(txs),
      };
      const executed: ExecutedBlock = {
        header,
        hash: hashHeader(header),
        txs,
        results,
        credited,
        changes,
        stakeChanges,
        lastCommit: carried,
      };
      if (validatorSet !== undefined) executed.validatorSet = validatorSet;
      return executed;
    } catch (error) {
      this.trie.discard();
      this.busy = false;
      throw error;
    }
  }

  /**
   * Checks a block another node proposed (links, parent certificate, transactions) and executes
   * it; the result must reproduce its header exactly. Throws InvalidBlockError; on success the
   * block is held as executed, ready for `commit` or `abandon`.
   */
  async executeProposed(
    block: ProposedBlock,
    limits: { maxTxBytes: number },
    alreadyVerified?: (tx: Tx) => boolean,
  ): Promise<ExecutedBlock> {
    const parent = this.head();
    const { consensus, chain_id } = this.genesis;
    const context: BlockCheckContext = {
      chainId: chain_id,
      maxTxBytes: limits.maxTxBytes,
      maxBlockTxs: consensus.max_block_txs,
      maxBlockBytes: consensus.max_block_bytes,
      parent,
      parentValidators: parent.header.number === 0 ? [] : this.validatorsAt(parent.header.number),
      validators: this.validatorsAt(parent.header.number + 1),
      state: this.store,
      isCommitted: (hash) => this.store.getConfirmedTx(hash) !== undefined,
    };
    if (alreadyVerified !== undefined) context.alreadyVerified = alreadyVerified;
    const signers = checkProposedBlock(block, context);
    const executed = await this.execute(block.txs, block.header.proposer, block.header.timestamp, {
      commit: block.last_commit,
      signers,
    });
    if (executed.hash !== hashHeader(block.header)) {
      this.abandon();
      const ours = executed.header;
      const theirs = block.header;
      const differs = (Object.keys(ours) as (keyof BlockHeader)[]).filter((k) => ours[k] !== theirs[k]);
      throw new InvalidBlockError(
        `block ${theirs.number}: header differs from execution in ${differs.join(", ")}`,
      );
    }
    return executed;
  }

  /** The transactions of `txs` a block on the head at `timestamp` may hold (see includableTxs). */
  includable(txs: readonly Tx[], timestamp: number): Tx[] {
    return includableTxs(txs, this.store, (hash) => this.store.getConfirmedTx(hash) !== undefined, timestamp);
  }

  /** Stores an executed block with its certificate; it becomes the head. */
  async commit(executed: ExecutedBlock, commit: Commit, signers: string[]): Promise<StoredBlock> {
    const block: StoredBlock = {
      header: executed.header,
      hash: executed.hash,
      tx_hashes: executed.txs.map((tx) => tx.hash),
      validators: signers,
      commit,
    };
    const txs = executed.txs.map<ConfirmedTx>((tx, index) => ({
      tx,
      block_number: executed.header.number,
      block_hash: executed.hash,
      index,
      result: executed.results[index] as TxResult,
    }));
    try {
      failpoint("commit.beforeWrite");
      await this.store.commitBlock({
        block,
        txs,
        credited: executed.credited,
        journalRemovals: block.tx_hashes,
        stateChanges: executed.changes,
        trie: this.trie.pendingWrite(),
        stakeChanges: executed.stakeChanges,
        ...(executed.validatorSet === undefined ? {} : { validatorSet: executed.validatorSet }),
        ...this.adoptedParent(executed),
      });
      failpoint("commit.beforeHeadUpdate");
      this.trie.markCommitted();
      this.headBlock = block;
      failpoint("commit.afterHeadUpdate");
      this.committed.emit(block);
      if (this.stateChanged.size > 0) this.stateChanged.emit({ block, paths: [...executed.changes.keys()] });
      return block;
    } catch (error) {
      this.trie.discard();
      throw error;
    } finally {
      this.busy = false;
    }
  }

  /**
   * Runs `step` on each of `items` in order until one returns false; the blocks the steps commit
   * the store writes together (ChainStore.commitTogether). Returns how many steps returned true.
   * If a write fails, the head goes back to what the store holds, as after a restart, and this
   * rejects.
   */
  async commitTogether<T>(items: readonly T[], step: (item: T) => Promise<boolean>): Promise<number> {
    if (this.store.commitTogether === undefined) {
      let done = 0;
      while (done < items.length && (await step(items[done] as T))) done++;
      return done;
    }
    try {
      return await this.store.commitTogether(items, step);
    } catch (error) {
      if (!this.busy) this.reloadHead();
      throw error;
    }
  }

  /** Head and trie as the store holds them (after a write of several blocks failed). */
  private reloadHead(): void {
    const headNumber = this.store.headNumber();
    const head = headNumber === undefined ? undefined : this.store.getBlock(headNumber);
    if (head === undefined) throw new Error("the store lost its head block");
    this.headBlock = head;
    this.trie = new StateTrie(this.store, head.header.state_root);
  }

  /** The parent with the carried certificate, when it differs from the one stored. */
  private adoptedParent(executed: ExecutedBlock): { parent?: StoredBlock } {
    const parent = this.head();
    const { commit, signers } = executed.lastCommit;
    if (commitHash(commit) === commitHash(parent.commit)) return {};
    return { parent: { ...parent, commit, validators: signers } };
  }

  /** Drops an executed block that will not be committed. */
  abandon(): void {
    this.trie.discard();
    this.busy = false;
  }

  /**
   * The set that block `height`'s stake changes make for height + VALIDATOR_SET_DELAY, if it
   * differs from the one in force there. A selection that would leave no validator is not
   * applied: the chain keeps its signers rather than halt.
   */
  private nextValidatorSet(
    height: number,
    stakeChanges: ReadonlyMap<string, number>,
  ): ValidatorSetChange | undefined {
    if (stakeChanges.size === 0) return undefined;
    const stakes = new Map<string, number>();
    for (const { address, stake } of this.store.stakers()) stakes.set(address, stake);
    for (const [address, stake] of stakeChanges) stakes.set(address, stake);
    const { min_validator_stake, max_validators } = this.genesis.consensus;
    const validators = selectValidators(
      [...stakes].map(([address, stake]) => ({ address, stake })),
      min_validator_stake,
      max_validators,
    );
    const fromHeight = height + VALIDATOR_SET_DELAY;
    if (validators.length === 0 || sameValidators(validators, this.validatorsAt(fromHeight)))
      return undefined;
    return { fromHeight, validators };
  }

  private async buildGenesis(keepNodes: boolean): Promise<{ write: BlockWrite }> {
    const leaves = genesisLeaves(this.genesis);
    // Built from genesis alone (not from what the store holds), so that it can be compared with
    // a stored block 0; numbered from the store's next id, for when it is written.
    const trie = buildStateTrie(leaves, this.store.nextTrieNodeId(), keepNodes);
    const header = genesisHeader(this.genesis, trie.rootHex);
    const block: StoredBlock = {
      header,
      hash: hashHeader(header),
      tx_hashes: [],
      validators: genesisValidators(this.genesis).map((v) => v.address),
      commit: null,
    };
    const validators = genesisValidators(this.genesis);
    return {
      write: {
        block,
        txs: [],
        journalRemovals: [],
        stateChanges: leaves,
        trie: trie.write,
        stakeChanges: new Map(validators.map((v) => [v.address, v.stake])),
        validatorSet: { fromHeight: 1, validators },
      },
    };
  }
}

/**
 * The hash of the block 0 that `genesis` makes, computed without a store: what a file that
 * carries a genesis (an export) is checked against before anything is written.
 */
export function genesisBlockHash(genesis: Genesis): string {
  const { rootHex } = buildStateTrie(genesisLeaves(genesis), 0, false);
  return hashHeader(genesisHeader(genesis, rootHex));
}
