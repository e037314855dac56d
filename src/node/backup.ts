import {
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { JOURNAL_FILE, ReadOnlyStore } from "../storage/index.ts";
import { homePaths, loadGenesis } from "./home.ts";
import { LOCK_FILE } from "./homeLock.ts";

/**
 * `chain-node backup`: a home that `chain-node start` (or `dev`) runs as it is, copied from a
 * running node. docs/operations.md ("Backups") is the operator's side.
 */

const BACKUP_FORMAT = "chain-node-backup";
const BACKUP_VERSION = 1;

/** backup.json, beside the copied home's files: what the backup holds (DESIGN.md §12). */
export interface BackupManifest {
  format: typeof BACKUP_FORMAT;
  version: typeof BACKUP_VERSION;
  chain_id: number;
  genesis_hash: string;
  /** The head of the copied data. */
  head: number;
  /** Milliseconds since the Unix epoch, when the copy was taken. */
  created_at: number;
  with_keys: boolean;
}

export interface BackupOptions {
  home: string;
  out: string;
  /** Copy keys/ too (the validator and node keys: secrets). */
  withKeys: boolean;
  /** Leave LMDB's free pages out of the copy (slower, smaller). */
  compact: boolean;
}

/**
 * Files of data/ not copied as files: LMDB's own (the chain's, copied through LMDB; the pool
 * journal's, not copied: pending transactions are not chain data, and a file copy of an
 * environment being written could be torn) and the home's lock (it names the running node; in a
 * copy it would make the copy look in use). Every other file there (signing log, evidence) is
 * copied as a file.
 */
const NOT_COPIED_AS_FILES = new Set([
  "data.mdb",
  "lock.mdb",
  JOURNAL_FILE,
  `${JOURNAL_FILE}-lock`,
  LOCK_FILE,
]);

/**
 * Copies `home` into `out`: data/ through LMDB's copy (one read transaction, consistent while the
 * node writes), then data/'s other files (the signing log after the copy, so it is at least as
 * recent as the data), genesis.json, config.toml, and keys/ only when asked. Built in
 * `<out>.partial` and renamed: a directory named `out` is always a whole backup. Refuses an `out`
 * that exists and is not empty.
 */
export async function backupHome(options: BackupOptions): Promise<BackupManifest> {
  const { home, out } = options;
  if (existsSync(out) && (!statSync(out).isDirectory() || readdirSync(out).length > 0)) {
    throw new Error(`${out} exists and is not an empty directory: a backup never overwrites`);
  }
  const paths = homePaths(home);
  const genesis = loadGenesis(home);
  const partial = `${out}.partial`;
  rmSync(partial, { recursive: true, force: true }); // what a killed backup left
  const copyPaths = homePaths(partial);
  mkdirSync(copyPaths.data, { recursive: true });
  try {
    const source = new ReadOnlyStore(paths.data);
    try {
      await source.copyTo(copyPaths.data, options.compact);
    } finally {
      await source.close();
    }
    for (const name of readdirSync(paths.data)) {
      if (!NOT_COPIED_AS_FILES.has(name)) copyFileSync(join(paths.data, name), join(copyPaths.data, name));
    }
    copyFileSync(paths.genesis, copyPaths.genesis);
    if (existsSync(paths.config)) copyFileSync(paths.config, copyPaths.config);
    if (options.withKeys && existsSync(paths.keys)) {
      cpSync(paths.keys, copyPaths.keys, { recursive: true });
      chmodSync(copyPaths.keys, 0o700);
      for (const name of readdirSync(copyPaths.keys)) chmodSync(join(copyPaths.keys, name), 0o600);
    }
    const manifest = await manifestOf(partial, genesis.chain_id, options.withKeys);
    writeFileSync(join(partial, "backup.json"), `${JSON.stringify(manifest, null, 2)}\n`);
    if (existsSync(out)) rmdirSync(out);
    renameSync(partial, out);
    return manifest;
  } catch (error) {
    rmSync(partial, { recursive: true, force: true });
    throw error;
  }
}

/** The manifest of a copied home, read from the copy itself. */
async function manifestOf(copy: string, chainId: number, withKeys: boolean): Promise<BackupManifest> {
  const store = new ReadOnlyStore(homePaths(copy).data);
  const view = store.snapshot();
  try {
    const head = view.headNumber();
    const genesisHash = view.getBlock(0)?.hash;
    if (head === undefined || genesisHash === undefined) throw new Error("the copied data holds no block");
    return {
      format: BACKUP_FORMAT,
      version: BACKUP_VERSION,
      chain_id: chainId,
      genesis_hash: genesisHash,
      head,
      created_at: Date.now(),
      with_keys: withKeys,
    };
  } finally {
    view.end();
    await store.close();
  }
}
