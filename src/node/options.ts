import { availableParallelism, hostname } from "node:os";
import type { ConsensusTimeouts } from "../consensus/index.ts";
import { NO_TEST_FAULTS, type TestFaults } from "../faults/index.ts";
import { defaultP2pOptions } from "../p2p/index.ts";
import { defaultRpcServerOptions, type RpcServerOptions } from "../rpc/index.ts";
import { defaultRetention, type RetentionOptions } from "../storage/index.ts";
import { defaultTxPoolOptions } from "../txpool/index.ts";

/** Every knob of a running node, composed from the layers' own options. */
export interface NodeOptions {
  /** The node's home: config.toml, genesis.json, keys/, data/. */
  home: string;
  rpc: RpcServerOptions;
  pool: typeof defaultTxPoolOptions;
  /** Worker threads for transaction signature checks; 0 runs them on the event loop. */
  verifyThreads: number;
  /** Overrides genesis's block time for block production (dev chain only). */
  blockTimeMs: number | undefined;
  logLevel: "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";
  /** Log lines as JSON, human-readable, or pretty only when stderr is a terminal. */
  logFormat: "json" | "pretty" | "auto";
  /** Serve Prometheus metrics at GET /metrics on the RPC port. */
  metrics: boolean;
  name: string;
  location: string;
  p2p: P2pSettings;
  /** State sync: how a node without chain data joins from a snapshot (node/stateSyncStart.ts). */
  sync: StateSyncSettings;
  /**
   * How many recent states and blocks the data directory keeps (storage/pruning.ts), whether
   * blocks are written by the store's writer thread (docs/decisions/018-block-writer-thread.md),
   * and whether the state's trie is on a thread of its own (docs/decisions/024-trie-thread.md):
   * "auto" is on for a dev node and off for a network node (threadFor).
   */
  storage: RetentionOptions & { writeThread: ThreadSetting; trieThread: ThreadSetting };
  /** Round timeouts; the block time (commitMs) comes from genesis unless overridden. */
  consensus: ConsensusSettings;
  /** Periodic state snapshots (docs/operations.md, "Snapshots"). */
  snapshot: SnapshotSettings;
  /** Test-only faults (CHAIN_NODE_TEST_* variables, src/faults); none unless a test sets them. */
  faults: TestFaults;
}

export interface SnapshotSettings {
  /** Blocks between snapshots: one after each block whose height is a multiple; 0: none. */
  interval: number;
  /** Snapshots kept; the oldest beyond it are deleted. */
  keep: number;
}

export interface StateSyncSettings {
  /** Join from a peer's snapshot when the home holds no chain data (a network node only). */
  stateSync: boolean;
  /** The block the operator trusts, by height and hash (as in CometBFT). */
  trustHeight: number;
  trustHash: string;
  /** Chunk requests in flight at once, spread over the peers that offer the snapshot. */
  chunkFetchers: number;
}

export interface P2pSettings {
  host: string;
  port: number;
  /** Static peers: multiaddrs ending in /p2p/<peer id>. */
  bootstrap: string[];
  /** What other nodes are told to dial (multiaddrs without /p2p); empty: derived from the listen address. */
  announce: string[];
  maxPeers: number;
  /** Largest gossip message or block-range response, bytes (DESIGN §9). */
  maxMessageBytes: number;
  /** Blocks per sync request and per served response. */
  syncBatch: number;
}

/** p2p's own defaults (p2p/options.ts), and the port and sync batch the node adds. */
const defaultP2pSettings: P2pSettings = {
  host: defaultP2pOptions.host,
  port: 26656,
  bootstrap: [],
  announce: [],
  maxPeers: defaultP2pOptions.maxPeers,
  maxMessageBytes: defaultP2pOptions.maxMessageBytes,
  // One sync request asks for as many blocks as a peer serves in one answer.
  syncBatch: defaultP2pOptions.maxBlocksPerRequest,
};

/**
 * The round timeouts, and the block time while transactions wait as a percent of the block time
 * (ConsensusTimeouts.busyBlockMs; a percent, so that it follows `--block-time`).
 */
export type ConsensusSettings = Omit<ConsensusTimeouts, "commitMs" | "busyBlockMs"> & {
  busyBlockPercent: number;
};

/** CometBFT's defaults, scaled to blocks of about a second. */
export const defaultConsensusTimeouts: ConsensusSettings = {
  proposeMs: 3000,
  proposeDeltaMs: 500,
  voteMs: 1000,
  voteDeltaMs: 500,
  rebroadcastMs: 2000,
  // docs/decisions/016: half the block time cut the WAN's submit → committed median by ~0.3 s.
  busyBlockPercent: 50,
};

/** `storage.write_thread` and `storage.trie_thread`: on, off, or by the kind of node ("auto"). */
export type ThreadSetting = boolean | "auto";

/**
 * Whether a node of `kind` uses the thread a ThreadSetting names. "auto" is on for a dev node,
 * whose event loop then admits and answers reads meanwhile, and off for a network node: on a
 * machine shared by validators the copy to the thread costs more blocks than it frees
 * (docs/decisions/018-block-writer-thread.md, "Where it is on"; 024, "Network nodes").
 */
export function threadFor(setting: ThreadSetting, kind: "dev" | "network"): boolean {
  return setting === "auto" ? kind === "dev" : setting;
}

/** The engine's timeouts for a block time of `blockTimeMs`. */
export function consensusTimeouts(settings: ConsensusSettings, blockTimeMs: number): ConsensusTimeouts {
  const { busyBlockPercent, ...timeouts } = settings;
  return {
    ...timeouts,
    commitMs: blockTimeMs,
    busyBlockMs: Math.round((blockTimeMs * busyBlockPercent) / 100),
  };
}

export function defaultNodeOptions(home: string): NodeOptions {
  return {
    home,
    rpc: { ...defaultRpcServerOptions },
    pool: { ...defaultTxPoolOptions },
    verifyThreads: Math.min(availableParallelism(), 8),
    blockTimeMs: undefined,
    logLevel: "info",
    logFormat: "auto",
    metrics: false,
    name: hostname(),
    location: "",
    p2p: { ...defaultP2pSettings, bootstrap: [], announce: [] },
    storage: { ...defaultRetention, writeThread: "auto", trieThread: "auto" },
    sync: { stateSync: false, trustHeight: 0, trustHash: "", chunkFetchers: 4 },
    consensus: { ...defaultConsensusTimeouts },
    snapshot: { interval: 0, keep: 2 },
    faults: NO_TEST_FAULTS,
  };
}
