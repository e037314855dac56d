/**
 * Pre-signed `chain_sendSignedTransaction` request bodies for the admission run, made before any
 * timing starts. Each one comes from a fresh random secp256k1 key (so every transaction has its own
 * sender and no per-account pool limit or nonce order is involved) and writes under the sender's own
 * `/users/<address>` path, which needs no balance. Nonce -1 (unordered) with the current timestamp:
 * valid for the node's replay window (±1 h by default), deduplicated by hash.
 *
 * Usage as a process: node --import tsx bench/presign.ts <count> <out.json> [chainId] [perCall]
 * writes a JSON array of request bodies (strings) and prints one JSON line {count, ms}. With
 * perCall > 1 each body is a `chain_sendSignedTransactionBatch` of perCall transactions; with
 * perCall `objects` the file holds the `{signature, transaction}` objects (bench/netLoad.ts sends those).
 */
import { randomBytes } from "node:crypto";
import { closeSync, fsyncSync, openSync, writeFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { isValidPrivateKey, privateKeyToAddress, signObject } from "../src/crypto/index.ts";

/** `count` transactions as `{signature, transaction}` objects (the params of each body). */
function presignUserWriteObjects(count: number, chainId: number): unknown[] {
  return presignUserWrites(count, chainId).map((body) => (JSON.parse(body) as { params: unknown }).params);
}

/** `count` transactions as `chain_sendSignedTransactionBatch` bodies of `perCall` each. */
export function presignUserWriteBatches(count: number, chainId: number, perCall: number): string[] {
  const params = presignUserWriteObjects(count, chainId);
  const bodies: string[] = [];
  for (let i = 0; i < params.length; i += perCall) {
    bodies.push(
      JSON.stringify({
        jsonrpc: "2.0",
        id: bodies.length + 1,
        method: "chain_sendSignedTransactionBatch",
        params: { tx_list: params.slice(i, i + perCall) },
      }),
    );
  }
  return bodies;
}

export function presignUserWrites(count: number, chainId: number, idBase = 1): string[] {
  const bodies: string[] = [];
  const timestamp = Date.now();
  while (bodies.length < count) {
    const key = new Uint8Array(randomBytes(32));
    if (!isValidPrivateKey(key)) continue;
    const address = privateKeyToAddress(key);
    const transaction = {
      nonce: -1,
      timestamp,
      operation: { type: "SET_VALUE", ref: `/users/${address}/bench`, value: bodies.length },
    };
    const signature = signObject(transaction, key, chainId);
    bodies.push(
      JSON.stringify({
        jsonrpc: "2.0",
        id: idBase + bodies.length,
        method: "chain_sendSignedTransaction",
        params: { signature, transaction },
      }),
    );
  }
  return bodies;
}

if (process.argv[1] !== undefined && import.meta.filename === process.argv[1]) {
  const count = Number(process.argv[2]);
  const out = process.argv[3];
  const chainId = Number(process.argv[4] ?? "100");
  const objects = process.argv[5] === "objects";
  const perCall = objects ? 1 : Number(process.argv[5] ?? "1");
  if (!Number.isInteger(count) || out === undefined) {
    console.error("usage: presign.ts <count> <out.json> [chainId] [perCall | objects]");
    process.exit(2);
  }
  const started = performance.now();
  // fsync now, so that the write-back of these tens of MB cannot land on the disk during the timed
  // runs, where it would compete with the node's journal writes to the same disk.
  const fd = openSync(out, "w");
  const bodies = objects
    ? presignUserWriteObjects(count, chainId)
    : perCall > 1
      ? presignUserWriteBatches(count, chainId, perCall)
      : presignUserWrites(count, chainId);
  writeFileSync(fd, JSON.stringify(bodies));
  fsyncSync(fd);
  closeSync(fd);
  console.log(JSON.stringify({ count, ms: Math.round(performance.now() - started) }));
}
