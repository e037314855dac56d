import { existsSync } from "node:fs";
import { join } from "node:path";
import { open, type RootDatabase } from "lmdb";
import type { ConfirmedTx, StoredBlock } from "../chain/index.ts";
import { BLOCKS_FROM } from "./pruning.ts";
import { SCHEMA_VERSION } from "./schema.ts";
import {
  openSnapshotTables,
  openSnapshotView,
  type SnapshotViewTables,
  type StoreSnapshotView,
} from "./snapshotTables.ts";

/**
 * A data directory opened read-only, beside the node that may be running on it (LMDB lets other
 * processes read an environment while one writes): for `chain-node export`, `backup` and
 * `snapshot create`. Opening writes nothing (LmdbStore's open may migrate), so it is safe on a
 * live node's home.
 */
export class ReadOnlyStore {
  private readonly root: RootDatabase;
  /** Opened once: exports read meta, blocks and txs; a snapshot view reads all of them. */
  private readonly tables: SnapshotViewTables;

  constructor(path: string) {
    // LMDB would create an empty environment in a directory without one: a wrong --home must fail.
    if (!existsSync(join(path, "data.mdb"))) throw new Error(`${path} holds no chain data (no data.mdb)`);
    this.root = open({ path, compression: false, readOnly: true });
    this.tables = openSnapshotTables(this.root);
    const version = this.tables.meta.get("schema_version");
    if (version !== SCHEMA_VERSION) {
      void this.root.close();
      throw new Error(`data directory has schema version ${version}; this node reads ${SCHEMA_VERSION}`);
    }
  }

  /**
   * A view of the data as of now, in one LMDB read transaction: the blocks the node commits
   * meanwhile are not seen. Call `end` when done (a long-open view keeps the pages it reads from
   * being reused, so the data file may grow while it lasts).
   */
  snapshot(): StoreSnapshot {
    const transaction = this.root.useReadTransaction();
    const at = { transaction };
    const { meta, blocks, txs } = this.tables;
    return {
      headNumber: () => meta.get("head", at),
      blocksFrom: () => meta.get(BLOCKS_FROM, at) ?? 1,
      getBlock: (number) =>
        Number.isSafeInteger(number) && number >= 0 && number <= 0xffffffff
          ? blocks.get(number, at)
          : undefined,
      getConfirmedTx: (hash) => txs.get(hash, at),
      end: () => transaction.done(),
    };
  }

  /** What a snapshot of the head reads, in one read transaction (as LmdbStore.snapshotView). */
  snapshotView(): StoreSnapshotView {
    return openSnapshotView(this.root, this.tables);
  }

  /**
   * A consistent copy of the environment into `dir` (an existing, empty directory): LMDB's own copy
   * (mdb_env_copy2), taken in one read transaction while the node may keep writing. `compact`
   * leaves out free pages (slower, smaller).
   */
  async copyTo(dir: string, compact: boolean): Promise<void> {
    await this.root.backup(dir, compact);
  }

  async close(): Promise<void> {
    await this.root.close();
  }
}

/** What an export reads, all from one read transaction. */
export interface StoreSnapshot {
  headNumber(): number | undefined;
  /** Lowest block above 0 still stored (1 unless the node prunes blocks). */
  blocksFrom(): number;
  getBlock(number: number): StoredBlock | undefined;
  getConfirmedTx(hash: string): ConfirmedTx | undefined;
  end(): void;
}
