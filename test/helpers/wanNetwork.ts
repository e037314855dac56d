import { closeSync, fsyncSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { LatencyResult, NetLoadSpec, ThroughputResult } from "../../bench/netLoad.ts";
import { presignTransfers } from "../../bench/netPresign.ts";
import type { TestnetFile } from "../../src/node/index.ts";
import type { LinkChange } from "./delayProxy.ts";
import { type DelayProxyProcess, delayProxyCommand, startDelayProxyProcess } from "./delayProxyProcess.ts";
import { HostNetwork } from "./netns.ts";
import { outputLine, runCli } from "./process.ts";
import { waitFor } from "./testNode.ts";
import { type StepMeans, type StepTotals, stepMeans, stepTotalsOf } from "./consensusSteps.ts";
import { orUndefined, unixGet, unixRpc } from "./unixRpc.ts";

/**
 * Validators on separate hosts with a wide-area link between every two of them, for the WAN
 * test and bench (issue 19 item 4). Each validator runs in its own network namespace
 * (netns.ts); one more namespace is the client that sends the load. The homes come from
 * `chain-node testnet --hosts` (the same ports on every host).
 *
 * Every p2p byte between two hosts crosses a delay proxy (delayProxy.ts): a node listens on its
 * host's 127.0.0.1 only, and a proxy on the host's address forwards to it, holding each direction
 * for the one-way delay. The node announces the proxy's address (`p2p.announce`), as a node behind
 * a NAT's port forward does: the address peers dial is not one the node listens on. A connection
 * crosses exactly one proxy (the one before the node that accepted it), so each message between
 * two validators is delayed once. Validators 1… bootstrap from validator 0 only and find each other
 * by peer exchange. `setLink` changes every proxy's delay on the running network.
 *
 * The load is bench/netLoad.ts, run inside the client host against each validator's RPC over the
 * hosts' bridge (no delay on that hop: a client near the node it calls).
 */

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const FORWARDER = fileURLToPath(new URL("./unixForwardMain.ts", import.meta.url));
export const WAN_RPC_PORT = 26600;
/** The announced p2p port, where each host's proxy listens. */
export const WAN_P2P_PORT = 26700;
/** Where each node really listens, on its host's 127.0.0.1. */
export const WAN_NODE_PORT = 26701;

export interface WanNetworkOptions {
  /** A fresh directory for homes, sockets and pre-signed transfers. */
  dir: string;
  validators: number;
  /** Genesis block time; absent for the default (what `testnet` writes when not told). */
  blockTimeMs?: number;
  /** Pool bounds for the load (the load's ten accounts send everything). */
  poolTxs: number;
  /** Pre-signed transfers to make for the load phases. */
  transfers: number;
  /** The nodes' log level (default warn); `output(i)` keeps the last 20,000 characters. */
  logLevel?: string;
}

/** A load spec without what the network fills in (each variant of the union on its own). */
export type WanLoadSpec = NetLoadSpec extends infer S
  ? S extends NetLoadSpec
    ? Omit<S, "urls" | "pollUrl" | "txsFile" | "firstTx">
    : never
  : never;

export interface LinkShape {
  delayMs: number;
  jitterMs: number;
}

/** The links issue 19 asks about: a LAN, and 50 and 150 ms one way with jitter. */
export const WAN_LINKS: readonly LinkShape[] = [
  { delayMs: 0, jitterMs: 0 },
  { delayMs: 50, jitterMs: 10 },
  { delayMs: 150, jitterMs: 20 },
];

export class WanNetwork {
  readonly hosts: HostNetwork;
  readonly testnet: TestnetFile;
  readonly txsFile: string;
  readonly validators: number;
  private readonly dir: string;
  private readonly proxies: DelayProxyProcess[];
  private readonly outputs: string[];
  /** Each validator's node process id (`ip netns exec` execs it: the child's pid is the node's). */
  readonly nodePids: (number | undefined)[] = [];
  /** Transfers of txsFile handed out so far: a phase never resends what an earlier one sent. */
  private used = 0;

  private constructor(fields: {
    hosts: HostNetwork;
    testnet: TestnetFile;
    txsFile: string;
    dir: string;
    proxies: DelayProxyProcess[];
    outputs: string[];
  }) {
    this.hosts = fields.hosts;
    this.testnet = fields.testnet;
    this.txsFile = fields.txsFile;
    this.dir = fields.dir;
    this.proxies = fields.proxies;
    this.outputs = fields.outputs;
    this.validators = fields.testnet.nodes.length;
  }

  /** Makes the hosts, the homes and the transfers, and starts proxies and nodes (link at 0 ms). */
  static async start(options: WanNetworkOptions): Promise<WanNetwork> {
    const hosts = await HostNetwork.create(options.validators + 1);
    try {
      return await WanNetwork.startOn(hosts, options);
    } catch (error) {
      await hosts.destroy();
      throw error;
    }
  }

  private static async startOn(hosts: HostNetwork, options: WanNetworkOptions): Promise<WanNetwork> {
    const { dir, validators } = options;
    const ips = hosts.hosts.slice(0, validators).map((host) => host.ip);
    const out = join(dir, "testnet");
    await cli([
      "testnet",
      ...["--validators", String(validators), "--full-nodes", "0"],
      ...["--hosts", ips.join(","), "--out", out],
      ...["--base-port", String(WAN_RPC_PORT)],
      ...(options.blockTimeMs === undefined ? [] : ["--block-time", String(options.blockTimeMs)]),
    ]);
    const testnet = JSON.parse(readFileSync(join(out, "testnet.json"), "utf8")) as TestnetFile;
    const id = JSON.parse(await cli(["id", "--home", join(out, "node0"), "--json"])) as {
      announce: string[];
    };
    const bootstrap = id.announce[0];
    if (bootstrap === undefined) throw new Error("node0 announces no address");

    const txsFile = join(dir, "transfers.json");
    const fd = openSync(txsFile, "w");
    writeFileSync(fd, JSON.stringify(presignTransfers(testnet, options.transfers, "w")));
    fsyncSync(fd);
    closeSync(fd);

    const outputs = testnet.nodes.map(() => "");
    const proxies = await Promise.all(
      ips.map((ip, i) => {
        const { command, args, cwd } = delayProxyCommand({
          listenHost: ip,
          listenPort: WAN_P2P_PORT,
          targetHost: "127.0.0.1",
          targetPort: WAN_NODE_PORT,
          delayMs: 0,
          seed: i + 1,
        });
        return startDelayProxyProcess(
          hosts.spawn(i, command, args, { cwd, stdio: ["pipe", "pipe", "pipe"] }),
        );
      }),
    );
    const net = new WanNetwork({ hosts, testnet, txsFile, dir, proxies, outputs });
    for (const [i, node] of testnet.nodes.entries()) {
      const env = {
        ...process.env,
        CHAIN_NODE_P2P_HOST: "127.0.0.1",
        CHAIN_NODE_P2P_PORT: String(WAN_NODE_PORT),
        CHAIN_NODE_RPC_HOST: "0.0.0.0",
        CHAIN_NODE_POOL_MAX_TXS: String(options.poolTxs),
        CHAIN_NODE_POOL_MAX_TXS_PER_ACCOUNT: String(options.poolTxs),
        // Where a height's time goes (consensus_step_duration_seconds), read around each phase.
        CHAIN_NODE_RPC_METRICS: "true",
        // The others know only validator 0, and learn each other from it.
        ...(i === 0 ? {} : { CHAIN_NODE_P2P_BOOTSTRAP: bootstrap }),
      };
      const child = hosts.spawn(
        i,
        process.execPath,
        ["bin/chain-node.js", "start", "--home", node.home, "--log-level", options.logLevel ?? "warn"],
        { cwd: ROOT, env },
      );
      net.nodePids[i] = child.pid;
      const keep = (chunk: Buffer) => {
        outputs[i] = `${outputs[i]}${chunk.toString()}`.slice(-20_000);
      };
      child.stdout?.on("data", keep);
      child.stderr?.on("data", keep);
      const forwarder = hosts.spawn(
        i,
        process.execPath,
        ["--import", "tsx", FORWARDER, net.socket(i), String(WAN_RPC_PORT)],
        { cwd: ROOT },
      );
      await outputLine(forwarder, /listening/, `RPC forwarder on host ${i}`);
    }
    await net.waitUntil(
      `every validator with ${validators - 1} peers and the chain past block 2`,
      async () => {
        const peers = await Promise.all(
          net.indexes().map((i) => orUndefined(net.call<number>(i, "net_peerCount"))),
        );
        const head = (await orUndefined(net.head(0))) ?? 0;
        return peers.every((p) => (p ?? 0) >= validators - 1) && head >= 2;
      },
      60_000,
    );
    return net;
  }

  indexes(): number[] {
    return Array.from({ length: this.validators }, (_, i) => i);
  }

  /** The client host, where the load runs. */
  get clientHost(): number {
    return this.validators;
  }

  /** Validator i's RPC as the client host reaches it. */
  rpcUrl(i: number): string {
    return `http://${this.hosts.hosts[i]?.ip}:${WAN_RPC_PORT}`;
  }

  private socket(i: number): string {
    return join(this.dir, `rpc-${i}.sock`);
  }

  /** A JSON-RPC call to validator i, from this (root) namespace. */
  call<T>(i: number, method: string, params?: unknown): Promise<T> {
    return unixRpc<T>(this.socket(i), method, params);
  }

  /** Node i's consensus step durations so far: each step's total ms and count (its /metrics). */
  async stepTotals(i: number): Promise<StepTotals> {
    return stepTotalsOf(await unixGet(this.socket(i), "/metrics"));
  }

  head(i: number): Promise<number> {
    return this.call<number>(i, "chain_getRecentBlockNumber");
  }

  /** What node i printed last (its warnings and errors), for a failure's message. */
  output(i: number): string {
    return this.outputs[i] ?? "";
  }

  /** Every proxy's one-way delay and jitter, from now on (open connections too). */
  async setLink(shape: LinkShape): Promise<void> {
    const change: LinkChange = { delayMs: shape.delayMs, jitterMs: shape.jitterMs, jitter: "normal" };
    await Promise.all(this.proxies.map((proxy) => proxy.reshape(change)));
  }

  /** Waits until validator 0 has made `count` more blocks. */
  async waitForBlocks(count: number, timeoutMs = 60_000): Promise<void> {
    const start = await this.head(0);
    await this.waitUntil(
      `${count} more blocks after ${start}`,
      async () => ((await orUndefined(this.head(0))) ?? 0) >= start + count,
      timeoutMs,
    );
  }

  /** Waits until `quiet` blocks in a row held no transaction (the pools are empty). */
  async drain(quiet: number, timeoutMs: number): Promise<void> {
    let last = await this.head(0);
    let emptyInARow = 0;
    await this.waitUntil(
      `${quiet} empty blocks in a row`,
      async () => {
        const head = await this.head(0);
        for (let n = last + 1; n <= head; n++) {
          const txs = await this.call<number>(0, "chain_getBlockTransactionCountByNumber", { number: n });
          emptyInARow = txs === 0 ? emptyInARow + 1 : 0;
        }
        last = head;
        return emptyInARow >= quiet;
      },
      timeoutMs,
    );
  }

  /**
   * Runs bench/netLoad.ts in the client host with `spec` (urls, poll node and transfer file filled
   * in) and returns its result line. Each run takes transfers no earlier run took.
   */
  async load<T extends { sent?: number; submitted?: number }>(spec: WanLoadSpec): Promise<T> {
    const full = {
      ...spec,
      urls: this.indexes().map((i) => this.rpcUrl(i)),
      pollUrl: this.rpcUrl(0),
      txsFile: this.txsFile,
      firstTx: this.used,
    } as NetLoadSpec;
    // The load ends by itself (its phases are bounded); the limit only catches a hung one.
    const { code, stdout, stderr } = await this.hosts.exec(
      this.clientHost,
      process.execPath,
      ["--import", "tsx", "bench/netLoad.ts", JSON.stringify(full)],
      { cwd: ROOT, timeoutMs: 600_000 },
    );
    const last = stdout.trim().split("\n").at(-1) ?? "";
    if (code !== 0 || !last.startsWith("{")) {
      throw new Error(`netLoad exited with ${code}:\n${stdout.slice(-2_000)}\n${stderr.slice(-2_000)}`);
    }
    const result = JSON.parse(last) as T;
    this.used += result.sent ?? result.submitted ?? 0;
    return result;
  }

  /**
   * One row of the WAN figures: the link set to `shape`, three blocks to settle, then a steady
   * `latencyRate` for `latencyS` (submit → committed), the pools drained, then full load for
   * `throughputS` after a 3 s warm-up (committed transfers and blocks per second), drained again.
   */
  async measureLink(
    shape: LinkShape,
    phases: { latencyRate: number; latencyS: number; throughputS: number; windows: number },
  ): Promise<{ latency: LatencyResult; throughput: ThroughputResult; steps: StepMeans }> {
    await this.setLink(shape);
    await this.waitForBlocks(3);
    const before = await this.stepTotals(0);
    const latency = await this.load<LatencyResult>({
      mode: "latency",
      pollMs: 20,
      durationS: phases.latencyS,
      ratePerS: phases.latencyRate,
      tickMs: 20,
      drainS: 20,
    });
    const steps = stepMeans(before, await this.stepTotals(0));
    await this.drain(2, 60_000);
    const throughput = await this.load<ThroughputResult>({
      mode: "throughput",
      pollMs: 25,
      warmupS: 3,
      durationS: phases.throughputS,
      windows: phases.windows,
      batch: 100,
      inFlightPerNode: 2,
      maxBacklog: 10_000,
    });
    await this.drain(2, 180_000);
    return { latency, throughput, steps };
  }

  /** testNode's waitFor on `check` (a failed call counts as not yet); on timeout, every node's output. */
  async waitUntil(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
    await waitFor(what, async () => ((await check().catch(() => false)) ? true : undefined), timeoutMs).catch(
      (error: unknown) => {
        const outputs = this.outputs.map((o, i) => `--- validator ${i}\n${o}`).join("\n");
        throw new Error(`WAN network: ${String(error)}\n${outputs}`);
      },
    );
  }

  /** Stops everything in every host and removes the hosts. */
  async stop(): Promise<void> {
    await Promise.all(this.proxies.map((proxy) => proxy.stop().catch(() => {})));
    await this.hosts.destroy();
  }
}

/** `chain-node ARGS`; its stdout, or a throw with its stderr. */
async function cli(args: string[]): Promise<string> {
  const { code, stdout, stderr } = await runCli(args);
  if (code !== 0) throw new Error(`chain-node ${args.join(" ")} exited with ${code}:\n${stderr}`);
  return stdout;
}
