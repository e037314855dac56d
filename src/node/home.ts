import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { stringify as toToml } from "smol-toml";
import { type Genesis, parseGenesis } from "../chain/index.ts";
import { hexToBytes, isHex, isValidPrivateKey, privateKeyToAddress } from "../crypto/index.ts";

/** Files of a node home. */
export const homePaths = (home: string) => ({
  config: join(home, "config.toml"),
  genesis: join(home, "genesis.json"),
  keys: join(home, "keys"),
  validatorKey: join(home, "keys", "validator.json"),
  /** The libp2p identity of the node (not a validator key). */
  nodeKey: join(home, "keys", "node_key.json"),
  data: join(home, "data"),
  /** Every consensus message this validator signed, fsynced before it is sent. */
  signingLog: join(home, "data", "signing.jsonl"),
  /** Conflicting votes seen from other validators. */
  evidenceLog: join(home, "data", "evidence.jsonl"),
  /** Block 0's hash for genesis.json's digest (genesisCheck.ts): a cache, rebuilt when missing. */
  genesisCheck: join(home, "data", "genesis-check.json"),
});

export interface KeyFile {
  address: string;
  private_key: string;
}

export function loadGenesis(home: string): Genesis {
  const path = homePaths(home).genesis;
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new Error(`cannot read ${path}: ${(error as Error).message}`);
  }
  return parseGenesis(raw);
}

/** Writes a file whole or not at all: a crash leaves the old file or the new one, never half. */
export function writeAtomically(path: string, text: string): void {
  const temporary = `${path}.tmp-${process.pid}`;
  writeFileSync(temporary, text);
  renameSync(temporary, path);
}

export function saveGenesis(home: string, genesis: Genesis): void {
  mkdirSync(home, { recursive: true });
  writeAtomically(homePaths(home).genesis, `${JSON.stringify(genesis, null, 2)}\n`);
}

/** Writes the home's config.toml from its parsed form (atomically, like the genesis). */
export function saveConfig(home: string, config: Record<string, unknown>): void {
  mkdirSync(home, { recursive: true });
  writeAtomically(
    homePaths(home).config,
    `# chain-node configuration (docs/configuration.md)\n${toToml(config)}\n`,
  );
}

/** Writes a key file readable by its owner only. */
export function saveKey(path: string, privateKey: string): KeyFile {
  const key: KeyFile = { address: privateKeyToAddress(hexToBytes(privateKey)), private_key: privateKey };
  mkdirSync(join(path, ".."), { recursive: true, mode: 0o700 });
  writeFileSync(path, `${JSON.stringify(key, null, 2)}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
  return key;
}

/** The validator key of a home, checked against the address stored beside it. */
export function loadKey(path: string): { address: string; privateKey: Uint8Array } | undefined {
  if (!existsSync(path)) return undefined;
  const file = JSON.parse(readFileSync(path, "utf8")) as Partial<KeyFile>;
  const hex = file.private_key?.startsWith("0x") ? file.private_key : `0x${file.private_key ?? ""}`;
  if (!isHex(hex, 32) || !isValidPrivateKey(hexToBytes(hex)))
    throw new Error(`${path} holds no valid private key`);
  const privateKey = hexToBytes(hex);
  const address = privateKeyToAddress(privateKey);
  if (file.address !== undefined && file.address.toLowerCase() !== address.toLowerCase()) {
    throw new Error(`${path}: address ${file.address} does not match its key (${address})`);
  }
  return { address, privateKey };
}
