import { copyFileSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import {
  chunksHash,
  encodeManifest,
  manifestHash,
  type SnapshotManifest,
  type StoredBlock,
} from "../chain/index.ts";
import { armFailpoint, type FailpointSpec, type TestFaults } from "../faults/index.ts";
import { type LmdbStore, ReadOnlyStore, type StoreSnapshotView } from "../storage/index.ts";
import { genesisDigest, rememberedGenesisHash } from "./genesisCheck.ts";
import { homePaths, loadGenesis } from "./home.ts";
import type { Logger } from "./logger.ts";
import type { SnapshotSettings } from "./options.ts";
import {
  openSnapshotFile,
  PARTIAL_SUFFIX,
  type SnapshotFile,
  type RestoreResult,
  restoreSnapshotFile,
  SnapshotAbortedError,
  writeSnapshotFile,
} from "./snapshotFile.ts";
import { type SnapshotOutcome, SnapshotThread } from "./snapshotThread.ts";

/**
 * The snapshots a node keeps (`<home>/data/snapshots/<height>.snapshot`, one container file each)
 * and the read API state sync will serve peers from: list, manifest, chunk i. A `.partial` file is
 * a snapshot being written, or abandoned by a process that died: never listed.
 */
export class SnapshotStore {
  readonly dir: string;
  /** Offers by height: a complete snapshot file never changes, so each manifest is read once. */
  private readonly hashes = new Map<number, SnapshotOffer>();
  /**
   * Files opened to serve peers, by height: a state sync asks for hundreds of chunks, and opening
   * the file (its manifest read and checked) per chunk cost more than the chunk. Closed once the
   * snapshot is no longer listed (deleted beyond `keep`), so its disk space is freed.
   */
  private readonly serving = new Map<number, Promise<SnapshotFile>>();

  constructor(home: string) {
    this.dir = join(homePaths(home).data, "snapshots");
  }

  pathOf(height: number): string {
    return join(this.dir, `${height}${SNAPSHOT_SUFFIX}`);
  }

  /** Heights of the complete snapshots, oldest first. */
  list(): number[] {
    if (!existsSync(this.dir)) return [];
    return readdirSync(this.dir)
      .map((name) => SNAPSHOT_NAME.exec(name)?.[1])
      .filter((height): height is string => height !== undefined)
      .map(Number)
      .sort((a, b) => a - b);
  }

  /** The checked manifest of the snapshot at `height`. */
  async readManifest(height: number): Promise<SnapshotManifest> {
    const file = await openSnapshotFile(this.pathOf(height));
    await file.close();
    return file.manifest;
  }

  /**
   * What this node offers peers for state sync: each complete snapshot's height, manifest hash,
   * and chunks hash (what another node's snapshot of the same block has in common with it).
   */
  async offers(): Promise<SnapshotOffer[]> {
    const heights = this.list();
    for (const height of this.hashes.keys()) if (!heights.includes(height)) this.hashes.delete(height);
    const offers: SnapshotOffer[] = [];
    for (const height of heights) {
      let offer = this.hashes.get(height);
      if (offer === undefined) {
        // Deleted (kept count) or unreadable since it was listed: not offered.
        const manifest = await this.readManifest(height).catch(() => undefined);
        if (manifest === undefined) continue;
        offer = { height, manifest_hash: manifestHash(manifest), chunks_hash: chunksHash(manifest) };
        this.hashes.set(height, offer);
      }
      offers.push(offer);
    }
    return offers;
  }

  /** The manifest's bytes as peers hash them, or undefined when there is no such snapshot (now). */
  async manifestBytes(height: number): Promise<Uint8Array | undefined> {
    const file = await this.served(height);
    return file === undefined ? undefined : encodeManifest(file.manifest);
  }

  /** Chunk `index` of the snapshot at `height`, or undefined when there is none (now). */
  async chunkBytes(height: number, index: number): Promise<Uint8Array | undefined> {
    const file = await this.served(height);
    return file?.readChunk(index).catch(() => undefined);
  }

  /** The open file of a listed snapshot (opened once); closes those no longer listed. */
  private async served(height: number): Promise<SnapshotFile | undefined> {
    const listed = this.list();
    for (const [open, file] of this.serving) {
      if (listed.includes(open)) continue;
      this.serving.delete(open);
      void file.then((f) => f.close()).catch(() => undefined);
    }
    if (!listed.includes(height)) return undefined;
    let file = this.serving.get(height);
    if (file === undefined) {
      file = openSnapshotFile(this.pathOf(height));
      this.serving.set(height, file);
    }
    return file.catch(() => {
      this.serving.delete(height);
      return undefined;
    });
  }

  /** Removes partial files left by a write that did not finish (the process died or stopped). */
  removePartial(): number {
    if (!existsSync(this.dir)) return 0;
    const partial = readdirSync(this.dir).filter((name) => name.endsWith(PARTIAL_SUFFIX));
    for (const name of partial) rmSync(join(this.dir, name), { force: true });
    return partial.length;
  }

  /** Deletes the oldest snapshots beyond `keep`; returns the heights deleted. */
  prune(keep: number): number[] {
    const heights = this.list();
    const old = heights.slice(0, Math.max(0, heights.length - keep));
    for (const height of old) rmSync(this.pathOf(height), { force: true });
    return old;
  }
}

/** One snapshot as offered to peers (the items of the snapshots protocol's list). */
interface SnapshotOffer {
  height: number;
  manifest_hash: string;
  chunks_hash: string;
}

const SNAPSHOT_SUFFIX = ".snapshot";
const SNAPSHOT_NAME = /^(\d+)\.snapshot$/;

/** The longest the next block's write waits for the snapshot thread's read transaction, ms. */
const OPEN_WAIT_MS = 5_000;

/**
 * Takes a snapshot after each committed block whose height is a multiple of the interval, one at
 * a time, on a thread of its own (SnapshotThread), so that the event loop goes on: at a million
 * accounts a snapshot is seconds of encoding, hashing and writing, and on the event loop it stood
 * still for seconds at a time (docs/performance.md, second stop of 2026-11-27). The thread opens
 * its read transaction while the store holds the next block's write, so the snapshot is exactly
 * the committed block. The oldest snapshots beyond `keep` are deleted once a new one is complete.
 * A height reached while the previous snapshot is still being written is skipped. `stop`
 * abandons a snapshot under way.
 */
export class PeriodicSnapshots {
  private readonly store: LmdbStore;
  private readonly settings: SnapshotSettings;
  private readonly log: Logger;
  private readonly snapshots: SnapshotStore;
  /** Started with the node when it takes snapshots (its start overlaps the node's). */
  private readonly thread: SnapshotThread | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(params: {
    store: LmdbStore;
    home: string;
    settings: SnapshotSettings;
    log: Logger;
    /** Armed in the thread too (a test's failpoint inside the snapshot's write). */
    failpoint: FailpointSpec | undefined;
    /** The format's chunk size unless a test sets another (CHAIN_NODE_TEST_SNAPSHOT_CHUNK_BYTES). */
    chunkTargetBytes: number | undefined;
  }) {
    const { store, home, settings, log } = params;
    this.store = store;
    this.settings = settings;
    this.log = log;
    this.snapshots = new SnapshotStore(home);
    const removed = this.snapshots.removePartial();
    if (removed > 0) this.log.info({ removed }, "removed unfinished snapshot files");
    this.thread =
      settings.interval === 0
        ? undefined
        : new SnapshotThread({
            home,
            data: homePaths(home).data,
            // Checked against genesis.json when the chain opened (this is made after that).
            genesisHash: store.getBlock(0)?.hash,
            failpoint: params.failpoint,
            chunkTargetBytes: params.chunkTargetBytes,
          });
  }

  /** Called after `block` is committed and is the head (Chain.committed). */
  committed(block: StoredBlock): void {
    const height = block.header.number;
    const { interval } = this.settings;
    const thread = this.thread;
    if (this.stopped || thread === undefined || height === 0 || height % interval !== 0) return;
    if (this.running !== undefined) {
      this.log.warn({ height }, "snapshot skipped: the previous one is still being written");
      return;
    }
    const started = Date.now();
    const job = thread.take(height, this.snapshots.pathOf(height));
    // Bounded: a thread that does not answer (still starting, stuck) must not stop block making;
    // past the bound the next block is written, and the thread, seeing it, skips this height.
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, OPEN_WAIT_MS);
    });
    this.store.holdWritesUntil(Promise.race([job.opened, bound]).finally(() => clearTimeout(timer)));
    this.running = job.ended
      .then((outcome) => this.ended(height, outcome, Date.now() - started))
      .finally(() => {
        this.running = undefined;
      });
  }

  private ended(height: number, outcome: SnapshotOutcome, ms: number): void {
    if ("written" in outcome) {
      const deleted = this.snapshots.prune(this.settings.keep);
      this.log.info({ height, ...outcome.written, ms, deleted }, "snapshot taken");
    } else if ("skipped" in outcome) {
      // A block written as part of a range (sync) is committed with the blocks after it; or the
      // thread answered after OPEN_WAIT_MS, and the next block was written meanwhile.
      this.log.debug({ height, seen: outcome.skipped }, "snapshot skipped: the thread saw a later head");
    } else if ("aborted" in outcome) {
      this.log.info({ height }, new SnapshotAbortedError().message);
    } else {
      this.log.error({ height, err: outcome.error }, "snapshot failed");
    }
  }

  /** Abandons a snapshot under way (its partial file is removed) and takes no more. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.thread?.close();
    await this.running;
  }
}

/** `snapshot create`: what it wrote. */
export interface CreatedSnapshot {
  manifest: SnapshotManifest;
  /** keccak256 of the manifest's bytes: the snapshot's name when peers offer it. */
  manifestHash: string;
  /** True when it copied a snapshot the node had taken (`--height` below the head). */
  copied: boolean;
  bytes: number;
}

