import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Genesis } from "../../src/chain/index.ts";
import { canonicalJson, type DerivedAccount, hexToBytes, signObject } from "../../src/crypto/index.ts";
import {
  ChainNode,
  createLogger,
  defaultNodeOptions,
  devAccounts,
  devGenesis,
  type NodeOptions,
} from "../../src/node/index.ts";

export interface JsonRpcReply {
  jsonrpc: "2.0";
  id: number | string | null;
  result?: unknown;
  error?: { code: number; message: string; data?: Record<string, unknown> };
}

export interface TestNode {
  url: string;
  home: string;
  genesis: Genesis;
  accounts: DerivedAccount[];
  node: ChainNode;
  /** One JSON-RPC call; resolves to the whole reply (result or error). */
  call(method: string, params?: unknown): Promise<JsonRpcReply>;
  /** One call that must succeed; returns its result. */
  result<T = unknown>(method: string, params?: unknown): Promise<T>;
  /** Raw POST of a body string; returns status, headers and parsed JSON (if any). */
  post(body: string, headers?: Record<string, string>, path?: string): Promise<RawReply>;
  /** Stops the node and removes its home. */
  stop(): Promise<void>;
}

export interface RawReply {
  status: number;
  headers: Headers;
  text: string;
  json: unknown;
}

export interface TestNodeOverrides {
  blockTimeMs?: number;
  pool?: Partial<NodeOptions["pool"]>;
  rpc?: Partial<NodeOptions["rpc"]>;
  /** Serve GET /metrics. */
  metrics?: boolean;
  /** Retention ([storage]); by default the node's. */
  storage?: Partial<NodeOptions["storage"]>;
  /** Reuse a home (restart tests); by default a fresh temporary one. */
  home?: string;
  keepHome?: boolean;
  genesis?: (genesis: Genesis) => Genesis;
  /** Test knobs (src/faults), as the CHAIN_NODE_TEST_* variables set them. */
  faults?: Partial<NodeOptions["faults"]>;
}

let nextId = 1;

/**
 * Starts an in-process dev node (chain id 100, ten funded accounts, account 0 validates) on a
 * free 127.0.0.1 port with a temporary home. Register `stop` as teardown right after this call.
 */
export async function startTestNode(overrides: TestNodeOverrides = {}): Promise<TestNode> {
  const home = overrides.home ?? mkdtempSync(join(tmpdir(), "chain-node-test-"));
  const accounts = devAccounts();
  const base = devGenesis(accounts, 1_700_000_000_000);
  const genesis = overrides.genesis ? overrides.genesis(base) : base;
  const options = defaultNodeOptions(home);
  options.rpc = { ...options.rpc, port: 0, ...overrides.rpc };
  options.pool = { ...options.pool, ...overrides.pool };
  options.blockTimeMs = overrides.blockTimeMs ?? 50;
  options.metrics = overrides.metrics ?? false;
  options.storage = { ...options.storage, ...overrides.storage };
  options.faults = { ...options.faults, ...overrides.faults };
  const validator = accounts[0] as DerivedAccount;
  const node = await ChainNode.start(
    options,
    genesis,
    { kind: "dev", validator: { address: validator.address, privateKey: hexToBytes(validator.privateKey) } },
    createLogger("silent"),
  );
  const url = node.rpcUrl;
  const post = async (body: string, headers: Record<string, string> = {}, path = "/"): Promise<RawReply> => {
    const response = await fetch(url + path, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body,
    });
    const text = await response.text();
    let json: unknown;
    try {
      json = text === "" ? undefined : JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: response.status, headers: response.headers, text, json };
  };
  const call = async (method: string, params?: unknown): Promise<JsonRpcReply> => {
    const request: Record<string, unknown> = { jsonrpc: "2.0", id: nextId++, method };
    if (params !== undefined) request.params = params;
    const reply = await post(JSON.stringify(request));
    return reply.json as JsonRpcReply;
  };
  return {
    url,
    home,
    genesis,
    accounts,
    node,
    call,
    async result<T>(method: string, params?: unknown): Promise<T> {
      const reply = await call(method, params);
      if (reply.error !== undefined) throw new Error(`${method} failed: ${JSON.stringify(reply.error)}`);
      return reply.result as T;
    },
    post,
    async stop() {
      await node.stop();
      if (overrides.keepHome !== true) rmSync(home, { recursive: true, force: true });
    },
  };
}

export interface TxBodyInput {
  nonce: number;
  timestamp?: number;
  operation: { type: string; ref: string; value: unknown };
  parent_tx_hash?: string;
}

/** Signs a body with a `0x` private key for a chain id (default the dev chain's 100). */
export function signTx(
  privateKey: string,
  body: TxBodyInput,
  chainId = 100,
): { signature: string; transaction: Record<string, unknown> } {
  const transaction: Record<string, unknown> = { timestamp: Date.now(), ...body };
  return { signature: signObject(transaction, hexToBytes(privateKey), chainId), transaction };
}

/** A transfer body from `from` to `to`. */
export function transferBody(
  from: string,
  to: string,
  amount: number,
  nonce: number,
  key = `k${nonce}-${Date.now()}`,
) {
  return {
    nonce,
    operation: { type: "SET_VALUE", ref: `/transfer/${from}/${to}/${key}/value`, value: amount },
  };
}

/** Polls `check` every 20 ms until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = 5000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export { canonicalJson };
