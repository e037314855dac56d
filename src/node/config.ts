import { existsSync, readFileSync } from "node:fs";
import { type Static, Type } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { parse as parseToml } from "smol-toml";
import { homePaths } from "./home.ts";
import type { NodeOptions } from "./options.ts";

const Port = Type.Integer({ minimum: 0, maximum: 65535 });
const Positive = Type.Integer({ minimum: 1 });

/** config.toml: every key optional; flags override it. */
const ConfigSchema = Type.Object(
  {
    node: Type.Optional(
      Type.Object(
        {
          name: Type.Optional(Type.String()),
          location: Type.Optional(Type.String()),
          log_level: Type.Optional(
            Type.Union([
              Type.Literal("fatal"),
              Type.Literal("error"),
              Type.Literal("warn"),
              Type.Literal("info"),
              Type.Literal("debug"),
              Type.Literal("trace"),
              Type.Literal("silent"),
            ]),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    rpc: Type.Optional(
      Type.Object(
        {
          host: Type.Optional(Type.String()),
          port: Type.Optional(Port),
          max_body_bytes: Type.Optional(Positive),
          max_batch_items: Type.Optional(Positive),
          max_response_bytes: Type.Optional(Positive),
          max_block_range: Type.Optional(Positive),
          cors: Type.Optional(Type.Boolean()),
        },
        { additionalProperties: false },
      ),
    ),
    p2p: Type.Optional(
      Type.Object(
        {
          host: Type.Optional(Type.String()),
          port: Type.Optional(Port),
          bootstrap: Type.Optional(Type.Array(Type.String())),
          max_peers: Type.Optional(Positive),
          max_message_bytes: Type.Optional(Positive),
          sync_batch: Type.Optional(Positive),
        },
        { additionalProperties: false },
      ),
    ),
    consensus: Type.Optional(
      Type.Object(
        {
          timeout_propose_ms: Type.Optional(Positive),
          timeout_propose_delta_ms: Type.Optional(Positive),
          timeout_vote_ms: Type.Optional(Positive),
          timeout_vote_delta_ms: Type.Optional(Positive),
          rebroadcast_ms: Type.Optional(Positive),
        },
        { additionalProperties: false },
      ),
    ),
    pool: Type.Optional(
      Type.Object(
        {
          max_txs: Type.Optional(Positive),
          max_txs_per_account: Type.Optional(Positive),
          replay_window_ms: Type.Optional(Positive),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

export type NodeConfig = Static<typeof ConfigSchema>;
const configCheck = TypeCompiler.Compile(ConfigSchema);

/** Reads `config.toml` of a home (absent file: empty config); errors name the section and key. */
export function loadConfig(home: string): NodeConfig {
  const path = homePaths(home).config;
  if (!existsSync(path)) return {};
  let raw: unknown;
  try {
    raw = parseToml(readFileSync(path, "utf8"));
  } catch (error) {
    throw new Error(`${path}: ${(error as Error).message}`);
  }
  if (!configCheck.Check(raw)) {
    const first = configCheck.Errors(raw).First();
    const key = (first?.path ?? "").slice(1).replaceAll("/", ".");
    throw new Error(`${path}: ${key || "(top level)"}: ${first?.message ?? "invalid"}`);
  }
  return raw;
}

/** Applies a config file on top of the defaults (flags are applied after, by the CLI). */
export function applyConfig(options: NodeOptions, config: NodeConfig): NodeOptions {
  const { node = {}, rpc = {}, pool = {}, p2p = {}, consensus = {} } = config;
  return {
    ...options,
    name: node.name ?? options.name,
    location: node.location ?? options.location,
    logLevel: node.log_level ?? options.logLevel,
    rpc: {
      ...options.rpc,
      host: rpc.host ?? options.rpc.host,
      port: rpc.port ?? options.rpc.port,
      maxBodyBytes: rpc.max_body_bytes ?? options.rpc.maxBodyBytes,
      maxBatchItems: rpc.max_batch_items ?? options.rpc.maxBatchItems,
      maxResponseBytes: rpc.max_response_bytes ?? options.rpc.maxResponseBytes,
      maxBlockRange: rpc.max_block_range ?? options.rpc.maxBlockRange,
      cors: rpc.cors ?? options.rpc.cors,
    },
    p2p: {
      host: p2p.host ?? options.p2p.host,
      port: p2p.port ?? options.p2p.port,
      bootstrap: p2p.bootstrap ?? options.p2p.bootstrap,
      maxPeers: p2p.max_peers ?? options.p2p.maxPeers,
      maxMessageBytes: p2p.max_message_bytes ?? options.p2p.maxMessageBytes,
      syncBatch: p2p.sync_batch ?? options.p2p.syncBatch,
    },
    consensus: {
      proposeMs: consensus.timeout_propose_ms ?? options.consensus.proposeMs,
      proposeDeltaMs: consensus.timeout_propose_delta_ms ?? options.consensus.proposeDeltaMs,
      voteMs: consensus.timeout_vote_ms ?? options.consensus.voteMs,
      voteDeltaMs: consensus.timeout_vote_delta_ms ?? options.consensus.voteDeltaMs,
      rebroadcastMs: consensus.rebroadcast_ms ?? options.consensus.rebroadcastMs,
    },
    pool: {
      maxPoolTxs: pool.max_txs ?? options.pool.maxPoolTxs,
      maxPoolTxsPerAccount: pool.max_txs_per_account ?? options.pool.maxPoolTxsPerAccount,
      replayWindowMs: pool.replay_window_ms ?? options.pool.replayWindowMs,
    },
  };
}
