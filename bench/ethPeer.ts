/**
 * What the scenarios against an Ethereum dev chain share (bench/ganache.ts, bench/hardhat.ts): the
 * peer installed on demand or the scenario skipped, the fresh sender keys funded at the peer's start,
 * their transfers pre-signed in two processes, the peer's server process (bench/<peer>Server.ts) and
 * what it has mined.
 */
import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isValidPrivateKey, privateKeyToAddress } from "../src/crypto/index.ts";
import type { BenchContext } from "./context.ts";
import { SINK } from "./ganachePresign.ts";
import { ensurePeers } from "./peers.ts";
import { type Child, freePort, post, runJson, spawnTs } from "./procs.ts";

/** The peer could not be installed or started: the bench reports it and goes on. */
export class PeerSkipped extends Error {}

/** Installs the peers into bench/.peers if needed; PeerSkipped with npm's reason when that fails. */
export async function needPeers(log: (message: string) => void): Promise<void> {
  const installFailure = await ensurePeers(log);
  if (installFailure !== undefined) throw new PeerSkipped(installFailure);
}

/**
 * `count` fresh random keys, written to `file` as a JSON array of hex strings (no 0x) for the peer
 * to fund and the signers to sign with; returns their addresses, in the same order.
 */
export function writeSenderKeys(count: number, file: string): string[] {
  const keys: Uint8Array[] = [];
  while (keys.length < count) {
    const key = new Uint8Array(randomBytes(32));
    if (isValidPrivateKey(key)) keys.push(key);
  }
  writeFileSync(file, JSON.stringify(keys.map((key) => Buffer.from(key).toString("hex"))));
  return keys.map((key) => privateKeyToAddress(key));
}

/**
 * Pre-signs transfers 0..count of bench/ganachePresign.ts (sender i % keys, nonce i / keys) in two
 * processes at once, then joins them into one file of request bodies. Resolves with its path.
 */
export async function presignPeerTransfers(
  ctx: BenchContext,
  tag: string,
  keysFile: string,
  count: number,
  chainId: number,
): Promise<string> {
  const bounds = [0, Math.ceil(count / 2), count];
  const parts = [1, 2].map((part) => join(ctx.tmp, `${tag}-txs-${part}.json`));
  await Promise.all(
    parts.map((file, i) =>
      runJson(`${tag} presign ${i + 1}`, [
        "bench/ganachePresign.ts",
        keysFile,
        String(bounds[i]),
        String(bounds[i + 1]),
        String(chainId),
        file,
      ]),
    ),
  );
  const joined = join(ctx.tmp, `${tag}-txs.json`);
  writeFileSync(
    joined,
    JSON.stringify(parts.flatMap((file) => JSON.parse(readFileSync(file, "utf8")) as string[])),
  );
  return joined;
}

/** Waits until the child prints `line` on stdout (or dies, or time runs out). */
async function waitForLine(c: Child, line: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!c.stdout().split("\n").includes(line)) {
    if (c.child.exitCode !== null || c.child.signalCode !== null) {
      throw new Error(`${c.name} exited before serving:\n${c.stderr()}\n${c.stdout()}`);
    }
    if (Date.now() > deadline) throw new Error(`${c.name} did not print "${line}" within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Starts a peer's server process (`<script> <port> ...args`, on a free 127.0.0.1 port) and waits
 * for its "listening <port>" line; PeerSkipped with the reason when it does not get there.
 */
export async function startPeer(
  label: string,
  script: string,
  args: string[],
): Promise<{ peer: Child; url: string }> {
  const port = await freePort();
  const peer = spawnTs(label, [script, String(port), ...args]);
  try {
    await waitForLine(peer, `listening ${port}`, 120_000);
  } catch (error) {
    await peer.stop();
    throw new PeerSkipped(`${label} did not start: ${(error as Error).message.slice(0, 500)}`);
  }
  return { peer, url: `http://127.0.0.1:${port}` };
}

async function rpc<T>(url: string, method: string, params: unknown[]): Promise<T> {
  const reply = await post(url, JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }));
  const json = JSON.parse(reply.text) as { result?: T };
  if (reply.status !== 200 || json.result === undefined) {
    throw new Error(`${method} answered ${reply.status}: ${reply.text.slice(0, 300)}`);
  }
  return json.result;
}

/**
 * Transfers the peer has mined from `senders` (the sum of their nonces), its head, and the sink's
 * balance (each transfer sends it 1 wei, so it equals the mined count when all went there).
 */
export async function minedTransfers(url: string, senders: string[]) {
  const batch = senders.map((address, i) => ({
    jsonrpc: "2.0",
    id: i + 1,
    method: "eth_getTransactionCount",
    params: [address, "latest"],
  }));
  const reply = await post(url, JSON.stringify(batch));
  const answers = JSON.parse(reply.text) as { result?: string }[];
  if (!Array.isArray(answers) || answers.length !== senders.length || answers.some((a) => !a.result)) {
    throw new Error(`eth_getTransactionCount batch answered ${reply.status}: ${reply.text.slice(0, 300)}`);
  }
  const mined = answers.reduce((sum, a) => sum + Number(a.result), 0);
  const head = Number(await rpc<string>(url, "eth_blockNumber", []));
  const sinkWei = Number(await rpc<string>(url, "eth_getBalance", [SINK, "latest"]));
  return { mined, head, sinkWei };
}
