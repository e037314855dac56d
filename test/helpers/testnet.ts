import { execFileSync } from "node:child_process";
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { readSigningLog, type SignedRecord } from "../../src/consensus/index.ts";
import type { TestnetFile } from "../../src/node/index.ts";
import { type NodeProcess, rpc, spawnNode } from "./process.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/**
 * A base port whose RPC (base + i) and p2p (base + 100 + i) ports are all free, below the kernel's
 * ephemeral range (32768–60999 on Linux): a port in it that is free now can become the local port
 * of an outgoing connection before the node that is to listen there starts (a CI run failed with
 * EADDRINUSE on a testnet's RPC port). Bases 200 apart, so two testnets of concurrent test files
 * never share a port.
 */
async function freeBase(nodes: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * 60) * 200;
    const ports = Array.from({ length: nodes }, (_, i) => [base + i, base + 100 + i]).flat();
    if ((await Promise.all(ports.map(portFree))).every(Boolean)) return base;
  }
  throw new Error("no free port range");
}

/** Consensus timeouts short enough for tests, long enough for a loaded 2-core machine. */
const TEST_CONSENSUS = `
[consensus]
timeout_propose_ms = 1500
timeout_propose_delta_ms = 500
timeout_vote_ms = 500
timeout_vote_delta_ms = 250
rebroadcast_ms = 1000
`;

/**
 * `chain-node testnet` in a temporary directory, and `chain-node start` processes for its nodes.
 * `stopAll` stops every process started and removes the directory.
 */
export class Testnet {
  readonly dir: string;
  readonly file: TestnetFile;
  private readonly running = new Map<number, NodeProcess>();

  private constructor(dir: string, file: TestnetFile) {
    this.dir = dir;
    this.file = file;
  }

  static async create(validators: number, fullNodes: number, blockTimeMs: number): Promise<Testnet> {
    const dir = mkdtempSync(join(tmpdir(), "chain-node-testnet-"));
    const base = await freeBase(validators + fullNodes);
    execFileSync(
      process.execPath,
      [
        "--import",
        "tsx",
        "src/cli/main.ts",
        "testnet",
        ...["--validators", String(validators), "--full-nodes", String(fullNodes)],
        ...["--out", dir, "--base-port", String(base), "--block-time", String(blockTimeMs)],
      ],
      { cwd: ROOT, stdio: "pipe" },
    );
    const file = JSON.parse(readFileSync(join(dir, "testnet.json"), "utf8")) as TestnetFile;
    for (const node of file.nodes) appendFileSync(join(node.home, "config.toml"), TEST_CONSENSUS);
    return new Testnet(dir, file);
  }

  url(index: number): string {
    const node = this.file.nodes[index];
    if (node === undefined) throw new Error(`no node ${index}`);
    return node.rpc_url;
  }

  /** `env` is added to the process's environment; `logLevel` defaults to warn. */
  async start(
    index: number,
    options: { env?: Record<string, string>; logLevel?: string } = {},
  ): Promise<NodeProcess> {
    const node = this.file.nodes[index];
    if (node === undefined) throw new Error(`no node ${index}`);
    const port = Number(new URL(node.rpc_url).port);
    const started = await spawnNode(
      ["start", "--home", node.home, "--log-level", options.logLevel ?? "warn"],
      port,
      60_000,
      options.env,
    );
    this.running.set(index, started);
    return started;
  }

  async stop(index: number): Promise<void> {
    await this.running.get(index)?.stop();
    this.running.delete(index);
  }

  async kill(index: number): Promise<void> {
    await this.running.get(index)?.kill();
    this.running.delete(index);
  }

  isRunning(index: number): boolean {
    return this.running.has(index);
  }

  head(index: number): Promise<number> {
    return rpc<number>(this.url(index), "chain_getRecentBlockNumber");
  }

  signingLog(index: number): SignedRecord[] {
    const node = this.file.nodes[index];
    if (node === undefined) return [];
    try {
      return readSigningLog(readFileSync(join(node.home, "data", "signing.jsonl"), "utf8"));
    } catch {
      return [];
    }
  }

  output(index: number): string {
    return this.running.get(index)?.output() ?? "";
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.running.values()].map((p) => p.stop()));
    this.running.clear();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
