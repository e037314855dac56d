import { mkdirSync } from "node:fs";
import { armFailpoint, skewedClock } from "../faults/index.ts";
import {
  balanceOf,
  Chain,
  type Genesis,
  nonceOf,
  type SignedTxInput,
  StateReads,
  stakeOf,
} from "../chain/index.ts";
import { type ConsensusStep, SingleValidatorProducer, type ValidatorKey } from "../consensus/index.ts";
import { isAddress, toChecksumAddress } from "../crypto/index.ts";
import {
  createRoutes,
  type RpcChainView,
  type RpcNetworkView,
  RpcServer,
  type RpcTxPool,
  websocketOnlyRoutes,
} from "../rpc/index.ts";
import { LmdbStore } from "../storage/index.ts";
import type { StateSyncProgress } from "../sync/index.ts";
import { Admission, PendingPool } from "../txpool/index.ts";
import { SignatureWorkers } from "./signatureWorkers.ts";
import { type NodeOptions, threadFor } from "./options.ts";
import { TrieThread } from "./trieThread.ts";
import { homePaths } from "./home.ts";
import { explorerHandlers } from "./explorer.ts";
import { genesisDigest, rememberedGenesisHash, rememberGenesisHash } from "./genesisCheck.ts";
import { healthHandler, readyHandler } from "./health.ts";
import { attachLiveUpdates, type LiveUpdates } from "./liveUpdates.ts";
import type { Logger } from "./logger.ts";
import { NodeMetrics } from "./metrics.ts";
import { NetworkServices } from "./network.ts";
import { HomeLock } from "./homeLock.ts";
import { PeriodicSnapshots } from "./snapshots.ts";
import { stateSyncIfEmpty } from "./stateSyncStart.ts";
import { NODE_VERSION } from "./version.ts";

const normalize = (address: string): string => (isAddress(address) ? toChecksumAddress(address) : address);

/** The genesis's block limits, as the pool's selection and the dev producer take them. */
const blockLimits = ({ consensus }: Genesis) => ({
  maxBlockTxs: consensus.max_block_txs,
  maxBlockBytes: consensus.max_block_bytes,
  maxTxBytes: consensus.max_tx_bytes,
});

/** How long a dev node's block execution holds the event loop at a time (ChainOptions). */
const DEV_EXECUTION_SLICE_MS = 5;

/** How blocks are made: alone (dev chain) or with peers (a network of validators). */
export type NodeMode =
  | { kind: "dev"; validator: ValidatorKey }
  | {
      kind: "network";
      validator: ValidatorKey | undefined;
      nodeKey: Uint8Array;
      /** Told of each step of a state sync before start (a terminal's progress bar). */
      onStateSyncProgress?: (progress: StateSyncProgress) => void;
    };

/** What block making looks like from the rest of the node. */
interface BlockMaking {
  /** New transactions were admitted from RPC clients. */
  admitted(inputs: readonly SignedTxInput[]): void;
  listening(): boolean;
  peerCount(): number;
  syncing(): boolean;
  /** The consensus round at the height being decided. */
  consensusRound(): number;
  /** The p2p listen addresses (none on a dev chain). */
  p2pAddrs(): string[];
  /** How long each part of a height took (none on a dev chain: it has no rounds). */
  observeConsensusSteps(listener: (step: ConsensusStep, ms: number) => void): void;
  stop(): Promise<void>;
}

function devBlockMaking(producer: SingleValidatorProducer): BlockMaking {
  return {
    admitted: () => producer.notify(),
    // The dev node has no peer-to-peer layer: it listens to no peers, has none, never syncs.
    listening: () => false,
    peerCount: () => 0,
    syncing: () => false,
    consensusRound: () => 0,
    p2pAddrs: () => [],
    observeConsensusSteps: () => undefined,
    stop: () => producer.stop(),
  };
}

function networkBlockMaking(services: NetworkServices): BlockMaking {
  return {
    admitted: (inputs) => services.announce(inputs),
    listening: () => services.listening(),
    peerCount: () => services.peerCount(),
    syncing: () => services.syncing(),
    consensusRound: () => services.consensusRound(),
    p2pAddrs: () => services.p2p.listenAddrs(),
    observeConsensusSteps: (listener) =>
      void services.consensusSteps.add(({ step, ms }) => listener(step, ms)),
    stop: () => services.stop(),
  };
}

/**
 * A running node: the only place that knows the concrete classes of every layer.
 * Start order: storage → chain → pool (journal restored) → block production → RPC.
 * Stop order is the reverse, so no request or block is cut off half-way.
 */
