import { InvalidArgumentError, Option } from "commander";
import { applyConfig, defaultNodeOptions, loadConfig, type NodeOptions } from "../node/index.ts";

export interface CommonFlags {
  home: string;
  rpcHost?: string;
  rpcPort?: number;
  p2pPort?: number;
  logLevel?: NodeOptions["logLevel"];
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

/** Flags every node command takes (DESIGN.md §10). */
export function commonOptions(defaultHome: string): Option[] {
  return [
    new Option("--home <dir>", "node home (config.toml, genesis.json, keys, data)").default(defaultHome),
    new Option("--rpc-host <host>", "JSON-RPC listen address (default 127.0.0.1)"),
    new Option("--rpc-port <port>", "JSON-RPC port").argParser(parseIntFlag(0, 65535)),
    new Option("--p2p-port <port>", "peer-to-peer port").argParser(parseIntFlag(0, 65535)),
    new Option("--log-level <level>", "log level").choices([
      "fatal",
      "error",
      "warn",
      "info",
      "debug",
      "trace",
      "silent",
    ]),
  ];
}

/** Defaults, then the home's config.toml, then flags. */
export function resolveNodeOptions(flags: CommonFlags): NodeOptions {
  const options = applyConfig(defaultNodeOptions(flags.home), loadConfig(flags.home));
  if (flags.rpcHost !== undefined) options.rpc.host = flags.rpcHost;
  if (flags.rpcPort !== undefined) options.rpc.port = flags.rpcPort;
  if (flags.p2pPort !== undefined) options.p2p.port = flags.p2pPort;
  if (flags.logLevel !== undefined) options.logLevel = flags.logLevel;
  return options;
}
