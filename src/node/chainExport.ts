import { createReadStream, existsSync, mkdirSync, renameSync, rmSync, statSync } from "node:fs";
import { open } from "node:fs/promises";
import { dirname } from "node:path";
import { createInterface } from "node:readline";
import { Chain, type Genesis, genesisBlock } from "../chain/index.ts";
import { armFailpoint, type TestFaults } from "../faults/index.ts";
import { LmdbStore, ReadOnlyStore, type RetentionOptions } from "../storage/index.ts";
import {
  encodeExportBlock,
  encodeExportHeader,
  exportHeaderOf,
  ImportRefusedError,
  type ImportResult,
  importBlocks,
  parseExportHeader,
  serveBlocks,
} from "../sync/index.ts";
import { genesisDigest, rememberedGenesisHash } from "./genesisCheck.ts";
import { homePaths, loadGenesis, saveGenesis } from "./home.ts";
import { HomeLock } from "./homeLock.ts";
import { defaultNodeOptions } from "./options.ts";
import { SignatureWorkers } from "./signatureWorkers.ts";

/**
 * `chain-node export` and `import`: a home's chain as a file of blocks with their certificates
 * (format: src/sync/exportFile.ts), and that file replayed into a home with every block checked
 * as block sync checks it. docs/operations.md ("Backups") is the operator's side.
 */

export interface ExportOptions {
  home: string;
  out: string;
  /** First block (default 1: block 0 is made from the genesis the file carries). */
  from?: number | undefined;
  /** Last block (default: the head when the export begins). */
  to?: number | undefined;
  /** Called as blocks are written: how many so far, of how many. */
  onProgress?(done: number, total: number): void;
}

export interface ExportSummary {
  chainId: number;
  from: number;
  to: number;
  blocks: number;
  bytes: number;
}

/** Bytes gathered before one write to the file. */
const WRITE_CHUNK_BYTES = 1 << 20;

/**
 * Writes blocks from..to of `home` to `out`, read in one LMDB read transaction (the node may be
 * running: what it commits meanwhile is not in the file). Written to `<out>.partial`, fsynced, then
 * renamed: a file named `out` is always complete. Refuses an existing `out`.
 */
export async function exportChain(options: ExportOptions): Promise<ExportSummary> {
  const { home, out } = options;
  if (existsSync(out)) throw new Error(`${out} already exists: an export never overwrites a file`);
  const genesis = loadGenesis(home);
  const data = homePaths(home).data;
  const store = new ReadOnlyStore(data);
  const view = store.snapshot();
  const partial = `${out}.partial`;
  let done = false;
  try {
    const head = view.headNumber();
    const genesisBlock = view.getBlock(0);
    if (head === undefined || genesisBlock === undefined) throw new Error(`${data} holds no committed block`);
    const from = options.from ?? 1;
    const to = options.to ?? head;
    if (from < 1) throw new Error("--from must be at least 1 (block 0 is made from the genesis in the file)");
    if (to > head) throw new Error(`--to ${to} is above the home's head (${head})`);
    if (from > to + 1) throw new Error(`--from ${from} is above --to ${to}`);
    const kept = view.blocksFrom();
    if (from - 1 > 0 && from - 1 < kept) {
      throw new Error(
        `blocks 1..${kept - 1} were pruned from ${data} ([storage] retain_blocks); export --from ${kept + 1} or later (a block needs its parent)`,
      );
    }
    // A block needs its parent (whose certificate it carries): both must be stored.
    for (const number of [from - 1, from]) {
      if (number <= to && view.getBlock(number) === undefined) {
        throw new Error(`block ${number} is not stored in ${data}: this home cannot export from ${from}`);
      }
    }
    const header = exportHeaderOf(genesis, genesisBlock, from, to);
    const total = to - from + 1;
    mkdirSync(dirname(out), { recursive: true });
    const file = await open(partial, "w");
    let bytes = 0;
    let count = 0;
    try {
      let chunk: string[] = [encodeExportHeader(header)];
      let chunkBytes = 0;
      for (const block of serveBlocks(view, from, to, total)) {
        const line = encodeExportBlock(block);
        chunk.push(line);
        chunkBytes += line.length;
        count++;
        if (chunkBytes >= WRITE_CHUNK_BYTES) {
          bytes += (await file.write(chunk.join(""))).bytesWritten;
          chunk = [];
          chunkBytes = 0;
          options.onProgress?.(count, total);
        }
      }
      if (count !== total) {
        throw new Error(`block ${from + count} (or its transactions) is not stored in ${data}`);
      }
      bytes += (await file.write(chunk.join(""))).bytesWritten;
      await file.sync();
    } finally {
      await file.close();
    }
    renameSync(partial, out);
    await syncDir(dirname(out));
    options.onProgress?.(count, total);
    done = true;
    return { chainId: genesis.chain_id, from, to, blocks: count, bytes };
  } finally {
    view.end();
    await store.close();
    if (!done) rmSync(partial, { force: true });
  }
}

