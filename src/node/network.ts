import { appendFileSync } from "node:fs";
import {
  type Chain,
  type Genesis,
  Listeners,
  type SignedTxInput,
  TxRejectedError,
  type TxRejectReason,
} from "../chain/index.ts";
import {
  ChainConsensusHost,
  type ConsensusMessage,
  ConsensusSigner,
  type ConsensusStep,
  type Evidence,
  isSignedProposal,
  isSignedVote,
  realScheduler,
  TendermintEngine,
  type ValidatorKey,
} from "../consensus/index.ts";
import type { SignatureVerifier } from "../crypto/index.ts";
import {
  type GossipTopic,
  type P2pHandlers,
  P2pNetwork,
  type P2pOptions,
  type PeerFilter,
  type PeerStatus,
  type Verdict,
} from "../p2p/index.ts";
import type { LmdbStore } from "../storage/index.ts";
import { BlockSync, serveBlocks } from "../sync/index.ts";
import type { Admission, PendingPool } from "../txpool/index.ts";
import { homePaths } from "./home.ts";
import type { Logger } from "./logger.ts";
import { consensusTimeouts, type NodeOptions } from "./options.ts";
import { PartitionFilter, watchPartitionFile } from "./partition.ts";
import { SnapshotStore } from "./snapshots.ts";
import { SyncProgress } from "./syncProgress.ts";

/**
 * How long a syncing node's block execution holds the event loop at a time (SyncLimits): a
 * submission to it is acknowledged after a few turns, each no longer than this.
 */
const SYNC_EXECUTION_SLICE_MS = 10;

/** The p2p layer's options from the node's (the network node's, and state sync's before it). */
export function p2pOptionsOf(
  options: NodeOptions,
  nodeKey: Uint8Array,
  log: Logger,
  peerFilter?: PeerFilter,
): P2pOptions {
  return {
    host: options.p2p.host,
    port: options.p2p.port,
    nodeKey,
    bootstrap: options.p2p.bootstrap,
    announce: options.p2p.announce,
    maxPeers: options.p2p.maxPeers,
    maxMessageBytes: options.p2p.maxMessageBytes,
    maxBlocksPerRequest: options.p2p.syncBatch,
    statusIntervalMs: 2000,
    ...(peerFilter === undefined ? {} : { peerFilter }),
    logger: log, // the p2p layer names its own module
  };
}

/**
 * The node's own snapshots (`[snapshot] interval`), served to peers that state-sync. With the
 * test fault CHAIN_NODE_TEST_CORRUPT_SNAPSHOT_CHUNKS every chunk goes out with a byte flipped.
 */
function servedSnapshots(
  snapshots: SnapshotStore,
  corrupt: boolean,
): NonNullable<P2pHandlers["serveSnapshots"]> {
  return {
    list: () => snapshots.offers(),
    manifest: (height) => snapshots.manifestBytes(height),
    chunk: async (height, index) => {
      const bytes = await snapshots.chunkBytes(height, index);
      if (bytes === undefined || !corrupt) return bytes;
      const flipped = new Uint8Array(bytes);
      flipped[0] = (flipped[0] as number) ^ 1;
      return flipped;
    },
  };
}

/** Rejections that prove the sender forwarded garbage (not just a race with a block or the pool). */
const PROVABLY_BAD: ReadonlySet<TxRejectReason> = new Set([
  "invalid_signature",
  "hash_mismatch",
  "wrong_chain_id",
  "invalid_operation",
  "tx_too_large",
]);

const isSignedTxShape = (value: unknown): value is SignedTxInput =>
  typeof value === "object" &&
  value !== null &&
  typeof (value as { signature?: unknown }).signature === "string" &&
  typeof (value as { transaction?: unknown }).transaction === "object" &&
  (value as { transaction?: unknown }).transaction !== null;

/**
 * A "txs" gossip message: `{ txs: [signed transaction, …] }`, what a node admitted from its RPC
 * clients in one event-loop turn, at most GOSSIP_TXS_PER_MESSAGE of them and GOSSIP_TXS_BYTES of
 * JSON (docs/decisions/005-p2p.md). Under the network bench's load each validator spent about a
 * third of its time in libp2p (framing, Noise, gossipsub) while every transaction was a message
 * of its own on every hop.
 */
const GOSSIP_TXS_PER_MESSAGE = 64;
const GOSSIP_TXS_BYTES = 1024 * 1024;

interface TxBundle {
  txs: SignedTxInput[];
}

const isTxBundle = (value: unknown): value is TxBundle => {
  const txs = (value as { txs?: unknown } | null)?.txs;
  return (
    Array.isArray(txs) && txs.length > 0 && txs.length <= GOSSIP_TXS_PER_MESSAGE && txs.every(isSignedTxShape)
  );
};

