import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { stringify as toToml } from "smol-toml";
import type { Genesis } from "../chain/index.ts";
import { bytesToHex, hexToBytes, isHex, isValidPrivateKey, privateKeyToAddress } from "../crypto/index.ts";
import { generateNodeKey, peerIdOf } from "../p2p/index.ts";
import { homePaths, saveGenesis, saveKey } from "./home.ts";
import { saveKeystoreFile } from "./keyring.ts";
import type { KeystoreV3 } from "./keystore.ts";

/** Homes of a network: `init` (one node) and `testnet` (N validators + M full nodes on 127.0.0.1). */

const TESTNET_ACCOUNT_BALANCE = 1_000_000_000_000;
const TESTNET_VALIDATOR_STAKE = 1_000_000;
const TESTNET_MIN_VALIDATOR_STAKE = 100_000;

const DEFAULT_CONSENSUS: Genesis["consensus"] = {
  block_time_ms: 1000,
  min_validator_stake: TESTNET_MIN_VALIDATOR_STAKE,
  max_validators: 100,
  max_block_txs: 5000,
  max_block_bytes: 4 * 1024 * 1024,
  max_tx_bytes: 100 * 1024,
};

function newPrivateKey(): string {
  for (;;) {
    const key = randomBytes(32);
    if (isValidPrivateKey(key)) return bytesToHex(key);
  }
}

/** The node's libp2p identity, created on first use. */
export function loadOrCreateNodeKey(home: string): Uint8Array {
  const path = homePaths(home).nodeKey;
  if (existsSync(path)) {
    const file = JSON.parse(readFileSync(path, "utf8")) as { private_key?: string };
    if (typeof file.private_key !== "string" || !isHex(file.private_key)) {
      throw new Error(`${path} holds no node key`);
    }
    return hexToBytes(file.private_key);
  }
  const key = generateNodeKey();
  mkdirSync(join(path, ".."), { recursive: true, mode: 0o700 });
  writeFileSync(
    path,
    `${JSON.stringify({ peer_id: peerIdOf(key), private_key: bytesToHex(key) }, null, 2)}\n`,
    {
      mode: 0o600,
    },
  );
  chmodSync(path, 0o600);
  return key;
}

export interface InitOptions {
  chainId: number;
  networkId: 0 | 1;
  rpcPort: number;
  p2pPort: number;
  name: string;
  /** `init --encrypt-key`: written as keys/validator.json instead of a new plain key file. */
  encryptedValidatorKey?: KeystoreV3 | undefined;
}

/**
 * A home for one node: config.toml, a validator key, a node key, and a genesis in which this
 * validator is the only one (replace genesis.json to join another network).
 */
export function initHome(home: string, options: InitOptions): { address: string; peerId: string } {
  if (existsSync(homePaths(home).genesis)) throw new Error(`${home} is already initialised`);
  const keyPath = homePaths(home).validatorKey;
  const validator = options.encryptedValidatorKey
    ? saveKeystoreFile(keyPath, options.encryptedValidatorKey)
    : saveKey(keyPath, newPrivateKey());
  const nodeKey = loadOrCreateNodeKey(home);
  saveGenesis(home, {
    chain_id: options.chainId,
    network_id: options.networkId,
    genesis_time: Date.now(),
    accounts: [{ address: validator.address, balance: TESTNET_ACCOUNT_BALANCE }],
    validators: [{ address: validator.address, stake: TESTNET_VALIDATOR_STAKE }],
    consensus: DEFAULT_CONSENSUS,
  });
  writeConfig(home, {
    name: options.name,
    rpcPort: options.rpcPort,
    p2pPort: options.p2pPort,
    bootstrap: [],
  });
  return { address: validator.address, peerId: peerIdOf(nodeKey) };
}

function writeConfig(
  home: string,
  config: { name: string; rpcPort: number; p2pPort: number; bootstrap: string[] },
): void {
  const toml = toToml({
    node: { name: config.name },
    rpc: { host: "127.0.0.1", port: config.rpcPort },
    p2p: { host: "127.0.0.1", port: config.p2pPort, bootstrap: config.bootstrap },
  });
  writeFileSync(homePaths(home).config, `# chain-node configuration (docs/configuration.md)\n${toml}\n`);
}

export interface TestnetNode {
  name: string;
  home: string;
  rpc_url: string;
  p2p_port: number;
  address: string;
  validator: boolean;
}

/** testnet.json (DESIGN §10). */
export interface TestnetFile {
  chain_id: number;
  network_id: number;
  nodes: TestnetNode[];
  accounts: { address: string; private_key: string }[];
}

export interface TestnetOptions {
  validators: number;
  fullNodes: number;
  out: string;
  basePort: number;
  chainId: number;
  blockTimeMs: number;
}

/**
 * N validator homes and M full-node homes sharing one genesis, each peered with all the others
 * on 127.0.0.1: node i serves RPC on basePort + i and p2p on basePort + 100 + i.
 */
export function createTestnet(options: TestnetOptions): TestnetFile {
  const out = resolve(options.out);
  if (existsSync(join(out, "testnet.json"))) throw new Error(`${out} already holds a testnet`);
  const total = options.validators + options.fullNodes;
  const nodes = Array.from({ length: total }, (_, i) => {
    const name = `node${i}`;
    const home = join(out, name);
    const validator = i < options.validators;
    const key = saveKey(homePaths(home).validatorKey, newPrivateKey());
    const nodeKey = loadOrCreateNodeKey(home);
    return {
      name,
      home,
      validator,
      address: key.address,
      rpcPort: options.basePort + i,
      p2pPort: options.basePort + 100 + i,
      peerId: peerIdOf(nodeKey),
    };
  });
  const accounts = Array.from({ length: 10 }, () => {
    const privateKey = newPrivateKey();
    return { address: privateKeyToAddress(hexToBytes(privateKey)), private_key: privateKey };
  });
  const genesis: Genesis = {
    chain_id: options.chainId,
    network_id: 1,
    genesis_time: Date.now(),
    accounts: accounts.map((a) => ({ address: a.address, balance: TESTNET_ACCOUNT_BALANCE })),
    validators: nodes
      .filter((n) => n.validator)
      .map((n) => ({ address: n.address, stake: TESTNET_VALIDATOR_STAKE })),
    consensus: { ...DEFAULT_CONSENSUS, block_time_ms: options.blockTimeMs },
  };
  for (const node of nodes) {
    saveGenesis(node.home, genesis);
    const bootstrap = nodes
      .filter((peer) => peer !== node)
      .map((peer) => `/ip4/127.0.0.1/tcp/${peer.p2pPort}/p2p/${peer.peerId}`);
    writeConfig(node.home, { name: node.name, rpcPort: node.rpcPort, p2pPort: node.p2pPort, bootstrap });
  }
  const file: TestnetFile = {
    chain_id: genesis.chain_id,
    network_id: genesis.network_id,
    nodes: nodes.map((n) => ({
      name: n.name,
      home: n.home,
      rpc_url: `http://127.0.0.1:${n.rpcPort}`,
      p2p_port: n.p2pPort,
      address: n.address,
      validator: n.validator,
    })),
    accounts,
  };
  writeFileSync(join(out, "testnet.json"), `${JSON.stringify(file, null, 2)}\n`);
  return file;
}
