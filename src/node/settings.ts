import { type Static, type TSchema, Type } from "@sinclair/typebox";
import { UNORDERED_TX_WINDOW_MS } from "../chain/index.ts";
import { MIN_RETAIN } from "../storage/index.ts";
import type { NodeOptions } from "./options.ts";

/**
 * Every configurable option, once: its place in config.toml (section and key), its schema, a
 * line of documentation, and where it lives in NodeOptions. The file schema, the environment
 * variables, `config show` and the docs check are all read off this table, so an option cannot
 * exist in one of them and be missing from another.
 *
 * Why this file is long: it is one table with an entry of about ten lines per setting (50 of
 * them); splitting it by section would spread the one list every tool reads over several files.
 */

export const CONFIG_SECTIONS = [
  "node",
  "rpc",
  "p2p",
  "consensus",
  "pool",
  "storage",
  "snapshot",
  "sync",
] as const;
export type ConfigSection = (typeof CONFIG_SECTIONS)[number];

export interface Setting<S extends TSchema = TSchema> {
  section: ConfigSection;
  key: string;
  schema: S;
  /** What it does, with its unit. */
  doc: string;
  get(options: NodeOptions): Static<S>;
  set(options: NodeOptions, value: Static<S>): void;
}

/** Keeps get/set typed by the schema. */
const setting = <S extends TSchema>(definition: Setting<S>): Setting => definition as unknown as Setting;

const Port = Type.Integer({ minimum: 0, maximum: 65535 });
const Positive = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
/** 0 (keep everything) or at least MIN_RETAIN. */
const Retention = Type.Union([
  Type.Literal(0),
  Type.Integer({ minimum: MIN_RETAIN, maximum: Number.MAX_SAFE_INTEGER }),
]);
const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
const LogLevel = Type.Union(LOG_LEVELS.map((level) => Type.Literal(level)));
const LogFormat = Type.Union([Type.Literal("json"), Type.Literal("pretty"), Type.Literal("auto")]);

