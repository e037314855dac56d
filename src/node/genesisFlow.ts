import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseToml } from "smol-toml";
import { type Genesis, genesisBlock, parseGenesis } from "../chain/index.ts";
import { isAddress, toChecksumAddress } from "../crypto/index.ts";
import { ReadOnlyStore } from "../storage/index.ts";
import { homePaths, loadGenesis, saveConfig, saveGenesis } from "./home.ts";

/**
 * A genesis that validators build together without sharing keys (issue 19, DESIGN.md §12): each
 * host's `init` prints a validator entry (its address, stake and announce addresses; never a key),
 * one home collects the entries (`genesis add-validator`), and every host installs the result
 * (`genesis install`). Entries and genesis files carry a format version and the chain id, and are
 * refused with one clear line when either does not match.
 */

export const VALIDATOR_ENTRY_FORMAT = "chain-node/validator-entry";
export const VALIDATOR_ENTRY_VERSION = 1;

/** What one validator contributes to a genesis; safe to publish. */
export interface ValidatorEntry {
  format: typeof VALIDATOR_ENTRY_FORMAT;
  version: typeof VALIDATOR_ENTRY_VERSION;
  chain_id: number;
  network_id: number;
  address: string;
  stake: number;
  /** The account's genesis balance. */
  balance: number;
  peer_id: string;
  /** Multiaddrs ending in /p2p/<peer_id>: where the other validators bootstrap from. */
  announce: string[];
}

/** The file `init` writes beside the home's keys. */
export const validatorEntryPath = (home: string): string => join(home, "validator-entry.json");

const isSafeCount = (value: unknown): value is number =>
  typeof value === "number" && Number.isSafeInteger(value) && value >= 0;

/** Parses and checks an entry (the JSON text, or an object); throws a line naming what is wrong. */
function parseValidatorEntry(raw: unknown, where: string): ValidatorEntry {
  const entry = raw as Partial<ValidatorEntry> | null;
  const fail = (what: string): never => {
    throw new Error(`${where}: ${what}`);
  };
  if (entry === null || typeof entry !== "object" || Array.isArray(entry))
    return fail("not a validator entry object");
  if (entry.format !== VALIDATOR_ENTRY_FORMAT)
    return fail(`format is ${JSON.stringify(entry.format)}, not ${VALIDATOR_ENTRY_FORMAT}`);
  if (entry.version !== VALIDATOR_ENTRY_VERSION) {
    return fail(
      `version ${JSON.stringify(entry.version)}; this node reads version ${VALIDATOR_ENTRY_VERSION}`,
    );
  }
  if (!isSafeCount(entry.chain_id) || !isSafeCount(entry.network_id))
    return fail("chain_id and network_id must be integers");
  if (typeof entry.address !== "string" || !isAddress(entry.address))
    return fail("address is not an address");
  if (!isSafeCount(entry.stake) || entry.stake === 0) return fail("stake must be a positive integer");
  if (!isSafeCount(entry.balance)) return fail("balance must be a non-negative integer");
  if (typeof entry.peer_id !== "string" || entry.peer_id === "") return fail("peer_id is missing");
  const announce = entry.announce;
  if (
    !Array.isArray(announce) ||
    announce.some((a) => typeof a !== "string" || !a.endsWith(`/p2p/${entry.peer_id}`))
  ) {
    return fail("announce must list multiaddrs ending in /p2p/<peer_id>");
  }
  return { ...(entry as ValidatorEntry), address: toChecksumAddress(entry.address), announce: [...announce] };
}

/** Reads an entry given as a file path or as JSON text. */
export function readValidatorEntry(source: string): ValidatorEntry {
  const text = source.trimStart().startsWith("{") ? source : readFileSync(source, "utf8");
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new Error(`${source.slice(0, 80)}: not JSON`);
  }
  return parseValidatorEntry(raw, source.trimStart().startsWith("{") ? "entry" : source);
}

/** A genesis file, checked as `start` checks it; throws one line naming the file. */
export function readGenesisFile(file: string): Genesis {
  try {
    return parseGenesis(JSON.parse(readFileSync(file, "utf8")));
  } catch (error) {
    throw new Error(`${file}: ${(error as Error).message}`);
  }
}

/** Block 0's hash if the home has chain data (it started once), else undefined. */
function storedGenesisHash(home: string): string | undefined {
  if (!existsSync(join(homePaths(home).data, "data.mdb"))) return undefined;
  const store = new ReadOnlyStore(homePaths(home).data);
  const view = store.snapshot();
  try {
    return view.getBlock(0)?.hash;
  } finally {
    view.end();
    void store.close();
  }
}

