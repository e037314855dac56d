import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { dirname } from "node:path";
import { setImmediate as nextTurn } from "node:timers/promises";
import {
  chunkInfo,
  chunkItems,
  checkManifestChain,
  type ConfirmedTx,
  decodeManifest,
  encodeManifest,
  type Genesis,
  genesisBlock,
  genesisItems,
  SNAPSHOT_FORMAT,
  SNAPSHOT_VERSION,
  SnapshotAssembler,
  type SnapshotChunkInfo,
  SnapshotError,
  type SnapshotManifest,
  snapshotTxs,
  snapshotValidatorSets,
  UNORDERED_TX_WINDOW_MS,
  unorderedLookbackMs,
} from "../chain/index.ts";
import { failpoint } from "../faults/index.ts";
import { LmdbStore, type StoreSnapshotView } from "../storage/index.ts";
import { homePaths, loadGenesis } from "./home.ts";
import { HomeLock } from "./homeLock.ts";

/**
 * The snapshot container file (docs/decisions/010-snapshots.md): one file per snapshot, so that a
 * complete snapshot is exactly a file that exists under its name (written as `.partial`, fsynced,
 * then renamed) and can be copied between hosts as one thing.
 *
 *   START_MAGIC (8) ‖ chunk 0 ‖ … ‖ chunk n−1 ‖ manifest (canonical JSON) ‖ u32be manifest length ‖ END_MAGIC (8)
 *
 * Chunks come first because their hashes go into the manifest; the reader finds the manifest from
 * the end, and chunk i at 8 + the lengths of the chunks before it. A truncated file has no END_MAGIC.
 */
const START_MAGIC = Buffer.from("CHNSNAP1", "latin1");
const END_MAGIC = Buffer.from("CHNSNEND", "latin1");
const TRAILER_BYTES = 4 + END_MAGIC.length;
/**
 * The longest a snapshot write runs before it yields to the event loop while it walks the blocks
 * for unordered transactions (chunks yield after each), and looks whether it was told to stop.
 * The walk reads every transaction of up to two hours of blocks: 160,000 of them (the join bench's
 * chain) took one turn of ~0.7 s, when the node still wrote its snapshots on its event loop; at
 * full load two hours hold millions.
 */
const TURN_MS = 10;

/** Suffix of a snapshot file being written; such a file is never a snapshot. */
export const PARTIAL_SUFFIX = ".partial";

/** An open snapshot file: its checked manifest and its chunks by index. */
export interface SnapshotFile {
  manifest: SnapshotManifest;
  /** Chunk `index`'s bytes as stored (not yet checked against the manifest). */
  readChunk(index: number): Promise<Uint8Array>;
  close(): Promise<void>;
}

