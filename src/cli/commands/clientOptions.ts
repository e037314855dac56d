import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type Command, InvalidArgumentError, Option } from "commander";
import { type Client, connect, RpcError } from "../../client/index.ts";
import { hexToBytes, isHex, isValidPrivateKey } from "../../crypto/index.ts";
import { unlockKey } from "../../node/index.ts";
import { resolveNodeOptions } from "../options.ts";
import { type PasswordFlags, passwordOptions, readPassword } from "../password.ts";

/**
 * What the client commands (`tx`, `balance`) share: where the node is, and which key signs.
 * They speak to a running node over JSON-RPC only, through the same client dApps use.
 */

const DEFAULT_RPC_URL = "http://127.0.0.1:8080";

export interface RpcFlags {
  rpcUrl: string;
  json?: boolean;
}

export interface KeyFlags extends PasswordFlags {
  home: string;
  key?: string;
  privateKeyFile?: string;
  privateKeyEnv?: string;
}

/** `fromHome`: the command also takes `--home`, whose config.toml names the default (rpcUrlFromHome). */
export function rpcOptions(fromHome = false): Option[] {
  const description = fromHome
    ? "JSON-RPC endpoint of the node; unset, the RPC that --home's config.toml names, else"
    : "JSON-RPC endpoint of the node";
  return [
    new Option("--rpc-url <url>", description).env("CHAIN_NODE_RPC_URL").default(DEFAULT_RPC_URL),
    new Option("--json", "print the result as JSON"),
  ];
}

/**
 * For commands that take both `--home` and `--rpc-url` (`tx`): without `--rpc-url` or
 * CHAIN_NODE_RPC_URL, a home with a config.toml names its own node's RPC, so an operator on a
 * validator host (RPC on 8545) does not have to repeat what the home already says; 8080 (`chain-node
 * dev`'s port) stays the default for a home without one.
 */
export function rpcUrlFromHome(command: Command): void {
  if (command.getOptionValueSource("rpcUrl") !== "default") return;
  const home = command.getOptionValue("home") as string | undefined;
  if (home === undefined || !existsSync(join(home, "config.toml"))) return;
  const { host, port } = resolveNodeOptions({ home }).rpc;
  command.setOptionValue("rpcUrl", `http://${dialableHost(host)}:${port}`);
}

/** Where a client on the same host reaches a server listening on `host`. */
function dialableHost(host: string): string {
  if (host === "0.0.0.0" || host === "") return "127.0.0.1";
  if (host === "::") return "[::1]";
  return host.includes(":") ? `[${host}]` : host;
}

/** The key that signs: a keystore of the home (`keys new|import`), or a raw key from a file or the environment. */
export function keyOptions(): Option[] {
  return [
    new Option("--home <dir>", "home whose keys/ holds --key").default(".chain-node/node"),
    new Option("--key <name>", "sign with the key <home>/keys/<name>.json").conflicts([
      "privateKeyFile",
      "privateKeyEnv",
    ]),
    new Option("--private-key-file <file>", "sign with the hex private key in FILE").conflicts(
      "privateKeyEnv",
    ),
    new Option("--private-key-env <var>", "sign with the hex private key in the environment variable VAR"),
    ...passwordOptions(),
  ];
}

export function parseAmount(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n <= 0) throw new InvalidArgumentError("expected a positive whole amount");
  return n;
}

/** The signing key the flags name; never read from argv, where `ps` and shell history see it. */
export async function signingKey(flags: KeyFlags): Promise<Uint8Array> {
  if (flags.key !== undefined) {
    const name = flags.key;
    return (await unlockKey(flags.home, name, () => readPassword(flags, `key "${name}"`))).privateKey;
  }
  let raw: string | undefined;
  let from: string;
  if (flags.privateKeyFile !== undefined) {
    from = flags.privateKeyFile;
    raw = readFileSync(from, "utf8").split(/\r?\n/)[0];
  } else if (flags.privateKeyEnv !== undefined) {
    from = `$${flags.privateKeyEnv}`;
    raw = process.env[flags.privateKeyEnv];
  } else {
    throw new Error("name the signing key: --key NAME, --private-key-file FILE or --private-key-env VAR");
  }
  const hex = raw?.trim().startsWith("0x") ? raw.trim() : `0x${raw?.trim() ?? ""}`;
  if (!isHex(hex, 32) || !isValidPrivateKey(hexToBytes(hex))) {
    throw new Error(`${from} does not hold a 32-byte hex private key`);
  }
  return hexToBytes(hex);
}

export const clientOf = (flags: RpcFlags): Client => connect(flags.rpcUrl);

/** One line for a node's refusal: the reason first, as scripts match on it. */
export function describeError(error: unknown): Error {
  if (error instanceof RpcError) {
    const detail = error.data === undefined ? "" : ` ${JSON.stringify(error.data)}`;
    return new Error(`${error.reason ?? `error ${error.code}`}: ${error.message}${detail}`);
  }
  return error instanceof Error ? error : new Error(String(error));
}