/**
 * Writes a snapshot of a home's head (or copies the node's stored snapshot at `height`) to `out`.
 * The home may be in use by a running node: everything is read in one LMDB read transaction.
 */
export async function createSnapshot(params: {
  home: string;
  out: string;
  height?: number | undefined;
  faults: TestFaults;
}): Promise<CreatedSnapshot> {
  armFailpoint(params.faults.failpoint);
  const { home, out, height } = params;
  const genesis = loadGenesis(home);
  const data = homePaths(home).data;
  if (!existsSync(join(data, "data.mdb"))) throw new Error(`${home} holds no chain data (${data} is empty)`);
  const stored = new SnapshotStore(home);
  // Read-only: the home may be a running node's, and opening it writable could write to it (a
  // schema upgrade by a newer binary under an older node, a history rebuild beside the node's).
  const store = new ReadOnlyStore(data);
  let view: StoreSnapshotView | undefined;
  try {
    view = store.snapshotView();
    const head = view.head;
    if (head === undefined) throw new Error(`${home} holds no chain data`);
    if (height !== undefined && height !== head) {
      if (!stored.list().includes(height)) {
        throw new Error(
          `no snapshot can be made at height ${height}: the state is kept at the head only (${head}), and the node's stored snapshots are at ${stored.list().join(", ") || "(none)"}`,
        );
      }
      view.done();
      const manifest = await stored.readManifest(height);
      const partial = `${out}${PARTIAL_SUFFIX}`;
      copyFileSync(stored.pathOf(height), partial);
      renameSync(partial, out);
      return { manifest, manifestHash: manifestHash(manifest), copied: true, bytes: statSync(out).size };
    }
    // The node remembers block 0's hash for its genesis: no need to build block 0 here again.
    const genesisHash = rememberedGenesisHash(home, genesisDigest(genesis));
    const manifest = await writeSnapshotFile(
      view,
      genesis,
      out,
      genesisHash === undefined ? {} : { genesisHash },
    );
    return { manifest, manifestHash: manifestHash(manifest), copied: false, bytes: statSync(out).size };
  } finally {
    view?.done();
    await store.close();
  }
}

/** `snapshot restore`: a home without chain data from a snapshot file (see restoreSnapshotFile). */
export async function restoreSnapshot(params: {
  home: string;
  file: string;
  faults: TestFaults;
}): Promise<RestoreResult> {
  armFailpoint(params.faults.failpoint);
  mkdirSync(params.home, { recursive: true });
  return restoreSnapshotFile(params.home, params.file);
}
