/**
 * A dev home whose genesis funds `count` extra accounts (random addresses, each with `balance`)
 * beside the ten dev accounts, and a file of `chain_getBalance` request bodies for random ones of
 * them. Run as its own process before any timing:
 *
 *   node --import tsx bench/bigGenesis.ts <home> <count> <balance> <bodies.json> <bodyCount>
 *
 * prints one JSON line {accounts, genesisBytes, ms}.
 */
import { randomBytes } from "node:crypto";
import { statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { bytesToHex, toChecksumAddress } from "../src/crypto/index.ts";
import { devAccounts, devGenesis } from "../src/node/index.ts";

const [home, countArg, balanceArg, bodiesFile, bodyCountArg] = process.argv.slice(2);
const count = Number(countArg);
const balance = Number(balanceArg);
const bodyCount = Number(bodyCountArg);
if (home === undefined || bodiesFile === undefined || !(count > 0) || !(balance > 0) || !(bodyCount > 0)) {
  console.error("usage: bigGenesis.ts <home> <count> <balance> <bodies.json> <bodyCount>");
  process.exit(2);
}
const started = performance.now();
const addresses: string[] = [];
const bytes = randomBytes(20 * count);
for (let i = 0; i < count; i++) {
  addresses.push(toChecksumAddress(bytesToHex(bytes.subarray(i * 20, (i + 1) * 20))));
}
const genesis = devGenesis(devAccounts(), Date.now());
for (const address of addresses) genesis.accounts.push({ address, balance }); // no spread: 1M arguments overflow the stack
// Written compact: the node parses whatever JSON it is given; pretty printing would double the file.
const path = join(home, "genesis.json");
writeFileSync(path, JSON.stringify(genesis));
const bodies = Array.from({ length: bodyCount }, () =>
  JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "chain_getBalance",
    params: { address: addresses[Math.floor(Math.random() * count)] },
  }),
);
writeFileSync(bodiesFile, JSON.stringify(bodies));
console.log(
  JSON.stringify({
    accounts: genesis.accounts.length,
    genesisBytes: statSync(path).size,
    ms: Math.round(performance.now() - started),
  }),
);