export class ChainNode {
  readonly genesis: Genesis;
  readonly rpcUrl: string;
  private readonly store: LmdbStore;
  private readonly rpc: RpcServer;
  private readonly live: LiveUpdates;
  private readonly blocks: BlockMaking;
  private readonly verifier: SignatureWorkers | undefined;
  private readonly snapshots: PeriodicSnapshots;
  private readonly trieThread: TrieThread | undefined;
  private readonly lock: HomeLock;
  private readonly log: Logger;
  /** The libp2p listen addresses (network mode), for operators and tests. */
  readonly p2pAddrs: string[];

  private constructor(parts: {
    genesis: Genesis;
    store: LmdbStore;
    rpc: RpcServer;
    live: LiveUpdates;
    rpcUrl: string;
    blocks: BlockMaking;
    verifier: SignatureWorkers | undefined;
    snapshots: PeriodicSnapshots;
    trieThread: TrieThread | undefined;
    lock: HomeLock;
    log: Logger;
    p2pAddrs: string[];
  }) {
    this.lock = parts.lock;
    this.verifier = parts.verifier;
    this.snapshots = parts.snapshots;
    this.trieThread = parts.trieThread;
    this.genesis = parts.genesis;
    this.store = parts.store;
    this.rpc = parts.rpc;
    this.live = parts.live;
    this.rpcUrl = parts.rpcUrl;
    this.blocks = parts.blocks;
    this.log = parts.log;
    this.p2pAddrs = parts.p2pAddrs;
  }

