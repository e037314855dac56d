/**
 * The peer for bench/ganache.ts: ganache (from bench/.peers) as its own process, started
 * programmatically on 127.0.0.1 with the given keys funded at genesis and its default mining
 * (eager instamine: a transaction is mined before its hash is returned).
 *
 * Usage: node --import tsx bench/ganacheServer.ts <port> <keys.json> <chainId>
 * keys.json: a JSON array of hex private keys (no 0x). Prints "listening <port>" when ready and
 * exits when its stdin closes (so it never outlives the bench), or on SIGTERM/SIGINT.
 */
import { readFileSync } from "node:fs";
import { peerRequire } from "./peers.ts";

interface GanacheServer {
  listen(port: number, host: string): Promise<void>;
  close(): Promise<void>;
}
interface Ganache {
  server(options: unknown): GanacheServer;
}

const port = Number(process.argv[2]);
const keysFile = process.argv[3];
const chainId = Number(process.argv[4]);
if (!Number.isInteger(port) || keysFile === undefined || !Number.isInteger(chainId)) {
  console.error("usage: ganacheServer.ts <port> <keys.json> <chainId>");
  process.exit(2);
}

const keys = JSON.parse(readFileSync(keysFile, "utf8")) as string[];
const ganache = peerRequire("ganache") as Ganache;
const server = ganache.server({
  wallet: {
    accounts: keys.map((key) => ({ secretKey: `0x${key}`, balance: `0x${(10n ** 21n).toString(16)}` })),
  },
  logging: { quiet: true },
  chain: { chainId },
});
await server.listen(port, "127.0.0.1");
console.log(`listening ${port}`);

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  void server.close().finally(() => process.exit(0));
  // ganache's close waits for open connections; the bench is done with them.
  setTimeout(() => process.exit(0), 2_000).unref();
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
process.stdin.on("end", stop);
process.stdin.resume();
