import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { isIP } from "node:net";
import { join, resolve } from "node:path";
import type { Genesis } from "../chain/index.ts";
import { bytesToHex, hexToBytes, isHex, isValidPrivateKey, privateKeyToAddress } from "../crypto/index.ts";
import {
  checkAnnounceAddrs,
  generateNodeKey,
  isLocalOnlyIp,
  listenMultiaddr,
  peerIdOf,
} from "../p2p/index.ts";
import {
  installGenesis,
  readGenesisFile,
  VALIDATOR_ENTRY_FORMAT,
  VALIDATOR_ENTRY_VERSION,
  type ValidatorEntry,
  validatorEntryPath,
} from "./genesisFlow.ts";
import { homePaths, saveConfig, saveGenesis, saveKey } from "./home.ts";
import { saveKeystoreFile } from "./keyring.ts";
import type { KeystoreV3 } from "./keystore.ts";
import { announcedAddrs, type NodeIdentity } from "./nodeIdentity.ts";
import type { P2pSettings } from "./options.ts";

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
  /** p2p listen host (default 127.0.0.1; 0.0.0.0 to be reached from other hosts). */
  p2pHost?: string | undefined;
  /** p2p.announce: what other nodes are told to dial. */
  announce?: readonly string[] | undefined;
  /** This validator's genesis stake and balance (its entry carries them). */
  stake?: number | undefined;
  balance?: number | undefined;
  /** Join an existing network: install this genesis instead of making one (no validator entry). */
  genesisFile?: string | undefined;
  /** p2p.bootstrap of the new home. */
  bootstrap?: readonly string[] | undefined;
}

export interface InitResult {
  address: string;
  peerId: string;
  /** Where other nodes reach this one (see nodeIdentity.ts). */
  identity: NodeIdentity;
  /** For a home with its own genesis: the entry to give whoever assembles the shared one. */
  entry?: ValidatorEntry;
  /** For a home that joined with --genesis: block 0's hash. */
  genesisHash?: string;
}

/**
 * A home for one node: config.toml, a validator key, a node key, and either a genesis in which
 * this validator is the only one, with its validator entry (validator-entry.json) for assembling
 * a shared genesis (genesisFlow.ts), or, with `genesisFile`, the genesis of a network to join.
 */
export function initHome(home: string, options: InitOptions): InitResult {
  if (existsSync(homePaths(home).genesis)) throw new Error(`${home} is already initialised`);
  // Checked before anything is written: a bad file must not leave a home with keys and no genesis.
  if (options.genesisFile !== undefined) readGenesisFile(options.genesisFile);
  const p2p = {
    host: options.p2pHost ?? "127.0.0.1",
    port: options.p2pPort,
    announce: checkAnnounceAddrs(options.announce ?? []),
  };
  const keyPath = homePaths(home).validatorKey;
  const validator = options.encryptedValidatorKey
    ? saveKeystoreFile(keyPath, options.encryptedValidatorKey)
    : saveKey(keyPath, newPrivateKey());
  const peerId = peerIdOf(loadOrCreateNodeKey(home));
  const identity = announcedAddrs(p2p, peerId);
  writeConfig(home, {
    name: options.name,
    rpcPort: options.rpcPort,
    p2p,
    bootstrap: [...(options.bootstrap ?? [])],
  });
  if (options.genesisFile !== undefined) {
    // The genesis decides the chain: --chain-id only names the chain of a home that makes its own.
    const { hash } = installGenesis(home, options.genesisFile, { asFullNode: true });
    return { address: validator.address, peerId, identity, genesisHash: hash };
  }
  const stake = options.stake ?? TESTNET_VALIDATOR_STAKE;
  const balance = options.balance ?? TESTNET_ACCOUNT_BALANCE;
  saveGenesis(home, {
    chain_id: options.chainId,
    network_id: options.networkId,
    genesis_time: Date.now(),
    accounts: [{ address: validator.address, balance }],
    validators: [{ address: validator.address, stake }],
    consensus: DEFAULT_CONSENSUS,
  });
  const entry: ValidatorEntry = {
    format: VALIDATOR_ENTRY_FORMAT,
    version: VALIDATOR_ENTRY_VERSION,
    chain_id: options.chainId,
    network_id: options.networkId,
    address: validator.address,
    stake,
    balance,
    peer_id: peerId,
    announce: identity.announce,
  };
  writeFileSync(validatorEntryPath(home), `${JSON.stringify(entry, null, 2)}\n`);
  return { address: validator.address, peerId, identity, entry };
}

