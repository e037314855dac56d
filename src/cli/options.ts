import { InvalidArgumentError, Option } from "commander";
import {
  defaultNodeOptions,
  envLayer,
  fileLayer,
  flagLayer,
  type NodeConfig,
  type NodeOptions,
  type ResolvedConfig,
  readTestFaults,
  resolveConfig,
  type Setting,
  settingId,
} from "../node/index.ts";

export interface CommonFlags {
  home: string;
  rpcHost?: string;
  rpcPort?: number;
  p2pPort?: number;
  p2pAnnounce?: string[];
  logLevel?: NodeOptions["logLevel"];
  logFormat?: NodeOptions["logFormat"];
  metrics?: boolean;
}

export function parseIntFlag(min: number, max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max) {
      throw new InvalidArgumentError(`expected an integer from ${min} to ${max}`);
    }
    return n;
  };
}

/** --log-level and --log-format: every command that logs takes them. */
export function logOptions(): Option[] {
  return [
    new Option("--log-level <level>", "log level").choices([
      "fatal",
      "error",
      "warn",
      "info",
      "debug",
      "trace",
      "silent",
    ]),
    new Option("--log-format <format>", "log lines: json, pretty, or auto (pretty on a terminal)").choices([
      "json",
      "pretty",
      "auto",
    ]),
  ];
}

/** Flags every node command takes (DESIGN.md §10). */
export function commonOptions(defaultHome: string): Option[] {
  return [
    new Option("--home <dir>", "node home (config.toml, genesis.json, keys, data)").default(defaultHome),
    new Option("--rpc-host <host>", "JSON-RPC listen address (default 127.0.0.1)"),
    new Option("--rpc-port <port>", "JSON-RPC port").argParser(parseIntFlag(0, 65535)),
    new Option("--p2p-port <port>", "peer-to-peer port").argParser(parseIntFlag(0, 65535)),
    new Option(
      "--p2p-announce <multiaddrs...>",
      "addresses other nodes are told to dial this one at (e.g. /ip4/203.0.113.7/tcp/26656)",
    ),
    ...logOptions(),
    new Option("--metrics", "serve Prometheus metrics at GET /metrics on the RPC port"),
  ];
}

/** Which setting each flag sets, and the flag's name for `config show`. */
const FLAG_SETTINGS: readonly { flag: keyof CommonFlags; name: string; id: string }[] = [
  { flag: "rpcHost", name: "--rpc-host", id: "rpc.host" },
  { flag: "rpcPort", name: "--rpc-port", id: "rpc.port" },
  { flag: "p2pPort", name: "--p2p-port", id: "p2p.port" },
  { flag: "p2pAnnounce", name: "--p2p-announce", id: "p2p.announce" },
  { flag: "logLevel", name: "--log-level", id: "node.log_level" },
  { flag: "logFormat", name: "--log-format", id: "node.log_format" },
  { flag: "metrics", name: "--metrics", id: "rpc.metrics" },
];

function flagsToConfig(flags: CommonFlags): NodeConfig {
  const config: NodeConfig = {};
  for (const { flag, id } of FLAG_SETTINGS) {
    const value = flags[flag];
    if (value === undefined) continue;
    const [section, key] = id.split(".") as [keyof NodeConfig, string];
    config[section] = { ...config[section], [key]: value };
  }
  return config;
}

const flagName = (setting: Setting): string =>
  FLAG_SETTINGS.find((f) => f.id === settingId(setting))?.name ?? "flags";

/**
 * Defaults, then the home's config.toml, then CHAIN_NODE_* variables, then flags; with sources.
 * Test faults come from their own CHAIN_NODE_TEST_* variables, never from the settings' layers.
 */
export function resolveConfigOf(flags: CommonFlags): ResolvedConfig {
  const resolved = resolveConfig(defaultNodeOptions(flags.home), [
    fileLayer(flags.home),
    envLayer(process.env),
    flagLayer(flagsToConfig(flags), flagName),
  ]);
  resolved.options.faults = readTestFaults(process.env);
  return resolved;
}

/** The options a node started with these flags runs with. */
export function resolveNodeOptions(flags: CommonFlags): NodeOptions {
  return resolveConfigOf(flags).options;
}