/**
 * Adds the entries' validators (and their accounts) to the home's genesis.json. Refused: an entry
 * of another chain or network, a validator already in the genesis with other values, an account
 * already funded, or a home that already made block 0 (its genesis can no longer change).
 */
export function addValidators(
  home: string,
  entries: readonly ValidatorEntry[],
): { genesis: Genesis; added: string[] } {
  const started = storedGenesisHash(home);
  if (started !== undefined) {
    throw new Error(
      `${home} already holds a chain (block 0 ${started}): its genesis cannot change; assemble it in a fresh home`,
    );
  }
  const genesis = loadGenesis(home);
  const added: string[] = [];
  for (const entry of entries) {
    if (entry.chain_id !== genesis.chain_id || entry.network_id !== genesis.network_id) {
      throw new Error(
        `the entry of ${entry.address} is for chain ${entry.chain_id} (network ${entry.network_id}); this genesis is chain ${genesis.chain_id} (network ${genesis.network_id})`,
      );
    }
    const validator = genesis.validators.find((v) => v.address === entry.address);
    const account = genesis.accounts.find((a) => a.address === entry.address);
    if (validator !== undefined) {
      if (validator.stake === entry.stake && account?.balance === entry.balance) continue; // added before
      throw new Error(
        `${entry.address} is already a validator of this genesis with stake ${validator.stake}`,
      );
    }
    if (account !== undefined)
      throw new Error(`${entry.address} already has a genesis account (balance ${account.balance})`);
    genesis.validators.push({ address: entry.address, stake: entry.stake });
    genesis.accounts.push({ address: entry.address, balance: entry.balance });
    added.push(entry.address);
  }
  const checked = parseGenesis(genesis); // the same checks start applies (limits, duplicates)
  saveGenesis(home, checked);
  return { genesis: checked, added };
}

/**
 * Puts a shared genesis into a home. Refused: another chain id than the home was initialised for;
 * a home initialised as a validator (it has a validator entry) whose validator the genesis lacks,
 * unless `asFullNode`; or, on a home that already made block 0, a genesis whose block 0 differs.
 * Returns the genesis, its block 0 hash, and whether the home's validator is in it.
 */
export function installGenesis(
  home: string,
  file: string,
  options: { asFullNode: boolean },
): { genesis: Genesis; hash: string; validates: boolean } {
  const genesis = readGenesisFile(file);
  const hash = genesisBlock(genesis).hash;
  if (existsSync(homePaths(home).genesis)) {
    const current = loadGenesis(home);
    if (current.chain_id !== genesis.chain_id || current.network_id !== genesis.network_id) {
      throw new Error(
        `${file} is chain ${genesis.chain_id} (network ${genesis.network_id}); ${home} was initialised for chain ${current.chain_id} (network ${current.network_id})`,
      );
    }
  }
  const stored = storedGenesisHash(home);
  if (stored !== undefined && stored !== hash) {
    throw new Error(`${file} makes block 0 ${hash}; ${home} already holds block 0 ${stored}: another chain`);
  }
  const entryFile = validatorEntryPath(home);
  const own = existsSync(entryFile) ? readValidatorEntry(entryFile) : undefined;
  const validates = own !== undefined && genesis.validators.some((v) => v.address === own.address);
  if (own !== undefined && !validates && !options.asFullNode) {
    throw new Error(
      `${file} does not list this home's validator ${own.address}: add its entry (${entryFile}) with genesis add-validator, or install with --as-full-node`,
    );
  }
  saveGenesis(home, genesis);
  return { genesis, hash, validates };
}

/**
 * Sets `[p2p] bootstrap` in the home's config.toml (the rest of the file is kept; comments are
 * not: the file is rewritten from its parsed form). Entries naming this node's own peer id are
 * left out, so the same list can be given to every host.
 */
export function setBootstrap(home: string, bootstrap: readonly string[], ownPeerId: string): string[] {
  const path = homePaths(home).config;
  const config = (existsSync(path) ? parseToml(readFileSync(path, "utf8")) : {}) as Record<
    string,
    Record<string, unknown>
  >;
  const peers = [...new Set(bootstrap)].filter((addr) => !addr.endsWith(`/p2p/${ownPeerId}`));
  config.p2p = { ...config.p2p, bootstrap: peers };
  saveConfig(home, config);
  return peers;
}
