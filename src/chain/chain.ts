import { blockSize, commitHash, hashHeader, storedBlockOf, transactionsHash } from "./block.ts";
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
import { type Genesis, genesisWrite } from "./genesis.ts";
import { type StateChanges, StateOverlay, type StateReader } from "./state.ts";
import { type StateCommitment, StateTrie } from "./stateTrie.ts";
import type { BlockWrite, ChainStore, StateChangeEvent } from "./chainStore.ts";
import { afterIoTurn, TimeSlices } from "./timeSlices.ts";
import type { BlockHeader, Commit, StoredBlock, Tx, TxResult, Validator } from "./types.ts";
import {
  nextValidatorSet,
  stakeChangesOf,
  VALIDATOR_SET_DELAY,
  type ValidatorSetChange,
} from "./validatorSet.ts";

/** A block that has been executed on the tip's state (Chain.tip) but not committed. */
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
  /**
   * The store writes blocks off the event loop (a writer thread): `commitAside` then lets the next
   * block execute while one is written. Unset: `commitAside` is `commit`.
   */
  writesAside?: boolean;
  /**
   * Block 0's hash for this genesis, when the caller knows it already (node/genesisCheck.ts
   * remembers it per home): `open` then compares the stored block 0 with it instead of building
   * block 0 from the genesis again, whose state root takes about 10 s at a million accounts.
   * Unset: built and compared. A new store always builds it (its write needs the trie).
   */
  genesisHash?: string;
  /**
   * Opens the state's commitment at a committed root (undefined: the empty trie). Unset: a
   * StateTrie on this thread, reading the store. A node with a trie thread (node/trieThread.ts,
   * docs/decisions/024) passes its own, which reads committed nodes from the environment: inside
   * `commitTogether` it is told each block is under way until the range's write commits.
   */
  openTrie?: (rootHex: string | undefined) => StateCommitment;
}

/** A block handed to the store by `commitAside` whose write is not yet durable. */
interface BlockUnderWay {
  block: StoredBlock;
  /** The state after it: its changes over the store's. */
  state: StateOverlay;
  /** Settles once its write has (and the head moved, or the chain went back to the store's). */
  settled: Promise<void>;
}

/**
 * The chain core: owns the head, executes blocks on top of it, and commits them with their
 * certificate through the store. Not concurrent: one block is executed and committed at a time
 * (the consensus layer calls it from one loop); while one is executed in slices (ChainOptions),
 * other turns of the event loop run and see the head and state as before it. The one overlap is
 * `commitAside`'s: the next block executes while the last is written (docs/decisions/021).
 */
export class Chain {
  readonly genesis: Genesis;
  private readonly store: ChainStore;
  private trie: StateCommitment;
  private readonly openTrie: (rootHex: string | undefined) => StateCommitment;
  /** ChainOptions.openTrie was given. */
  private readonly trieOfCaller: boolean;
  /** Inside commitTogether's write, with a trie of the caller's (see there). */
  private rangeUnderWay = false;
  private headBlock: StoredBlock | undefined;
  private busy = false;
  /** The block commitAside handed to the store, until its write settles. */
  private underWay: BlockUnderWay | undefined;
  /**
   * The write of the block under way failed while the next one was executing on top of it: the
   * trie holds both, and is read again from the store once that execution ends.
   */
  private trieStale = false;
  /** Told of every block after it is stored and became the head (RPC subscriptions, metrics). */
  readonly committed = new Listeners<StoredBlock>();
  /**
   * Told, right after `committed`, of the leaf paths each block wrote (RPC's "value"
   * subscriptions). A path may be listed that held nothing before or after (SET_VALUE clears
   * its target before writing it): listeners compare values, not paths.
   */
  readonly stateChanged = new Listeners<StateChangeEvent>();
  private readonly executionSliceMs: number | undefined;
  private readonly writesAside: boolean;
  private readonly genesisHash: string | undefined;

  constructor(store: ChainStore, genesis: Genesis, options: ChainOptions = {}) {
    this.store = store;
    this.genesis = genesis;
    this.openTrie = options.openTrie ?? ((rootHex) => new StateTrie(store, rootHex));
    this.trieOfCaller = options.openTrie !== undefined;
    this.trie = this.openTrie(undefined);
    this.executionSliceMs = options.executionSliceMs;
    this.writesAside = options.writesAside === true;
    this.genesisHash = options.genesisHash;
  }