  static async start(
    options: NodeOptions,
    genesis: Genesis,
    mode: NodeMode,
    log: Logger,
  ): Promise<ChainNode> {
    // Before anything durable happens: a test may kill the node at the genesis commit.
    armFailpoint(options.faults.failpoint);
    const paths = homePaths(options.home);
    mkdirSync(paths.data, { recursive: true });
    // Before the store opens: another node on this home would write it (and sign) as its own.
    const lock = HomeLock.acquire(paths.data);
    const { writeThread: setting, trieThread: trieSetting, ...retention } = options.storage;
    const writeThread = threadFor(setting, mode.kind);
    let store: LmdbStore;
    try {
      store = new LmdbStore(paths.data, retention, {
        writeThread,
        // A dev node plans and hands over its block writes in slices, as it executes (below).
        ...(mode.kind === "dev" ? { writeSliceMs: DEV_EXECUTION_SLICE_MS } : {}),
        onPruneError: (error) =>
          log.warn({ err: error }, "pruning write failed; tried again after the next block"),
        // Not committed after seconds: whether the thread waits for LMDB's write lock (another
        // writer holds it) or for its own write and the disk (docs/monitoring.md, "Logs").
        onSlowBlockWrite: ({ elapsedMs, lockHeld }) =>
          log.warn(
            { elapsedMs, waitingFor: lockHeld ? "write and sync" : "LMDB write lock" },
            "block write on the writer thread not committed yet",
          ),
      });
    } catch (error) {
      lock.release();
      throw error;
    }
    let started: BlockMaking | undefined;
    let live: LiveUpdates | undefined;
    let trieThread: TrieThread | undefined;
    let verifier: SignatureWorkers | undefined;
    let snapshots: PeriodicSnapshots | undefined;
    try {
      // A network node joining with [sync] state_sync restores a peer's snapshot first.
      if (mode.kind === "network") {
        await stateSyncIfEmpty({
          options,
          genesis,
          store,
          nodeKey: mode.nodeKey,
          log: log.child({ module: "statesync" }),
          ...(mode.onStateSyncProgress === undefined ? {} : { onProgress: mode.onStateSyncProgress }),
        });
      }
      // A dev node executes in slices so that reads and admission go on meanwhile; a validator's
      // block is checked in one piece, within its round's deadline (ChainOptions).
      // Block 0 is compared with the hash remembered for this genesis, if the home has one.
      const digest = genesisDigest(genesis);
      const genesisHash = rememberedGenesisHash(options.home, digest);
      // The state's trie on a thread of its own (by default a dev node's: docs/decisions/024).
      const trie = threadFor(trieSetting, mode.kind) ? await startTrieThread(paths.data, log) : undefined;
      trieThread = trie;
      const chain = new Chain(store, genesis, {
        ...(mode.kind === "dev"
          ? { executionSliceMs: DEV_EXECUTION_SLICE_MS, writesAside: writeThread }
          : {}),
        ...(trie === undefined ? {} : { openTrie: (rootHex) => trie.open(store, rootHex) }),
        ...(genesisHash === undefined ? {} : { genesisHash }),
      });
      await chain.open();
      const block0 = store.getBlock(0)?.hash;
      if (genesisHash === undefined && block0 !== undefined)
        rememberGenesisHash(options.home, digest, block0);
      // What a kill inside a pruning write undid, or a stop left owed, is pruned without waiting for a block.
      store.resumePruning();
      // Before any block commits: it takes the periodic snapshots (and drops unfinished ones).
      const periodic = new PeriodicSnapshots({
        store,
        home: options.home,
        settings: options.snapshot,
        log: log.child({ module: "snapshot" }),
        failpoint: options.faults.failpoint,
        chunkTargetBytes: options.faults.snapshotChunkBytes,
      });
      snapshots = periodic;
      chain.committed.add((block) => periodic.committed(block));

      // Real time unless a test skews it (CHAIN_NODE_TEST_CLOCK_SKEW_MS, src/faults).
      const clock = skewedClock(options.faults.clockSkewMs);
      verifier = await startVerifier(options.verifyThreads, log);
      const admission = new Admission(
        { state: () => store, isCommitted: (hash) => store.getConfirmedTx(hash) !== undefined },
        store.journal,
        { ...options.pool, chainId: genesis.chain_id, maxTxBytes: genesis.consensus.max_tx_bytes },
        clock,
        verifier,
      );
      const restored = await admission.restore(store.journal.loadPending());
      // The one object every path that makes or commits blocks gets from the pool.
      const pool = new PendingPool(admission, blockLimits(genesis));

      const blocks = await startBlockMaking({
        clock,
        options,
        genesis,
        chain,
        store,
        admission,
        pool,
        verifier,
        mode,
        log,
      });
      started = blocks;

      const chainView: RpcChainView = {
        headNumber: () => chain.head().header.number,
        getBlock: (number) => store.getBlock(number),
        blocksFrom: () => store.blocksFrom(),
        getBlockNumber: (hash) => store.getBlockNumber(hash),
        getConfirmedTx: (hash) => store.getConfirmedTx(hash),
        balanceOf: (address) => balanceOf(store, normalize(address)),
        stakeOf: (address) => stakeOf(store, normalize(address)),
        nonceOf: (address) => nonceOf(store, normalize(address)),
        isValidator: (address) => chain.validators().some((v) => v.address === normalize(address)),
        addressHistory: (address, query) => store.addressHistory(address, query),
      };
      const poolView: RpcTxPool = {
        submit: async (input) => {
          const hash = await admission.submit(input);
          blocks.admitted([input]);
          return hash;
        },
        submitBatch: async (inputs) => {
          const hashes = await admission.submitBatch(inputs);
          blocks.admitted(inputs);
          return hashes;
        },
        pending: () => admission.pool.list(),
        getPending: (hash) => admission.pool.get(hash),
      };
      const networkView: RpcNetworkView = {
        listening: () => blocks.listening(),
        peerCount: () => blocks.peerCount(),
        syncing: () => blocks.syncing(),
        networkId: () => genesis.network_id,
        chainId: () => genesis.chain_id,
        nodeInfo: () => ({ name: options.name, location: options.location, version: NODE_VERSION }),
      };

      const metrics = options.metrics
        ? new NodeMetrics({
            headNumber: () => chain.head().header.number,
            peerCount: () => blocks.peerCount(),
            poolSize: () => admission.pool.size,
            syncing: () => blocks.syncing(),
            consensusRound: () => blocks.consensusRound(),
            headRound: () => chain.head().commit?.round ?? 0,
          })
        : undefined;
      if (metrics !== undefined) {
        chain.committed.add(() => metrics.onCommit());
        blocks.observeConsensusSteps((step, ms) => metrics.onConsensusStep(step, ms));
      }

      const stateReads = new StateReads(store, {
        maxValueLeaves: options.rpc.maxValueLeaves,
        maxProofLeaves: options.rpc.maxProofLeaves,
      });
      const routes = createRoutes({
        chain: chainView,
        state: stateReads,
        pool: poolView,
        network: networkView,
        limits: { maxBlockRange: options.rpc.maxBlockRange, maxBatchItems: options.rpc.maxBatchItems },
      });
      // Over HTTP the subscription methods only say "use /ws"; the WebSocket endpoint serves them.
      const httpRoutes = new Map([...routes, ...websocketOnlyRoutes().map((r) => [r.name, r] as const)]);
      const rpc = new RpcServer(httpRoutes, options.rpc, log.child({ module: "rpc" }), metrics?.rpcHooks());
      rpc.handle("/health", healthHandler());
      rpc.handle(
        "/ready",
        readyHandler({
          networked: mode.kind === "network",
          syncing: () => blocks.syncing(),
          peerCount: () => blocks.peerCount(),
          headNumber: () => chain.head().header.number,
        }),
      );
      if (metrics !== undefined) rpc.handle("/metrics", (req, res) => metrics.serve(req, res));
      for (const [path, handler] of explorerHandlers()) rpc.handle(path, handler);
      live = attachLiveUpdates({
        rpc,
        options: options.rpc,
        committed: chain.committed,
        admitted: admission.admitted,
        stateChanged: chain.stateChanged,
        source: {
          getConfirmedTx: (hash) => store.getConfirmedTx(hash),
          getPending: (hash) => admission.pool.get(hash),
          headValue: (path) => stateReads.value(path),
          headNumber: () => chain.head().header.number,
        },
        log,
      });
      const rpcUrl = await rpc.listen();
      const p2pAddrs = blocks.p2pAddrs();
      log.info(
        {
          rpcUrl,
          p2pAddrs,
          head: chain.head().header.number,
          pending: restored,
          trieThread: trie !== undefined,
        },
        "node started",
      );
      return new ChainNode({
        genesis,
        store,
        rpc,
        live,
        rpcUrl,
        blocks,
        verifier,
        snapshots: periodic,
        trieThread,
        lock,
        log,
        p2pAddrs,
      });
    } catch (error) {
      await live?.close();
      await started?.stop();
      await snapshots?.stop();
      await verifier?.close();
      await trieThread?.close();
      await store.close();
      lock.release();
      throw error;
    }
  }