export async function openSnapshotFile(path: string): Promise<SnapshotFile> {
  const handle = await open(path, "r");
  try {
    const size = (await handle.stat()).size;
    const notSnapshot = (why: string): never => {
      throw new SnapshotError("not_a_snapshot", `${path} is not a complete ${SNAPSHOT_FORMAT} file: ${why}`);
    };
    if (size < START_MAGIC.length + TRAILER_BYTES) notSnapshot("too short");
    const start = await readAt(handle, 0, START_MAGIC.length);
    if (!START_MAGIC.equals(start)) notSnapshot("it does not begin with the snapshot marker");
    const trailer = await readAt(handle, size - TRAILER_BYTES, TRAILER_BYTES);
    if (!END_MAGIC.equals(trailer.subarray(4))) notSnapshot("its end marker is missing (truncated?)");
    const manifestBytes = trailer.readUInt32BE(0);
    const manifestAt = size - TRAILER_BYTES - manifestBytes;
    if (manifestAt < START_MAGIC.length) notSnapshot("its manifest length is wrong");
    const manifest = decodeManifest(await readAt(handle, manifestAt, manifestBytes));
    const offsets: number[] = [];
    let offset = START_MAGIC.length;
    for (const chunk of manifest.chunks) {
      offsets.push(offset);
      offset += chunk.bytes;
    }
    if (offset !== manifestAt)
      notSnapshot(`its chunks take ${offset - START_MAGIC.length} bytes, not what the manifest lists`);
    return {
      manifest,
      readChunk: (index) => {
        const info = manifest.chunks[index];
        const at = offsets[index];
        if (info === undefined || at === undefined) throw new SnapshotError("bad_chunk", `no chunk ${index}`);
        return readAt(handle, at, info.bytes);
      },
      close: () => handle.close(),
    };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

async function readAt(handle: FileHandle, position: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  const { bytesRead } = await handle.read(buffer, 0, length, position);
  if (bytesRead !== length) throw new SnapshotError("not_a_snapshot", "the file ended early");
  return buffer;
}

export interface WriteSnapshotOptions {
  /** Checked between chunks: true stops the write (the partial file is removed). */
  aborted?: () => boolean;
  /** Chunk size target, bytes (the format's by default; tests use smaller). */
  chunkTargetBytes?: number;
  /**
   * Block 0's hash when the caller knows it already (a node checked its store against
   * genesis.json when its chain opened): computing it is the genesis state root over every
   * genesis account, seconds at a million accounts, for each snapshot.
   */
  genesisHash?: string;
}

/**
 * Writes a snapshot of the view's head to `path` (through `path.partial`, fsynced, renamed). The
 * view is only read; the caller ends it. Yields to the event loop after every chunk, so a running
 * node keeps making blocks while it writes.
 */
export async function writeSnapshotFile(
  view: StoreSnapshotView,
  genesis: Genesis,
  path: string,
  options: WriteSnapshotOptions = {},
): Promise<SnapshotManifest> {
  const height = view.head;
  if (height === undefined) throw new Error("the home holds no chain data");
  const block = view.getBlock(height);
  if (block === undefined) throw new Error(`head block ${height} is missing from storage`);
  const genesisHash = options.genesisHash ?? genesisBlock(genesis).hash;
  if (view.getBlock(0)?.hash !== genesisHash) {
    throw new Error(`the data directory holds another chain than genesis.json (genesis ${genesisHash})`);
  }
  const partial = `${path}${PARTIAL_SUFFIX}`;
  mkdirSync(dirname(path), { recursive: true });
  const handle = await open(partial, "w");
  try {
    await handle.write(START_MAGIC);
    const chunks: SnapshotChunkInfo[] = [];
    let leafCount = 0;
    const put = async (kind: SnapshotChunkInfo["kind"], chunk: { bytes: Uint8Array; items: number }) => {
      await handle.write(chunk.bytes);
      chunks.push(chunkInfo(kind, chunk));
      failpoint("snapshot.afterFirstChunk");
      await nextTurn();
      if (options.aborted?.() === true) throw new SnapshotAbortedError();
    };
    for (const chunk of chunkItems(genesisItems(genesis), options.chunkTargetBytes))
      await put("genesis", chunk);
    for (const chunk of chunkItems(view.leaves(), options.chunkTargetBytes)) {
      leafCount += chunk.items;
      await put("state", chunk);
    }
    const txs: ConfirmedTx[] = [];
    let turnStarted = performance.now();
    for (const kept of snapshotTxs(view, block, unorderedLookbackMs(UNORDERED_TX_WINDOW_MS))) {
      txs.push(...kept);
      if (performance.now() - turnStarted < TURN_MS) continue;
      await nextTurn();
      if (options.aborted?.() === true) throw new SnapshotAbortedError();
      turnStarted = performance.now();
    }
    for (const chunk of chunkItems(txs, options.chunkTargetBytes)) await put("txs", chunk);
    const manifest: SnapshotManifest = {
      format: SNAPSHOT_FORMAT,
      version: SNAPSHOT_VERSION,
      chain_id: genesis.chain_id,
      genesis_hash: genesisHash,
      height,
      block_hash: block.hash,
      state_root: block.header.state_root,
      block,
      validator_sets: snapshotValidatorSets(view.validatorSetChanges(), height),
      leaf_count: leafCount,
      chunks,
    };
    const manifestBytes = encodeManifest(manifest);
    const trailer = Buffer.alloc(TRAILER_BYTES);
    trailer.writeUInt32BE(manifestBytes.length, 0);
    END_MAGIC.copy(trailer, 4);
    await handle.write(manifestBytes);
    await handle.write(trailer);
    await handle.sync();
    await handle.close();
    renameSync(partial, path);
    return manifest;
  } catch (error) {
    await handle.close().catch(() => undefined);
    rmSync(partial, { force: true });
    throw error;
  }
}

/** A snapshot write stopped because the node is stopping. */
export class SnapshotAbortedError extends Error {
  constructor() {
    super("snapshot abandoned: the node is stopping");
    this.name = "SnapshotAbortedError";
  }
}

/** What a restore did. */
export interface RestoreResult {
  manifest: SnapshotManifest;
  /** False when the store already held this snapshot (a rerun after a crash) and only genesis.json was missing. */
  wroteStore: boolean;
  wroteGenesis: boolean;
}

/**
 * Restores a home from a snapshot file: refuses a home with chain data (unless it is this very
 * snapshot, restored by a run that died before writing genesis.json), checks every chunk and the
 * rebuilt state root, writes the store in one transaction, then genesis.json if the home has none
 * (a home's genesis.json, if present, must be the snapshot's chain).
 */
export async function restoreSnapshotFile(home: string, file: string): Promise<RestoreResult> {
  const snapshot = await openSnapshotFile(file);
  try {
    const { manifest } = snapshot;
    const paths = homePaths(home);
    const hasGenesis = existsSync(paths.genesis);
    const known = hasGenesis ? loadGenesis(home) : undefined;
    if (known !== undefined) checkManifestChain(manifest, known);
    // Without the home's genesis.json, the file's genesis chunks give it (and must be its chain).
    const assembler = new SnapshotAssembler(manifest, known);
    mkdirSync(paths.data, { recursive: true });
    const lock = HomeLock.acquire(paths.data);
    const store = new LmdbStore(paths.data);
    let wroteStore = false;
    try {
      const head = store.headNumber();
      if (head !== undefined) {
        const same =
          head === manifest.height &&
          store.getBlock(head)?.hash === manifest.block_hash &&
          store.statesFrom() === manifest.height;
        if (!same || hasGenesis) {
          throw new Error(
            `${home} already holds chain data (head ${head}); restore needs a home without data (a new --home)`,
          );
        }
        // This very snapshot, restored by a run that died before genesis.json: only that is left.
        for (const [i, info] of manifest.chunks.entries()) {
          if (info.kind === "genesis") assembler.add(i, await snapshot.readChunk(i));
        }
      } else {
        for (const i of assembler.missing()) assembler.add(i, await snapshot.readChunk(i));
        store.restoreSnapshot(assembler.finish(store.nextTrieNodeId()));
        wroteStore = true;
      }
    } finally {
      await store.close();
      lock.release();
    }
    failpoint("snapshot.restoreBeforeGenesis");
    if (!hasGenesis) {
      const partial = `${paths.genesis}${PARTIAL_SUFFIX}`;
      writeFileSync(partial, `${JSON.stringify(assembler.genesis(), null, 2)}\n`);
      renameSync(partial, paths.genesis);
    }
    return { manifest, wroteStore, wroteGenesis: !hasGenesis };
  } finally {
    await snapshot.close();
  }
}
