import { open, type RootDatabase } from "lmdb";
import type {
  ConfirmedTx,
  JsonValue,
  SnapshotRestore,
  StoredBlock,
  ValidatorSetChange,
} from "../chain/index.ts";
import { failpoint } from "../faults/index.ts";
import type { BlockTables } from "./blockWritePlan.ts";
import { BLOCKS_FROM, DELETIONS_FROM, STATES_FROM } from "./pruning.ts";
import { ENVIRONMENT_OPTIONS, openTable, SCHEMA_VERSION } from "./schema.ts";
import { directWrites } from "./writeBatch.ts";

/** A snapshot's reads and writes of the store's tables (LmdbStore.snapshotView / restoreSnapshot). */

/**
 * Reads of one LMDB read transaction: a consistent view of the store as of one commit, however
 * long it is read and whatever is committed meanwhile. `done` must be called (it frees LMDB's
 * reader slot and lets the pages that later commits free be reused).
 */
export interface StoreSnapshotView {
  /** The head as of the view; undefined for a store without chain data. */
  readonly head: number | undefined;
  getBlock(number: number): StoredBlock | undefined;
  getConfirmedTx(hash: string): ConfirmedTx | undefined;
  /** Every state leaf, in key order. */
  leaves(): Iterable<readonly [string, JsonValue]>;
  /** Every stored validator set change, by height. */
  validatorSetChanges(): Iterable<ValidatorSetChange>;
  done(): void;
}

/**
 * The node's environment opened on another thread (a snapshot's own, node/snapshotThread.ts) with
 * the store's options and encodings, as the block writer thread opens it: lmdb-js shares one LMDB
 * environment per path and process, so it must be opened the same way. It only reads.
 */
export function openSnapshotSource(path: string): {
  snapshotView(): StoreSnapshotView;
  close(): Promise<void>;
} {
  const root = open({ path, ...ENVIRONMENT_OPTIONS });
  const tables = openSnapshotTables(root);
  return { snapshotView: () => openSnapshotView(root, tables), close: () => root.close() };
}

/** The tables a snapshot view reads, opened on `root` with the store's encodings. */
export function openSnapshotTables(root: RootDatabase): SnapshotViewTables {
  return {
    meta: openTable(root, "meta"),
    blocks: openTable(root, "blocks"),
    txs: openTable(root, "txs"),
    state: openTable(root, "state"),
    validatorSets: openTable(root, "validatorSets"),
  };
}

/** The tables a snapshot view reads: the store's, or a read-only environment's (ReadOnlyStore). */
export type SnapshotViewTables = Pick<BlockTables, "meta" | "blocks" | "txs" | "state" | "validatorSets">;

/** A StoreSnapshotView on one read transaction of `root`, opened now. */
export function openSnapshotView(root: RootDatabase, tables: SnapshotViewTables): StoreSnapshotView {
  const transaction = root.useReadTransaction();
  const at = { transaction };
  let open = true;
  return {
    head: tables.meta.get("head", at),
    getBlock: (number) => tables.blocks.get(number, at),
    getConfirmedTx: (hash) => tables.txs.get(hash, at),
    leaves: () => tables.state.getRange({ transaction }).map(({ key, value }) => [key, value] as const),
    validatorSetChanges: () =>
      tables.validatorSets
        .getRange({ transaction })
        .map(({ key, value }) => ({ fromHeight: key, validators: value })),
    done: () => {
      if (open) transaction.done();
      open = false;
    },
  };
}

/**
 * Writes a checked snapshot into a store without chain data, in one write transaction: block 0
 * and the snapshot's block (the head), the state leaves, trie, stakers, validator sets, the
 * transactions it carries, and `blocks_from` / `states_from` = its height (no block or state
 * below it is kept). A crash before the commit leaves the store empty; after it, complete.
 */
export function writeSnapshot(root: RootDatabase, tables: BlockTables, restore: SnapshotRestore): void {
  const { meta, blocks, blockNumbers, txs, history, state, trie, trieRoots, stakes, validatorSets } = tables;
  const height = restore.block.header.number;
  root.transactionSync(() => {
    if (meta.get("head") !== undefined) throw new Error("the store already holds chain data");
    for (const block of [restore.genesisBlock, restore.block]) {
      blocks.put(block.header.number, block);
      blockNumbers.put(block.hash, block.header.number);
    }
    for (const confirmed of restore.txs) txs.put(confirmed.tx.hash, confirmed);
    // Only the snapshot block's own are in a kept block; the others it carries are for the
    // replay check of unordered transactions, and their blocks are not here.
    history.add(
      directWrites,
      restore.txs.filter((confirmed) => confirmed.block_number === height),
    );
    for (const [path, value] of restore.leaves) state.put(path, value);
    failpoint("snapshot.restoreInWrite");
    for (const [id, record] of restore.trie.nodes) trie.put(id, record);
    if (restore.trie.root !== undefined) trieRoots.put(restore.trie.root.hash, restore.trie.root.id);
    for (const [address, stake] of restore.stakers) stakes.put(address, stake);
    for (const set of restore.validatorSets) validatorSets.put(set.fromHeight, set.validators);
    meta.put(BLOCKS_FROM, height);
    meta.put(STATES_FROM, height);
    meta.put(DELETIONS_FROM, height);
    meta.put("head", height);
    meta.put("schema_version", SCHEMA_VERSION);
  });
}
