import type { IncomingMessage, ServerResponse } from "node:http";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { ConsensusStep } from "../consensus/index.ts";
import type { RpcServerHooks } from "../rpc/index.ts";

/**
 * Prometheus metrics of one node (`--metrics`, config `[rpc] metrics`), served at GET /metrics on
 * the RPC port. Each node has its own registry, never prom-client's global one, so several nodes
 * in one process (tests) keep separate numbers. Names and meanings: docs/configuration.md.
 */

const METRICS_PREFIX = "chain_node_";

/** Live values read when Prometheus scrapes (nothing to keep in sync between scrapes). */
export interface MetricsSource {
  headNumber(): number;
  peerCount(): number;
  poolSize(): number;
  syncing(): boolean;
  /** The consensus round at the height being decided (0 on a dev chain). */
  consensusRound(): number;
  /** The round in which the head block was decided (its certificate's round). */
  headRound(): number;
}

// Latency of a JSON-RPC call in this process: most take well under a millisecond, a large
// chain_getBlocks or a batch submission tens of milliseconds.
const RPC_BUCKETS_S = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5];
// Block intervals: the block time is 1 s by default, dev chains commit on demand.
const BLOCK_BUCKETS_S = [0.05, 0.1, 0.25, 0.5, 1, 1.5, 2, 3, 5, 10, 30, 60, 300];
// Parts of a height: milliseconds on a LAN (a commit, a check), a wire's delay or a timeout on a WAN.
const STEP_BUCKETS_S = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export class NodeMetrics {
  readonly registry = new Registry();
  private readonly rpcCalls: Counter<"method" | "code">;
  private readonly rpcSeconds: Histogram<"method">;
  private readonly blockInterval: Histogram;
  private readonly consensusStep: Histogram<"step">;
  private lastCommitAt: number | undefined;
  private readonly source: MetricsSource;

  constructor(source: MetricsSource) {
    this.source = source;
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: METRICS_PREFIX });
    const live = (name: string, help: string, read: () => number) =>
      new Gauge({
        name: `${METRICS_PREFIX}${name}`,
        help,
        registers,
        collect() {
          this.set(read());
        },
      });
    live("chain_height", "Number of the head block.", () => source.headNumber());
    live("peers", "Connected peers (0 on a dev chain).", () => source.peerCount());
    live("pool_transactions", "Transactions waiting in the pool.", () => source.poolSize());
    live("syncing", "1 while the node is catching up with its peers, else 0.", () =>
      Number(source.syncing()),
    );
    live("consensus_round", "Consensus round at the height being decided.", () => source.consensusRound());
    live(
      "consensus_committed_round",
      "Round in which the head block was decided (above 0: earlier rounds failed).",
      () => source.headRound(),
    );
    this.rpcCalls = new Counter({
      name: `${METRICS_PREFIX}rpc_requests_total`,
      help: 'JSON-RPC calls by method and outcome (code "ok" or the JSON-RPC error code).',
      labelNames: ["method", "code"],
      registers,
    });
    this.rpcSeconds = new Histogram({
      name: `${METRICS_PREFIX}rpc_request_duration_seconds`,
      help: "Time to answer a JSON-RPC call, by method (serialization included, network excluded).",
      labelNames: ["method"],
      buckets: RPC_BUCKETS_S,
      registers,
    });
    this.consensusStep = new Histogram({
      name: `${METRICS_PREFIX}consensus_step_duration_seconds`,
      help: "Time each part of a height took on this node: new_height (the block time's wait), each round's propose, prevote and precommit, and commit (the decided block stored).",
      labelNames: ["step"],
      buckets: STEP_BUCKETS_S,
      registers,
    });
    this.blockInterval = new Histogram({
      name: `${METRICS_PREFIX}block_interval_seconds`,
      help: "Time between two consecutive block commits on this node; blocks stored by sync are not observed.",
      buckets: BLOCK_BUCKETS_S,
      registers,
    });
  }

  /** What the RPC server reports to. */
  rpcHooks(): RpcServerHooks {
    return {
      onCall: (method, outcome, seconds) => {
        this.rpcCalls.inc({ method, code: String(outcome) });
        this.rpcSeconds.observe({ method }, seconds);
      },
    };
  }

  /**
   * Called after each commit. The interval between commits is the block time an operator sees
   * (CometBFT's consensus_block_interval_seconds); while syncing, commits come as fast as blocks
   * download and would drown it, so they only move the reference point.
   */
  onCommit(now = performance.now()): void {
    if (this.lastCommitAt !== undefined && !this.source.syncing()) {
      this.blockInterval.observe((now - this.lastCommitAt) / 1000);
    }
    this.lastCommitAt = now;
  }

  /** A part of a height ended (validators and full nodes of a network; a dev chain has none). */
  onConsensusStep(step: ConsensusStep, ms: number): void {
    this.consensusStep.observe({ step }, ms / 1000);
  }

  /** GET /metrics in the Prometheus text format. */
  async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { Allow: "GET, HEAD" }).end();
      return;
    }
    const text = await this.registry.metrics();
    res.writeHead(200, {
      "Content-Type": this.registry.contentType,
      "Content-Length": Buffer.byteLength(text),
    });
    res.end(req.method === "HEAD" ? undefined : text);
  }
}