export const SETTINGS: readonly Setting[] = [
  setting({
    section: "node",
    key: "name",
    schema: Type.String(),
    doc: "Node name reported by net_nodeInfo (default: the host name).",
    get: (o) => o.name,
    set: (o, v) => {
      o.name = v;
    },
  }),
  setting({
    section: "node",
    key: "location",
    schema: Type.String(),
    doc: "Free-form location reported by net_nodeInfo.",
    get: (o) => o.location,
    set: (o, v) => {
      o.location = v;
    },
  }),
  setting({
    section: "node",
    key: "log_level",
    schema: LogLevel,
    doc: "Least severe log level written: fatal, error, warn, info, debug, trace or silent.",
    get: (o) => o.logLevel,
    set: (o, v) => {
      o.logLevel = v;
    },
  }),
  setting({
    section: "node",
    key: "log_format",
    schema: LogFormat,
    doc: "json (one JSON object per line), pretty (for people), or auto: pretty when stderr is a terminal.",
    get: (o) => o.logFormat,
    set: (o, v) => {
      o.logFormat = v;
    },
  }),
  setting({
    section: "rpc",
    key: "host",
    schema: Type.String(),
    doc: "Address the JSON-RPC server binds; anything but loopback exposes it to the network.",
    get: (o) => o.rpc.host,
    set: (o, v) => {
      o.rpc.host = v;
    },
  }),
  setting({
    section: "rpc",
    key: "port",
    schema: Port,
    doc: "JSON-RPC port (also /health, /ready, /metrics); 0 picks a free one.",
    get: (o) => o.rpc.port,
    set: (o, v) => {
      o.rpc.port = v;
    },
  }),
  setting({
    section: "rpc",
    key: "max_body_bytes",
    schema: Positive,
    doc: "Largest request body, bytes; larger gets HTTP 413.",
    get: (o) => o.rpc.maxBodyBytes,
    set: (o, v) => {
      o.rpc.maxBodyBytes = v;
    },
  }),
  setting({
    section: "rpc",
    key: "max_batch_items",
    schema: Positive,
    doc: "Requests in one JSON-RPC batch, and entries of tx_list.",
    get: (o) => o.rpc.maxBatchItems,
    set: (o, v) => {
      o.rpc.maxBatchItems = v;
    },
  }),
  setting({
    section: "rpc",
    key: "max_response_bytes",
    schema: Positive,
    doc: "Largest serialized result of one call, and of one batch's results together, bytes; larger gets -32005 response_too_large.",
    get: (o) => o.rpc.maxResponseBytes,
    set: (o, v) => {
      o.rpc.maxResponseBytes = v;
    },
  }),
  setting({
    section: "rpc",
    key: "max_buffered_bytes",
    schema: Positive,
    doc: "Reply bytes held for HTTP clients that have not read them, all connections together; beyond, the connections behind longest are closed.",
    get: (o) => o.rpc.maxBufferedBytes,
    set: (o, v) => {
      o.rpc.maxBufferedBytes = v;
    },
  }),
  setting({
    section: "rpc",
    key: "headers_timeout_ms",
    schema: Positive,
    doc: "Time a client has to send a request's head (or anything, on a new connection), ms; then 408 and the connection is closed.",
    get: (o) => o.rpc.headersTimeoutMs,
    set: (o, v) => {
      o.rpc.headersTimeoutMs = v;
    },
  }),
  setting({
    section: "rpc",
    key: "request_timeout_ms",
    schema: Positive,
    doc: "Time a client has to send a whole request, head and body, ms; then 408 and the connection is closed.",
    get: (o) => o.rpc.requestTimeoutMs,
    set: (o, v) => {
      o.rpc.requestTimeoutMs = v;
    },
  }),
  setting({
    section: "rpc",
    key: "ws_max_connections",
    schema: Positive,
    doc: "Open WebSocket connections at /ws; one more is refused with HTTP 503.",
    get: (o) => o.rpc.wsMaxConnections,
    set: (o, v) => {
      o.rpc.wsMaxConnections = v;
    },
  }),
  setting({
    section: "rpc",
    key: "ws_max_subscriptions",
    schema: Positive,
    doc: "Subscriptions per WebSocket connection; one more gets -32005 too_many_subscriptions.",
    get: (o) => o.rpc.wsMaxSubscriptions,
    set: (o, v) => {
      o.rpc.wsMaxSubscriptions = v;
    },
  }),
  setting({
    section: "rpc",
    key: "ws_max_buffered_bytes",
    schema: Positive,
    doc: "Bytes queued to a slow WebSocket client before it is disconnected.",
    get: (o) => o.rpc.wsMaxBufferedBytes,
    set: (o, v) => {
      o.rpc.wsMaxBufferedBytes = v;
    },
  }),
  setting({
    section: "rpc",
    key: "ws_max_in_flight",
    schema: Positive,
    doc: "Messages of one WebSocket connection answered at once; beyond, the node stops reading it.",
    get: (o) => o.rpc.wsMaxInFlight,
    set: (o, v) => {
      o.rpc.wsMaxInFlight = v;
    },
  }),
  setting({
    section: "rpc",
    key: "max_block_range",
    schema: Positive,
    doc: "Blocks per chain_getBlocks / chain_getBlockHeaders call (inclusive from..to).",
    get: (o) => o.rpc.maxBlockRange,
    set: (o, v) => {
      o.rpc.maxBlockRange = v;
    },
  }),
  setting({
    section: "rpc",
    key: "max_value_leaves",
    schema: Positive,
    doc: "Leaves chain_getValue rebuilds one value from; a larger subtree gets -32005 response_too_large.",
    get: (o) => o.rpc.maxValueLeaves,
    set: (o, v) => {
      o.rpc.maxValueLeaves = v;
    },
  }),
  setting({
    section: "rpc",
    key: "max_proof_leaves",
    schema: Positive,
    doc: "Leaves chain_getProof proves in one answer; a larger subtree gets -32005 response_too_large.",
    get: (o) => o.rpc.maxProofLeaves,
    set: (o, v) => {
      o.rpc.maxProofLeaves = v;
    },
  }),
  setting({
    section: "rpc",
    key: "cors",
    schema: Type.Boolean(),
    doc: "Send permissive CORS headers, so browser pages of any origin may call the node (always on for dev).",
    get: (o) => o.rpc.cors,
    set: (o, v) => {
      o.rpc.cors = v;
    },
  }),
  setting({
    section: "rpc",
    key: "metrics",
    schema: Type.Boolean(),
    doc: "Serve Prometheus metrics at GET /metrics on the RPC port (404 when off).",
    get: (o) => o.metrics,
    set: (o, v) => {
      o.metrics = v;
    },
  }),
  setting({
    section: "p2p",
    key: "host",
    schema: Type.String(),
    doc: "Address the peer-to-peer listener binds.",
    get: (o) => o.p2p.host,
    set: (o, v) => {
      o.p2p.host = v;
    },
  }),
  setting({
    section: "p2p",
    key: "port",
    schema: Port,
    doc: "Peer-to-peer TCP port.",
    get: (o) => o.p2p.port,
    set: (o, v) => {
      o.p2p.port = v;
    },
  }),
  setting({
    section: "p2p",
    key: "bootstrap",
    schema: Type.Array(Type.String()),
    doc: "Static peers to dial: multiaddrs ending in /p2p/<peer id> (environment: comma-separated).",
    get: (o) => o.p2p.bootstrap,
    set: (o, v) => {
      o.p2p.bootstrap = v;
    },
  }),
  setting({
    section: "p2p",
    key: "announce",
    schema: Type.Array(Type.String()),
    doc: "Addresses other nodes are told to dial this one at (identify, peer exchange): multiaddrs such as /ip4/203.0.113.7/tcp/26656 or /dns4/node0.example.org/tcp/26656, without /p2p (environment: comma-separated). Empty: the listen addresses, without loopback or unspecified ones unless the node itself listens on loopback.",
    get: (o) => o.p2p.announce,
    set: (o, v) => {
      o.p2p.announce = v;
    },
  }),
  setting({
    section: "p2p",
    key: "max_peers",
    schema: Positive,
    doc: "Most connected peers.",
    get: (o) => o.p2p.maxPeers,
    set: (o, v) => {
      o.p2p.maxPeers = v;
    },
  }),
  setting({
    section: "p2p",
    key: "max_message_bytes",
    schema: Positive,
    doc: "Largest gossip message or block-range response, bytes.",
    get: (o) => o.p2p.maxMessageBytes,
    set: (o, v) => {
      o.p2p.maxMessageBytes = v;
    },
  }),
  setting({
    section: "p2p",
    key: "sync_batch",
    schema: Positive,
    doc: "Blocks per sync request, and most blocks served per request.",
    get: (o) => o.p2p.syncBatch,
    set: (o, v) => {
      o.p2p.syncBatch = v;
    },
  }),
  setting({
    section: "consensus",
    key: "timeout_propose_ms",
    schema: Positive,
    doc: "Wait for a round's proposal, ms (round 0).",
    get: (o) => o.consensus.proposeMs,
    set: (o, v) => {
      o.consensus.proposeMs = v;
    },
  }),
  setting({
    section: "consensus",
    key: "timeout_propose_delta_ms",
    schema: Positive,
    doc: "Added to the propose timeout per round, ms.",
    get: (o) => o.consensus.proposeDeltaMs,
    set: (o, v) => {
      o.consensus.proposeDeltaMs = v;
    },
  }),
  setting({
    section: "consensus",
    key: "timeout_vote_ms",
    schema: Positive,
    doc: "After +2/3 of any prevotes or precommits, wait for a decisive +2/3, ms (round 0).",
    get: (o) => o.consensus.voteMs,
    set: (o, v) => {
      o.consensus.voteMs = v;
    },
  }),
  setting({
    section: "consensus",
    key: "timeout_vote_delta_ms",
    schema: Positive,
    doc: "Added to the vote timeout per round, ms.",
    get: (o) => o.consensus.voteDeltaMs,
    set: (o, v) => {
      o.consensus.voteDeltaMs = v;
    },
  }),
  setting({
    section: "consensus",
    key: "busy_block_time_percent",
    schema: Type.Integer({ minimum: 1, maximum: 100 }),
    doc: "While transactions wait, a proposer proposes after this percent of the block time (100: always the whole block time); an idle chain makes a block per block time.",
    get: (o) => o.consensus.busyBlockPercent,
    set: (o, v) => {
      o.consensus.busyBlockPercent = v;
    },
  }),
  setting({
    section: "consensus",
    key: "rebroadcast_ms",
    schema: Positive,
    doc: "Re-send this validator's proposal and votes of an undecided height this often, ms.",
    get: (o) => o.consensus.rebroadcastMs,
    set: (o, v) => {
      o.consensus.rebroadcastMs = v;
    },
  }),
  setting({
    section: "pool",
    key: "verify_threads",
    schema: Type.Integer({ minimum: 0, maximum: 64 }),
    doc: "Worker threads that check transaction signatures (0: on the event loop). Default: the number of cores.",
    get: (o) => o.verifyThreads,
    set: (o, v) => {
      o.verifyThreads = v;
    },
  }),
  setting({
    section: "pool",
    key: "max_txs",
    schema: Positive,
    doc: "Pending transactions the pool holds; more get pool_full.",
    get: (o) => o.pool.maxPoolTxs,
    set: (o, v) => {
      o.pool.maxPoolTxs = v;
    },
  }),
  setting({
    section: "pool",
    key: "max_txs_per_account",
    schema: Positive,
    doc: "Pending transactions of one sender; more get account_pool_full.",
    get: (o) => o.pool.maxPoolTxsPerAccount,
    set: (o, v) => {
      o.pool.maxPoolTxsPerAccount = v;
    },
  }),
  setting({
    section: "pool",
    key: "replay_window_ms",
    // Blocks take an unordered transaction only within the chain's fixed window of the block's
    // time; a wider admission window would fill the pool with transactions no block may take.
    schema: Type.Integer({ minimum: 1, maximum: UNORDERED_TX_WINDOW_MS }),
    doc: `Unordered transactions (nonce -1): accepted timestamps lie within ± this of the node's clock, ms; at most the chain's window, ${UNORDERED_TX_WINDOW_MS}.`,
    get: (o) => o.pool.replayWindowMs,
    set: (o, v) => {
      o.pool.replayWindowMs = v;
    },
  }),
  setting({
    section: "storage",
    key: "retain_states",
    schema: Retention,
    doc: `Recent states whose trie nodes are kept (the head's included); older ones are pruned a bounded amount per block. 0 keeps every state (archive); otherwise at least ${MIN_RETAIN}.`,
    get: (o) => o.storage.retainStates,
    set: (o, v) => {
      o.storage.retainStates = v;
    },
  }),
  setting({
    section: "storage",
    key: "retain_blocks",
    schema: Retention,
    doc: `Recent blocks kept with their transactions (the head's included; block 0 always). 0 keeps every block; otherwise at least ${MIN_RETAIN}.`,
    get: (o) => o.storage.retainBlocks,
    set: (o, v) => {
      o.storage.retainBlocks = v;
    },
  }),
  setting({
    section: "storage",
    key: "write_thread",
    schema: Type.Union([Type.Boolean(), Type.Literal("auto")]),
    doc: "Write blocks on a thread of the store's own, so that reads and submissions are answered during a block's write (more CPU per block); \"auto\": on for a dev node, off for a network node (docs/decisions/018-block-writer-thread.md).",
    get: (o) => o.storage.writeThread,
    set: (o, v) => {
      o.storage.writeThread = v;
    },
  }),
  setting({
    section: "storage",
    key: "trie_thread",
    schema: Type.Union([Type.Boolean(), Type.Literal("auto")]),
    doc: "Keep the state's Merkle-Patricia trie on a thread of its own, which applies and hashes each block's changes while the event loop admits and answers reads (a copy of each block's changes and trie write); \"auto\": on for a dev node, off for a network node (docs/decisions/024-trie-thread.md).",
    get: (o) => o.storage.trieThread,
    set: (o, v) => {
      o.storage.trieThread = v;
    },
  }),
  setting({
    section: "snapshot",
    key: "interval",
    schema: Type.Integer({ minimum: 0, maximum: 0xffffffff }),
    doc: "Take a state snapshot after each block whose height is a multiple of this, into data/snapshots/; 0: none.",
    get: (o) => o.snapshot.interval,
    set: (o, v) => {
      o.snapshot.interval = v;
    },
  }),
  setting({
    section: "snapshot",
    key: "keep",
    schema: Positive,
    doc: "Periodic snapshots kept; older ones are deleted once a new one is complete.",
    get: (o) => o.snapshot.keep,
    set: (o, v) => {
      o.snapshot.keep = v;
    },
  }),
  setting({
    section: "sync",
    key: "state_sync",
    schema: Type.Boolean(),
    doc: "Join from a peer's snapshot when the home holds no chain data (network nodes); needs trust_height and trust_hash.",
    get: (o) => o.sync.stateSync,
    set: (o, v) => {
      o.sync.stateSync = v;
    },
  }),
  setting({
    section: "sync",
    key: "trust_height",
    schema: Type.Integer({ minimum: 0, maximum: 0xffffffff }),
    doc: "Height of the block the operator trusts; state sync takes a snapshot at or above it, reached from it by hashes.",
    get: (o) => o.sync.trustHeight,
    set: (o, v) => {
      o.sync.trustHeight = v;
    },
  }),
  setting({
    section: "sync",
    key: "trust_hash",
    schema: Type.String({ pattern: "^(0x[0-9a-fA-F]{64})?$" }),
    doc: "Hash of that block (0x + 64 hex), from a source the operator trusts (a block explorer, another operator, their own node).",
    get: (o) => o.sync.trustHash,
    set: (o, v) => {
      o.sync.trustHash = v;
    },
  }),
  setting({
    section: "sync",
    key: "chunk_fetchers",
    schema: Type.Integer({ minimum: 1, maximum: 64 }),
    doc: "Snapshot chunk requests in flight at once during state sync, spread over the peers that offer it.",
    get: (o) => o.sync.chunkFetchers,
    set: (o, v) => {
      o.sync.chunkFetchers = v;
    },
  }),
];

/** `CHAIN_NODE_<SECTION>_<KEY>`, e.g. CHAIN_NODE_RPC_PORT. */
export const envName = (s: Pick<Setting, "section" | "key">): string =>
  `CHAIN_NODE_${s.section}_${s.key}`.toUpperCase();

/** `section.key`, the id used in messages and in `config show --json` sources. */
export const settingId = (s: Pick<Setting, "section" | "key">): string => `${s.section}.${s.key}`;