/** A directory's entries made durable (after a rename into it). */
async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export interface ImportOptions {
  home: string;
  file: string;
  /** Test-only faults (a failpoint armed before the data opens), as the node takes them. */
  faults?: TestFaults;
  /**
   * Threads that check transaction signatures ahead of execution (0: on the main thread); by
   * default the node's (`[pool] verify_threads`'s default) for a large file, none for a small one.
   */
  verifyThreads?: number;
  /** After each group of blocks is durable: the head, and the file's last block. */
  onProgress?(head: number, to: number): void;
  /** What the home keeps ([storage]); by default the node's. Import prunes as the node would. */
  retention?: RetentionOptions;
}

/** A file below this size is imported with signatures checked on the main thread (measured: 13 blocks took 0.15 s so, 2 s with 8 threads). */
const VERIFY_THREADS_MIN_FILE_BYTES = 16 << 20;

export interface ImportSummary extends ImportResult {
  chainId: number;
  /** genesis.json was written from the file (the home had none). */
  wroteGenesis: boolean;
  to: number;
}

/**
 * Replays an export into `home`: a new home is made from the file's genesis (genesis.json, then
 * block 0); a home of the same genesis continues from its head, so an import killed at any point
 * is resumed by running it again. Every block is checked as block sync checks it and committed
 * through the chain core (durable, all or nothing). The home must not be in use by a running node.
 * Throws ImportRefusedError with a one-line reason for a file that does not fit.
 */
export async function importChain(options: ImportOptions): Promise<ImportSummary> {
  const { home, file } = options;
  if (!existsSync(file)) throw new Error(`${file} does not exist`);
  const input = createReadStream(file, { encoding: "utf8" });
  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  const iterator = lines[Symbol.asyncIterator]();
  let store: LmdbStore | undefined;
  let lock: HomeLock | undefined;
  let verifier: SignatureWorkers | undefined;
  try {
    const first = await iterator.next();
    if (first.done === true) throw new ImportRefusedError("bad_format", `${file} is empty`);
    const header = parseExportHeader(first.value);
    const paths = homePaths(home);
    const wroteGenesis = !existsSync(paths.genesis);
    let genesis: Genesis;
    if (wroteGenesis) {
      genesis = header.genesis;
      saveGenesis(home, genesis);
    } else {
      genesis = loadGenesis(home);
      // The hash a node on this home remembered for this genesis, if any: building block 0 takes
      // seconds at a million accounts (docs/decisions/022).
      const hash = rememberedGenesisHash(home, genesisDigest(genesis)) ?? genesisBlock(genesis).hash;
      if (hash !== header.genesis_hash) {
        throw new ImportRefusedError(
          "wrong_chain",
          `the file is of chain ${header.chain_id} (genesis ${header.genesis_hash}), ${paths.genesis} of chain ${genesis.chain_id} (genesis ${hash})`,
        );
      }
    }
    armFailpoint(options.faults?.failpoint);
    mkdirSync(paths.data, { recursive: true });
    lock = HomeLock.acquire(paths.data);
    store = new LmdbStore(paths.data, options.retention);
    const opened = store;
    // Block 0's hash is the header's, which parseExportHeader checked against the header's genesis
    // and the branch above against genesis.json: not built a third time (docs/decisions/022).
    const chain = new Chain(opened, genesis, { genesisHash: header.genesis_hash });
    await chain.open();
    // Threads cost ~250 ms each to start: worth it only for a file with many signatures to check.
    const threads =
      options.verifyThreads ??
      (statSync(file).size >= VERIFY_THREADS_MIN_FILE_BYTES ? defaultNodeOptions(home).verifyThreads : 0);
    verifier = threads > 0 ? await SignatureWorkers.start(threads) : undefined;
    const result = await importBlocks(
      chain,
      header,
      { [Symbol.asyncIterator]: () => iterator },
      {
        chainId: genesis.chain_id,
        maxTxBytes: genesis.consensus.max_tx_bytes,
        // A block the home pruned is not compared (it was checked when the home committed it).
        storedHash: (number) =>
          number > 0 && number < opened.blocksFrom() ? undefined : opened.getBlock(number)?.hash,
        ...(verifier === undefined ? {} : { verifier }),
        ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
      },
    );
    return { ...result, chainId: genesis.chain_id, wroteGenesis, to: header.to };
  } finally {
    lines.close();
    input.destroy();
    await verifier?.close();
    await store?.close();
    lock?.release();
  }
}