  /** Stops serving, lets a block in progress commit, then closes storage. */
  async stop(): Promise<void> {
    // Together: the HTTP server's close waits for every socket, the upgraded WebSockets included.
    await Promise.all([this.rpc.close(), this.live.close()]);
    await this.blocks.stop();
    // After block making: no commit starts another; a snapshot under way is abandoned.
    await this.snapshots.stop();
    await this.verifier?.close();
    await this.trieThread?.close();
    await this.store.close();
    this.lock.release();
    this.log.info("node stopped");
  }
}

/** The trie thread, or undefined (the trie on the event loop) if it cannot start, as startVerifier. */
async function startTrieThread(path: string, log: Logger): Promise<TrieThread | undefined> {
  try {
    const thread = await TrieThread.start(path);
    thread.onGaveUp = (cause) =>
      log.error(
        { err: cause },
        "trie thread died again at each start; the state's trie is on the event loop",
      );
    return thread;
  } catch (error) {
    log.warn({ err: error }, "trie thread did not start; the state's trie is on the event loop");
    return undefined;
  }
}

/**
 * The signature-check threads, or undefined (checks on the event loop) when none are configured
 * or they cannot start: slower admission is better than a node that does not start.
 */
async function startVerifier(threads: number, log: Logger): Promise<SignatureWorkers | undefined> {
  if (threads <= 0) return undefined;
  try {
    return await SignatureWorkers.start(threads);
  } catch (error) {
    log.warn({ err: error, threads }, "signature-check threads did not start; checking on the event loop");
    return undefined;
  }
}

async function startBlockMaking(parts: {
  clock: () => number;
  options: NodeOptions;
  genesis: Genesis;
  chain: Chain;
  store: LmdbStore;
  admission: Admission;
  pool: PendingPool;
  verifier: SignatureWorkers | undefined;
  mode: NodeMode;
  log: Logger;
}): Promise<BlockMaking> {
  const { options, genesis, chain, store, admission, pool, verifier, mode, log } = parts;
  if (mode.kind === "network") {
    const services = await NetworkServices.start({
      now: parts.clock,
      options,
      genesis,
      chain,
      store,
      admission,
      pool,
      validator: mode.validator,
      nodeKey: mode.nodeKey,
      verifier,
      log,
    });
    return networkBlockMaking(services);
  }
  const blockLog = log.child({ module: "consensus" });
  const producer = new SingleValidatorProducer(
    chain,
    pool,
    mode.validator,
    {
      chainId: genesis.chain_id,
      blockTimeMs: options.blockTimeMs ?? genesis.consensus.block_time_ms,
      limits: blockLimits(genesis),
    },
    {
      onBlock: (block) =>
        blockLog.info(
          { number: block.header.number, hash: block.hash, txs: block.tx_hashes.length },
          "committed block",
        ),
      onError: (error) => blockLog.error({ err: error }, "block production failed"),
    },
  );
  // A test knob (CHAIN_NODE_TEST_HOLD_BLOCKS): never started, the producer makes no block.
  if (!options.faults.holdBlocks) producer.start();
  return devBlockMaking(producer);
}