export interface NetworkParts {
  options: NodeOptions;
  genesis: Genesis;
  chain: Chain;
  store: LmdbStore;
  /** Admits the transactions peers gossip. */
  admission: Admission;
  /** The pool as consensus and sync see it: blocks are built from it, and committed ones leave it. */
  pool: PendingPool;
  /** Absent on a full node: it follows consensus without voting. */
  validator: ValidatorKey | undefined;
  nodeKey: Uint8Array;
  /** Signature checks off the event loop (worker threads), for sync; undefined: on the loop. */
  verifier: SignatureVerifier | undefined;
  /** The clock consensus reads (Date.now unless a test skews it: CHAIN_NODE_TEST_CLOCK_SKEW_MS). */
  now?: () => number;
  log: Logger;
}

/**
 * A node of a network: peers (p2p), consensus (Tendermint engine over the chain), sync, and the
 * gossip of transactions, proposals and votes between them.
 */
export class NetworkServices {
  readonly p2p: P2pNetwork;
  /** Each part of a height as it ends, with how long it took (the node's metrics listen). */
  readonly consensusSteps: Listeners<{ step: ConsensusStep; ms: number }>;
  private readonly engine: TendermintEngine;
  private readonly sync: BlockSync;
  private readonly signer: ConsensusSigner | undefined;
  private readonly admission: Admission;
  private readonly progress: SyncProgress;
  /** Test-only partition (node/partition.ts): allows every peer unless the partition file cuts some off. */
  private readonly partition = new PartitionFilter();
  /** Stops the partition file watcher; a no-op unless CHAIN_NODE_TEST_PARTITION_FILE is set. */
  private stopPartition: () => void = () => undefined;
  /** Admitted from RPC clients this turn, gossiped at its end (see announce). */
  private announcing: SignedTxInput[] = [];
  private readonly log: Logger;

  private constructor(parts: NetworkParts) {
    const { options, genesis, chain, store, admission, pool, validator, log } = parts;
    const paths = homePaths(options.home);
    this.admission = admission;
    this.log = log;
    const consensusLog = log.child({ module: "consensus" });
    this.consensusSteps = new Listeners((error) =>
      consensusLog.warn({ err: error }, "a step listener threw"),
    );
    const logWith =
      (target: Logger) =>
      (level: "debug" | "info" | "warn", message: string, fields?: Record<string, unknown>) =>
        target[level](fields ?? {}, message);

    this.signer =
      validator === undefined ? undefined : ConsensusSigner.open(paths.signingLog, validator.privateKey);
    const genesisHash = store.getBlock(0)?.hash ?? "";
    this.p2p = new P2pNetwork(p2pOptionsOf(options, parts.nodeKey, log, this.partition), {
      status: (): PeerStatus => ({
        chain_id: genesis.chain_id,
        network_id: genesis.network_id,
        genesis_hash: genesisHash,
        head_number: chain.head().header.number,
        head_hash: chain.head().hash,
      }),
      onGossip: (topic, payload, from) => this.onGossip(topic, payload, from),
      serveBlocks: (from, to) => serveBlocks(store, from, to, options.p2p.syncBatch),
      serveSnapshots: servedSnapshots(new SnapshotStore(options.home), options.faults.corruptSnapshotChunks),
    });

    // After any block (its transactions already left the pool: host and sync tell `pool`).
    const onBlock = () => {
      void pool.prune().catch((error: unknown) => log.warn({ err: error }, "pool prune failed"));
    };
    const host = new ChainConsensusHost({
      chain,
      pool,
      network: {
        broadcast: (message) => this.publishConsensus(message),
        onBehind: (height) => void this.sync.trigger(height - 1),
      },
      events: {
        onBlock: (block) => {
          consensusLog.info(
            { number: block.header.number, hash: block.hash, txs: block.tx_hashes.length },
            "committed block",
          );
          onBlock();
        },
        onEvidence: (evidence) => this.recordEvidence(paths.evidenceLog, evidence, consensusLog),
        onStep: (step, ms) => this.consensusSteps.emit({ step, ms }),
        log: logWith(consensusLog),
      },
      address: validator?.address ?? "",
      chainId: genesis.chain_id,
      maxTxBytes: genesis.consensus.max_tx_bytes,
      // Built and received well inside the validators' propose timeout (see BuildBudget).
      buildBudgetMs: options.consensus.proposeMs / 3,
      ...(parts.now === undefined ? {} : { now: parts.now }),
    });
    this.engine = new TendermintEngine(host, {
      chainId: genesis.chain_id,
      timeouts: consensusTimeouts(options.consensus, options.blockTimeMs ?? genesis.consensus.block_time_ms),
      scheduler: realScheduler(parts.now),
      ...(this.signer === undefined ? {} : { signer: this.signer }),
    });

    this.progress = new SyncProgress();
    const syncLog = log.child({ module: "sync" });
    this.sync = new BlockSync(
      chain,
      {
        peers: () => this.p2p.peers().map((p) => ({ id: p.id, head: p.status.head_number })),
        requestBlocks: (peer, from, to) => this.p2p.requestBlocks(peer, from, to),
        penalize: (peer, reason) => this.p2p.penalize(peer, reason),
      },
      {
        chainId: genesis.chain_id,
        maxTxBytes: genesis.consensus.max_tx_bytes,
        executionSliceMs: SYNC_EXECUTION_SLICE_MS,
        batch: options.p2p.syncBatch,
        exclusive: (task) => this.engine.exclusive(task),
        pool,
        onBlock: (block) => {
          syncLog.debug({ number: block.header.number }, "synced block");
          onBlock();
        },
        onProgress: (head, target) => this.progress.update(head, target),
        log: logWith(syncLog),
        ...(parts.verifier === undefined ? {} : { verifier: parts.verifier }),
      },
    );
    this.p2p.onPeerStatus = (_peer, status) => {
      if (this.sync.wants(status.head_number)) void this.sync.trigger();
    };
  }

