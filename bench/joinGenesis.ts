/**
 * The join bench's big genesis (bench/join.ts), bench/bigGenesis.ts's approach on a testnet: the
 * genesis `chain-node testnet` wrote (its validators, ten funded accounts, block time) plus `count`
 * random addresses with `balance` each, written compact into every home of the testnet (the same
 * bytes everywhere: each home holds its own genesis.json, and a node refuses peers whose genesis
 * hash differs). Run as its own process before any timing:
 *
 *   node --import tsx bench/joinGenesis.ts <testnet.json> <count> <balance>
 *
 * prints one JSON line {accounts, genesisBytes, ms}.
 */
import { randomBytes } from "node:crypto";
import { copyFileSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import type { Genesis } from "../src/chain/index.ts";
import { bytesToHex, toChecksumAddress } from "../src/crypto/index.ts";
import type { TestnetFile } from "../src/node/index.ts";

const [testnetPath, countArg, balanceArg] = process.argv.slice(2);
const count = Number(countArg);
const balance = Number(balanceArg);
if (testnetPath === undefined || !(count >= 0) || !(balance > 0)) {
  console.error("usage: joinGenesis.ts <testnet.json> <count> <balance>");
  process.exit(2);
}
const started = performance.now();
const testnet = JSON.parse(readFileSync(testnetPath, "utf8")) as TestnetFile;
const [first, ...others] = testnet.nodes.map((node) => join(node.home, "genesis.json"));
if (first === undefined) throw new Error(`${testnetPath} lists no nodes`);
const genesis = JSON.parse(readFileSync(first, "utf8")) as Genesis;
const bytes = randomBytes(20 * count);
for (let i = 0; i < count; i++) {
  // One at a time, no spread: a million arguments overflow the stack.
  genesis.accounts.push({
    address: toChecksumAddress(bytesToHex(bytes.subarray(i * 20, (i + 1) * 20))),
    balance,
  });
}
// Compact: the node parses whatever JSON it is given; pretty printing would double the file.
writeFileSync(first, JSON.stringify(genesis));
for (const path of others) copyFileSync(first, path);
console.log(
  JSON.stringify({
    accounts: genesis.accounts.length,
    genesisBytes: statSync(first).size,
    ms: Math.round(performance.now() - started),
  }),
);
