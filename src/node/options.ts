import { hostname } from "node:os";
import { defaultRpcServerOptions, type RpcServerOptions } from "../rpc/index.ts";
import { defaultTxPoolOptions } from "../txpool/index.ts";

/** Every knob of a running node, composed from the layers' own options. */
export interface NodeOptions {
  /** The node's home: config.toml, genesis.json, keys/, data/. */
  home: string;
  rpc: RpcServerOptions;
  pool: typeof defaultTxPoolOptions;
  /** Overrides genesis's block time for block production (dev chain only). */
  blockTimeMs: number | undefined;
  logLevel: "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";
  name: string;
  location: string;
}

export function defaultNodeOptions(home: string): NodeOptions {
  return {
    home,
    rpc: { ...defaultRpcServerOptions },
    pool: { ...defaultTxPoolOptions },
    blockTimeMs: undefined,
    logLevel: "info",
    name: hostname(),
    location: "",
  };
}
