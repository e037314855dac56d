/**
 * The peer for bench/hardhat.ts: hardhat's `node` task (from bench/.peers) as its own process, on
 * 127.0.0.1, with the given keys funded at genesis and everything else at the defaults a developer
 * gets from `npx hardhat node`: automine (each transaction is mined into a block of its own before
 * its hash is returned) and its request log (written to `dir`/hardhat.log, see below). The task
 * runs through hardhat's library entry (`require("hardhat")` with HARDHAT_CONFIG), as
 * `hardhat node --config` would, without the CLI's telemetry prompt and its check that the
 * config's folder has hardhat installed.
 *
 * Usage: node --import tsx bench/hardhatServer.ts <port> <keys.json> <chainId> <dir>
 * keys.json: a JSON array of hex private keys (no 0x); a minimal hardhat.config.js is written into
 * `dir`. Prints "listening <port>" once the server answers `eth_chainId`, and exits when its stdin
 * closes (so it never outlives the bench), or on SIGTERM/SIGINT.
 */
import { mkdirSync, openSync, readFileSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { format } from "node:util";
import { peerRequire } from "./peers.ts";

interface HardhatRuntime {
  run(task: string, args: Record<string, unknown>): Promise<unknown>;
}

const port = Number(process.argv[2]);
const keysFile = process.argv[3];
const chainId = Number(process.argv[4]);
const dir = process.argv[5];
if (!Number.isInteger(port) || keysFile === undefined || !Number.isInteger(chainId) || dir === undefined) {
  console.error("usage: hardhatServer.ts <port> <keys.json> <chainId> <dir>");
  process.exit(2);
}

const keys = JSON.parse(readFileSync(keysFile, "utf8")) as string[];
const config = {
  networks: {
    hardhat: {
      chainId,
      accounts: keys.map((key) => ({ privateKey: `0x${key}`, balance: (10n ** 21n).toString() })),
    },
  },
};
mkdirSync(dir, { recursive: true });
const configFile = join(dir, "hardhat.config.js");
writeFileSync(configFile, `module.exports = ${JSON.stringify(config)};\n`);
process.env.HARDHAT_CONFIG = configFile;

// hardhat prints its request log with console.log, about eight lines per transaction. To a
// terminal or a pipe on Linux each is a synchronous write; here each is a synchronous write to a
// file, so hardhat pays the same per line, but no bench process reads the log through a pipe:
// doing so cost the bench about 20 % of a core in every hardhat run, counted as "other" CPU.
const logFd = openSync(join(dir, "hardhat.log"), "w");
console.log = (...args: unknown[]) => {
  writeSync(logFd, `${format(...args)}\n`);
};

const stop = () => process.exit(0);
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
process.stdin.on("end", stop);
process.stdin.resume();

const hardhat = peerRequire("hardhat") as HardhatRuntime;
// Resolves only when the server closes; a failure to start ends the process with the reason.
hardhat.run("node", { hostname: "127.0.0.1", port }).then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(`hardhat node failed: ${(error as Error).stack ?? String(error)}`);
    process.exit(1);
  },
);

// The task prints its own banner, but only the server answering says it is ready.
const deadline = Date.now() + 60_000;
for (;;) {
  try {
    const response = await fetch(`http://127.0.0.1:${port}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}',
    });
    const reply = (await response.json()) as { result?: string };
    if (Number(reply.result) === chainId) break;
  } catch {
    // not listening yet
  }
  if (Date.now() > deadline) {
    console.error(`hardhat node did not answer eth_chainId ${chainId} on port ${port} within 60 s`);
    process.exit(1);
  }
  await new Promise((resolve) => setTimeout(resolve, 100));
}
process.stdout.write(`listening ${port}\n`);