/** The identity of an initialised home (its node key must exist: `init` writes it). */
export function homeIdentity(
  home: string,
  p2p: Pick<P2pSettings, "host" | "port" | "announce">,
): NodeIdentity {
  if (!existsSync(homePaths(home).nodeKey))
    throw new Error(`${home} has no node key: run chain-node init first`);
  return announcedAddrs(p2p, peerIdOf(loadOrCreateNodeKey(home)));
}

function writeConfig(
  home: string,
  config: {
    name: string;
    rpcPort: number;
    rpcHost?: string;
    p2p: { host: string; port: number; announce: readonly string[] };
    bootstrap: string[];
  },
): void {
  const p2p: Record<string, unknown> = {
    host: config.p2p.host,
    port: config.p2p.port,
    bootstrap: config.bootstrap,
  };
  if (config.p2p.announce.length > 0) p2p.announce = [...config.p2p.announce];
  saveConfig(home, {
    node: { name: config.name },
    rpc: { host: config.rpcHost ?? "127.0.0.1", port: config.rpcPort },
    p2p,
  });
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
  /**
   * One IP per node: node i lives on hosts[i] (same ports on every host: RPC basePort, p2p
   * basePort + 100), listens on 0.0.0.0 for p2p and on its IP for RPC, announces its IP, and
   * bootstraps from the others' IPs. Without: every node on 127.0.0.1 with its own ports.
   */
  hosts?: readonly string[] | undefined;
}

/**
 * N validator homes and M full-node homes sharing one genesis, each peered with all the others:
 * on 127.0.0.1, node i serves RPC on basePort + i and p2p on basePort + 100 + i; with `hosts`,
 * each node on its own host with the same ports.
 */
export function createTestnet(options: TestnetOptions): TestnetFile {
  const out = resolve(options.out);
  if (existsSync(join(out, "testnet.json"))) throw new Error(`${out} already holds a testnet`);
  const total = options.validators + options.fullNodes;
  const hosts = options.hosts;
  if (hosts !== undefined && hosts.length !== total) {
    throw new Error(`--hosts names ${hosts.length} addresses for ${total} nodes: give one per node`);
  }
  for (const ip of hosts ?? []) {
    if (isIP(ip) === 0 || isLocalOnlyIp(ip))
      throw new Error(`--hosts: ${ip} is not an address other hosts can reach`);
  }
  const spread = hosts === undefined ? 1 : 0; // on one host the ports differ; across hosts they agree
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
      ip: hosts?.[i] ?? "127.0.0.1",
      rpcPort: options.basePort + spread * i,
      p2pPort: options.basePort + 100 + spread * i,
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
      .map((peer) => `${listenMultiaddr(peer.ip, peer.p2pPort)}/p2p/${peer.peerId}`);
    const p2p =
      hosts === undefined
        ? { host: "127.0.0.1", port: node.p2pPort, announce: [] }
        : { host: "0.0.0.0", port: node.p2pPort, announce: [listenMultiaddr(node.ip, node.p2pPort)] };
    writeConfig(node.home, { name: node.name, rpcPort: node.rpcPort, rpcHost: node.ip, p2p, bootstrap });
  }
  const file: TestnetFile = {
    chain_id: genesis.chain_id,
    network_id: genesis.network_id,
    nodes: nodes.map((n) => ({
      name: n.name,
      home: n.home,
      rpc_url: `http://${n.ip.includes(":") ? `[${n.ip}]` : n.ip}:${n.rpcPort}`,
      p2p_port: n.p2pPort,
      address: n.address,
      validator: n.validator,
    })),
    accounts,
  };
  writeFileSync(join(out, "testnet.json"), `${JSON.stringify(file, null, 2)}\n`);
  return file;
}