  static async start(parts: NetworkParts): Promise<NetworkServices> {
    const services = new NetworkServices(parts);
    try {
      await services.p2p.start();
    } catch (error) {
      services.signer?.close();
      throw error;
    }
    services.stopPartition = watchPartitionFile(
      parts.options.faults.partitionFile,
      (ids) => services.partition.cutOff(ids),
      services.log,
    );
    services.engine.start();
    return services;
  }

  listening(): boolean {
    return this.p2p.listening();
  }

  peerCount(): number {
    return this.p2p.peerCount();
  }

  syncing(): boolean {
    return this.sync.syncing();
  }

  /** The round the consensus engine is in at the height it is deciding. */
  consensusRound(): number {
    return this.engine.status().round;
  }

  /** Gossips transactions this node admitted from its RPC clients: a turn's worth per message. */
  announce(inputs: readonly SignedTxInput[]): void {
    if (this.announcing.length === 0) setImmediate(() => this.publishAnnounced());
    this.announcing.push(...inputs);
    this.engine.transactionsArrived();
  }

  private publishAnnounced(): void {
    const inputs = this.announcing;
    this.announcing = [];
    let bundle: SignedTxInput[] = [];
    let bytes = 0;
    for (const input of inputs) {
      const size = Buffer.byteLength(JSON.stringify(input));
      if (bundle.length >= GOSSIP_TXS_PER_MESSAGE || (bundle.length > 0 && bytes + size > GOSSIP_TXS_BYTES)) {
        this.p2p.publish("txs", { txs: bundle });
        bundle = [];
        bytes = 0;
      }
      bundle.push(input);
      bytes += size;
    }
    if (bundle.length > 0) this.p2p.publish("txs", { txs: bundle });
  }

  /** Stops voting first (nothing half-signed is sent), then sync, then the network. */
  async stop(): Promise<void> {
    this.stopPartition();
    await this.engine.stop();
    await this.sync.stop();
    await this.p2p.stop();
    this.progress.stop();
    this.signer?.close();
  }

  private publishConsensus(message: ConsensusMessage): void {
    const { kind, ...signed } = message;
    this.p2p.publish(kind === "vote" ? "votes" : "proposals", { ...signed, at: Date.now() });
  }

  private async onGossip(topic: GossipTopic, payload: unknown, _from: string): Promise<Verdict> {
    switch (topic) {
      case "txs":
        return this.onGossipTx(payload);
      case "votes":
        return isSignedVote(payload) ? this.engine.receive({ kind: "vote", ...payload }) : "reject";
      case "proposals":
        return isSignedProposal(payload) ? this.engine.receive({ kind: "proposal", ...payload }) : "reject";
    }
  }

  /**
   * Each transaction of a bundle is admitted on its own (their signatures checked together on the
   * workers). One that proves the sender forwarded garbage rejects the message (not forwarded, the
   * peer penalized); otherwise it is forwarded if it brought anything new.
   */
  private async onGossipTx(payload: unknown): Promise<Verdict> {
    if (!isTxBundle(payload)) return "reject";
    const verdicts = await Promise.all(payload.txs.map((input) => this.admitGossiped(input)));
    if (verdicts.includes("accept")) this.engine.transactionsArrived();
    if (verdicts.includes("reject")) return "reject";
    return verdicts.includes("accept") ? "accept" : "ignore";
  }

  private async admitGossiped(input: SignedTxInput): Promise<Verdict> {
    try {
      await this.admission.submitFromPeer(input);
      return "accept";
    } catch (error) {
      if (error instanceof TxRejectedError) return PROVABLY_BAD.has(error.reason) ? "reject" : "ignore";
      throw error;
    }
  }

  private recordEvidence(path: string, evidence: Evidence, log: Logger): void {
    log.warn(
      {
        validator: evidence.validator,
        height: evidence.first.vote.height,
        round: evidence.first.vote.round,
        type: evidence.first.vote.type,
      },
      "conflicting votes from a validator",
    );
    appendFileSync(path, `${JSON.stringify({ seen_at: Date.now(), ...evidence })}\n`);
  }
}
