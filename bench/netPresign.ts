/**
 * Pre-signed transfers for the network scenarios, made in their own process before any timing.
 * Unordered (nonce -1) transfers of a small positive value between the ten funded accounts of a
 * `chain-node testnet` (keys from its testnet.json), round-robin over the senders, each with its
 * own transfer key (`/transfer/<from>/<to>/<tag><i>/value`), so every transaction is new to the
 * chain and no nonce order is involved.
 *
 * Usage as a process: node --import tsx bench/netPresign.ts <testnet.json> <count> <tag> <out.json>
 * writes a JSON array of `{signature, transaction}` objects and prints one JSON line {count, ms}.
 */
import { closeSync, fsyncSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { hexToBytes, signObject } from "../src/crypto/index.ts";
import type { TestnetFile } from "../src/node/index.ts";

export interface SignedTransfer {
  signature: string;
  transaction: Record<string, unknown>;
}

export function presignTransfers(testnet: TestnetFile, count: number, tag: string): SignedTransfer[] {
  const accounts = testnet.accounts.map((a) => ({ address: a.address, key: hexToBytes(a.private_key) }));
  if (accounts.length < 2) throw new Error("testnet.json lists fewer than two accounts");
  const timestamp = Date.now();
  const out: SignedTransfer[] = [];
  for (let i = 0; i < count; i++) {
    const from = accounts[i % accounts.length] as (typeof accounts)[number];
    // A different receiver each round, never the sender itself.
    const step = 1 + (Math.floor(i / accounts.length) % (accounts.length - 1));
    const to = accounts[(i + step) % accounts.length] as (typeof accounts)[number];
    const transaction = {
      nonce: -1,
      timestamp,
      operation: {
        type: "SET_VALUE",
        ref: `/transfer/${from.address}/${to.address}/${tag}${i}/value`,
        value: 1 + (i % 9),
      },
    };
    out.push({ signature: signObject(transaction, from.key, testnet.chain_id), transaction });
  }
  return out;
}

if (process.argv[1] !== undefined && import.meta.filename === process.argv[1]) {
  const [testnetPath, countArg, tag, out] = process.argv.slice(2);
  const count = Number(countArg);
  if (testnetPath === undefined || !Number.isInteger(count) || tag === undefined || out === undefined) {
    console.error("usage: netPresign.ts <testnet.json> <count> <tag> <out.json>");
    process.exit(2);
  }
  const started = performance.now();
  const testnet = JSON.parse(readFileSync(testnetPath, "utf8")) as TestnetFile;
  // fsync now: the write-back of these MB must not land on the disk during the timed phases.
  const fd = openSync(out, "w");
  writeFileSync(fd, JSON.stringify(presignTransfers(testnet, count, tag)));
  fsyncSync(fd);
  closeSync(fd);
  console.log(JSON.stringify({ count, ms: Math.round(performance.now() - started) }));
}