  /** Opens the chain: writes block 0 on a new store, or checks the stored one matches genesis. */
  async open(): Promise<void> {
    const headNumber = this.store.headNumber();
    if (headNumber === undefined) {
      const genesis = genesisWrite(this.genesis, this.store.nextTrieNodeId(), true);
      await this.store.commitBlock(genesis);
      this.headBlock = genesis.block;
      this.trie = this.openTrie(genesis.block.header.state_root);
      return;
    }
    // On a store that has block 0 the genesis is only compared: its trie nodes are not kept.
    const expected = this.genesisHash ?? genesisWrite(this.genesis, 0, false).block.hash;
    const stored = this.store.getBlock(0);
    if (stored?.hash !== expected) {
      throw new Error(
        `the data directory holds another chain (genesis ${stored?.hash}, expected ${expected})`,
      );
    }
    const head = this.store.getBlock(headNumber);
    if (head === undefined) throw new Error(`head block ${headNumber} is missing from storage`);
    this.headBlock = head;
    this.trie = this.openTrie(head.header.state_root);
  }

  /** The last durable block: what every read and the network see. */
  head(): StoredBlock {
    if (this.headBlock === undefined) throw new Error("chain is not open");
    return this.headBlock;
  }

  /** The block the next one executes on: the one commitAside is writing, else the head. */
  tip(): StoredBlock {
    return this.underWay?.block ?? this.head();
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
   * Executes `txs` in order on the state of `tip()`. Nothing is written until `commit`.
   * `lastCommit` is the parent's certificate the block carries; by default the parent's own.
   * `sliceMs`: in time slices of that length (by default ChainOptions.executionSliceMs).
   */
  async execute(
    txs: Tx[],
    proposer: string,
    timestamp: number,
    lastCommit?: { commit: Commit | null; signers: string[] },
    sliceMs = this.executionSliceMs,
  ): Promise<ExecutedBlock> {
    if (this.busy) throw new Error("a block is already being executed");
    this.busy = true;
    try {
      const parent = this.tip();
      const carried = lastCommit ?? { commit: parent.commit, signers: parent.validators };
      const overlay = new StateOverlay(this.underWay?.state ?? this.store);
      const credited: (string | undefined)[] = txs.map(() => undefined);
      const results: TxResult[] = [];
      const slices = sliceMs === undefined ? undefined : new TimeSlices(sliceMs);
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
      const fromHeight = parent.header.number + 1 + VALIDATOR_SET_DELAY;
      const validatorSet =
        stakeChanges.size === 0
          ? undefined
          : nextValidatorSet(
              this.store.stakers(),
              stakeChanges,
              this.validatorsAt(fromHeight),
              fromHeight,
              this.genesis.consensus,
            );
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
      this.dropExecuted();
      throw error;
    }
  }

  /**
   * Checks a block another node proposed (links, parent certificate, transactions) and executes
   * it; the result must reproduce its header exactly. Throws InvalidBlockError; on success the
   * block is held as executed, ready for `commit` or `abandon`. `limits.executionSliceMs`: executed
   * in time slices of that length (a syncing node's blocks; a validator's are due within a round).
   */
  async executeProposed(
    block: ProposedBlock,
    limits: { maxTxBytes: number; executionSliceMs?: number },
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
    const executed = await this.execute(
      block.txs,
      block.header.proposer,
      block.header.timestamp,
      { commit: block.last_commit, signers },
      limits.executionSliceMs, // unset: ChainOptions.executionSliceMs
    );
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
    await this.afterUnderWay();
    try {
      const { block, write } = this.blockWrite(executed, commit, signers);
      failpoint("commit.beforeWrite");
      await this.store.commitBlock(write);
      failpoint("commit.beforeHeadUpdate");
      this.trie.markCommitted(this.rangeUnderWay);
      return this.becomeHead(block, executed);
    } catch (error) {
      this.trie.discard();
      throw error;
    } finally {
      this.busy = false;
    }
  }

  /**
   * Like `commit`, but resolves once the block's write is under way, not durable: the next block
   * may execute on top of it meanwhile (`tip`, `execute`), and its commit waits for this write.
   * `durable` resolves as `commit` would, once the block is stored and became the head; it
   * rejects if the write fails, and the chain is then back at the store's head (a block executed
   * on top meanwhile fails to commit). A block that changes stakes is committed as `commit`
   * does (the next block's validator set is read from the store), and so is every block unless
   * ChainOptions.writesAside (a write on this thread would block it anyway).
   */
  async commitAside(
    executed: ExecutedBlock,
    commit: Commit,
    signers: string[],
  ): Promise<{ block: StoredBlock; durable: Promise<StoredBlock> }> {
    if (!this.writesAside || executed.stakeChanges.size > 0) {
      const block = await this.commit(executed, commit, signers);
      return { block, durable: Promise.resolve(block) };
    }
    await this.afterUnderWay();
    let block: StoredBlock;
    let written: Promise<void>;
    // A chain that executes in slices numbers the block's trie records, and releases the decoded
    // nodes after, in slices too: ~20 and ~10 ms for 5,000 transfers in one piece (docs/
    // performance.md). Nothing a read could see changes meanwhile, and the chain is still busy.
    // The trie moves on before the write begins: a write that then fails is handled by `durable`
    // below, which must be in place before its outcome can be known.
    const slices = this.executionSliceMs === undefined ? undefined : new TimeSlices(this.executionSliceMs);
    const pause = slices === undefined ? undefined : () => slices.pause();
    try {
      if (pause !== undefined) await this.trie.numberNewNodes(pause);
      const built = this.blockWrite(executed, commit, signers);
      block = built.block;
      if (pause === undefined) this.trie.markCommitted(true);
      else {
        await this.trie.markCommittedInSlices(true, pause);
        // The store's write plan begins with a slice of its own: requests are read in between.
        await afterIoTurn();
      }
      failpoint("commit.beforeWrite");
      written = this.store.commitBlock(built.write);
    } catch (error) {
      this.dropExecuted();
      throw error;
    }
    this.busy = false;
    const durable = written.then(
      () => {
        this.underWay = undefined;
        this.trie.written();
        failpoint("commit.beforeHeadUpdate");
        return this.becomeHead(block, executed);
      },
      (error: unknown) => {
        this.underWay = undefined;
        if (this.busy) this.trieStale = true;
        else this.reloadHead();
        throw error;
      },
    );
    const settled = durable.then(
      () => undefined,
      () => undefined,
    );
    this.underWay = { block, state: new StateOverlay(this.store, executed.changes), settled };
    return { block, durable };
  }

  /**
   * Waits for the write of the block under way, if there is one. If it failed, the block being
   * committed was executed on top of a block that is not stored: it is dropped, and this throws.
   */
  private async afterUnderWay(): Promise<void> {
    const underWay = this.underWay;
    if (underWay === undefined) return;
    await underWay.settled;
    if (this.trieStale) {
      this.dropExecuted();
      throw new Error(`block ${underWay.block.header.number}'s write failed: the block after it is dropped`);
    }
  }

  /** What `executed` stores with its certificate: the block, and the write that stores it. */
  private blockWrite(
    executed: ExecutedBlock,
    commit: Commit,
    signers: string[],
  ): { block: StoredBlock; write: BlockWrite } {
    const { block, txs } = storedBlockOf(executed, commit, signers);
    const write: BlockWrite = {
      block,
      txs,
      credited: executed.credited,
      journalRemovals: block.tx_hashes,
      stateChanges: executed.changes,
      trie: this.trie.pendingWrite(),
      stakeChanges: executed.stakeChanges,
      ...(executed.validatorSet === undefined ? {} : { validatorSet: executed.validatorSet }),
      ...this.adoptedParent(executed),
    };
    return { block, write };
  }

  /** A durably stored block becomes the head, and the listeners hear of it. */
  private becomeHead(block: StoredBlock, executed: ExecutedBlock): StoredBlock {
    this.headBlock = block;
    failpoint("commit.afterHeadUpdate");
    this.committed.emit(block);
    if (this.stateChanged.size > 0) this.stateChanged.emit({ block, paths: [...executed.changes.keys()] });
    return block;
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
    // A trie of the caller's may be on another thread, which cannot see the range's nodes inside
    // its open write: each block's nodes stay with the trie until the write commits.
    this.rangeUnderWay = this.trieOfCaller;
    try {
      const done = await this.store.commitTogether(items, step);
      if (this.rangeUnderWay) this.trie.written();
      return done;
    } catch (error) {
      if (!this.busy) this.reloadHead();
      throw error;
    } finally {
      this.rangeUnderWay = false;
    }
  }

  /** Head and trie as the store holds them (after a write of several blocks failed). */
  private reloadHead(): void {
    const headNumber = this.store.headNumber();
    const head = headNumber === undefined ? undefined : this.store.getBlock(headNumber);
    if (head === undefined) throw new Error("the store lost its head block");
    this.headBlock = head;
    this.trie = this.openTrie(head.header.state_root);
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
    this.dropExecuted();
  }

  /** The executed block's changes leave the trie (all of it is read again if it is stale). */
  private dropExecuted(): void {
    if (this.trieStale) {
      this.trieStale = false;
      this.reloadHead();
    } else if (this.trie.failed?.() && this.underWay === undefined) {
      // A trie that can no longer be used (its thread lost) is opened again at the head; with a
      // block under way that waits, as the tip is not the head: the next block fails meanwhile.
      this.reloadHead();
    } else this.trie.discard();
    this.busy = false;
  }
}
