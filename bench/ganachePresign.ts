/**
 * Pre-signed `eth_sendRawTransaction` request bodies for ganache (bench/ganache.ts), made before any
 * timing with @ethereumjs/tx from bench/.peers: legacy EIP-155 transfers of 1 wei, 21,000 gas at
 * 20 gwei, from the funded keys. Body i is sent by key i % keys and carries nonce floor(i / keys), so
 * consecutive bodies come from different senders and, sent in order, no nonce arrives before its
 * predecessor.
 *
 * Usage as a process: node --import tsx bench/ganachePresign.ts <keys.json> <from> <to> <chainId> <out.json>
 * writes the bodies of indices [from, to) as a JSON array of strings and prints one JSON line {count, ms}.
 */
import { closeSync, fsyncSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { peerRequire } from "./peers.ts";

interface SignedTx {
  serialize(): Uint8Array;
}
interface EthereumjsTx {
  createLegacyTx(
    data: Record<string, bigint | string>,
    opts: { common: unknown },
  ): { sign(key: Uint8Array): SignedTx };
}
interface EthereumjsCommon {
  Mainnet: unknown;
  createCustomCommon(config: { chainId: number }, base: unknown): unknown;
}

/** Where the transfers go: one account that is not a sender. */
export const SINK = `0x${"11".repeat(20)}`;
export const GAS_PRICE = 20n * 10n ** 9n;

export function presignRawTransfers(keys: string[], from: number, to: number, chainId: number): string[] {
  const { createLegacyTx } = peerRequire("@ethereumjs/tx") as EthereumjsTx;
  const { Mainnet, createCustomCommon } = peerRequire("@ethereumjs/common") as EthereumjsCommon;
  const common = createCustomCommon({ chainId }, Mainnet);
  const secrets = keys.map((key) => new Uint8Array(Buffer.from(key, "hex")));
  const bodies: string[] = [];
  for (let i = from; i < to; i++) {
    const key = secrets[i % secrets.length] as Uint8Array;
    const nonce = BigInt(Math.floor(i / secrets.length));
    const tx = createLegacyTx(
      { nonce, gasPrice: GAS_PRICE, gasLimit: 21_000n, to: SINK, value: 1n },
      { common },
    );
    const raw = Buffer.from(tx.sign(key).serialize()).toString("hex");
    bodies.push(
      JSON.stringify({ jsonrpc: "2.0", id: i + 1, method: "eth_sendRawTransaction", params: [`0x${raw}`] }),
    );
  }
  return bodies;
}

if (process.argv[1] !== undefined && import.meta.filename === process.argv[1]) {
  const [keysFile, fromArg, toArg, chainIdArg, out] = process.argv.slice(2);
  const from = Number(fromArg);
  const to = Number(toArg);
  const chainId = Number(chainIdArg);
  if (keysFile === undefined || out === undefined || !Number.isInteger(from) || !Number.isInteger(to)) {
    console.error("usage: ganachePresign.ts <keys.json> <from> <to> <chainId> <out.json>");
    process.exit(2);
  }
  const started = performance.now();
  const keys = JSON.parse(readFileSync(keysFile, "utf8")) as string[];
  const bodies = presignRawTransfers(keys, from, to, chainId);
  // fsync now, so that the write-back cannot land on the disk during the timed runs.
  const fd = openSync(out, "w");
  writeFileSync(fd, JSON.stringify(bodies));
  fsyncSync(fd);
  closeSync(fd);
  console.log(JSON.stringify({ count: bodies.length, ms: Math.round(performance.now() - started) }));
}
