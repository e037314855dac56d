import { mkdirSync } from "node:fs";
import { balanceOf, Chain, type Genesis, nonceOf, stakeOf, txSize } from "../chain/index.ts";
import { SingleValidatorProducer, type ValidatorKey } from "../consensus/index.ts";
import { isAddress, toChecksumAddress } from "../crypto/index.ts";
import {
  createRoutes,
  type RpcChainView,
  type RpcNetworkView,
  RpcServer,
  type RpcTxPool,
} from "../rpc/index.ts";
import { LmdbStore } from "../storage/index.ts";
import { Admission } from "../txpool/index.ts";
import { homePaths } from "./home.ts";
import type { Logger } from "./logger.ts";
import type { NodeOptions } from "./options.ts";
import { NODE_VERSION } from "./version.ts";

const normalize = (address: string): string => (isAddress(address) ? toChecksumAddress(address) : address);

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
  private readonly producer: SingleValidatorProducer;
  private readonly log: Logger;

  private constructor(parts: {
    genesis: Genesis;
    store: LmdbStore;
    rpc: RpcServer;
    rpcUrl: string;
    producer: SingleValidatorProducer;
    log: Logger;
  }) {
    this.genesis = parts.genesis;
    this.store = parts.store;
    this.rpc = parts.rpc;
    this.rpcUrl = parts.rpcUrl;
    this.producer = parts.producer;
    this.log = parts.log;
  }

  static async start(
    options: NodeOptions,
    genesis: Genesis,
    validator: ValidatorKey,
    log: Logger,
  ): Promise<ChainNode> {
    const paths = homePaths(options.home);
    mkdirSync(paths.data, { recursive: true });
    const store = new LmdbStore(paths.data);
    try {
      const chain = new Chain(store, genesis);
      await chain.open();

      const admission = new Admission(
        { state: () => store, isCommitted: (hash) => store.getConfirmedTx(hash) !== undefined },
        store,
        { ...options.pool, chainId: genesis.chain_id, maxTxBytes: genesis.consensus.max_tx_bytes },
      );
      const restored = await admission.restore(store.loadPending());

      const blockLog = log.child({ module: "consensus" });
      const producer = new SingleValidatorProducer(
        chain,
        {
          get size() {
            return admission.pool.size;
          },
          selectForBlock: () =>
            admission.pool.select(genesis.consensus.max_block_txs, genesis.consensus.max_block_bytes, txSize),
          removeCommitted: (hashes) => admission.removeCommitted(hashes),
        },
        validator,
        { chainId: genesis.chain_id, blockTimeMs: options.blockTimeMs ?? genesis.consensus.block_time_ms },
        {
          onBlock: (block) =>
            blockLog.info(
              { number: block.header.number, hash: block.hash, txs: block.tx_hashes.length },
              "committed block",
            ),
          onError: (error) => blockLog.error({ err: error }, "block production failed"),
        },
      );

      const chainView: RpcChainView = {
        headNumber: () => chain.head().header.number,
        getBlock: (number) => store.getBlock(number),
        getBlockNumber: (hash) => store.getBlockNumber(hash),
        getConfirmedTx: (hash) => store.getConfirmedTx(hash),
        balanceOf: (address) => balanceOf(store, normalize(address)),
        stakeOf: (address) => stakeOf(store, normalize(address)),
        nonceOf: (address) => nonceOf(store, normalize(address)),
        isValidator: (address) => chain.validators().some((v) => v.address === normalize(address)),
      };
      const poolView: RpcTxPool = {
        submit: async (input) => {
          const hash = await admission.submit(input);
          producer.notify();
          return hash;
        },
        submitBatch: async (inputs) => {
          const hashes = await admission.submitBatch(inputs);
          producer.notify();
          return hashes;
        },
        pending: () => admission.pool.list(),
        getPending: (hash) => admission.pool.get(hash),
      };
      // The dev node has no peer-to-peer layer: it listens to no peers, has none, never syncs.
      const networkView: RpcNetworkView = {
        listening: () => false,
        peerCount: () => 0,
        syncing: () => false,
        networkId: () => genesis.network_id,
        chainId: () => genesis.chain_id,
        nodeInfo: () => ({ name: options.name, location: options.location, version: NODE_VERSION }),
      };

      const rpc = new RpcServer(
        createRoutes({
          chain: chainView,
          pool: poolView,
          network: networkView,
          limits: { maxBlockRange: options.rpc.maxBlockRange, maxBatchItems: options.rpc.maxBatchItems },
        }),
        options.rpc,
        log.child({ module: "rpc" }),
      );
      const rpcUrl = await rpc.listen();
      producer.start();
      log.info({ rpcUrl, head: chain.head().header.number, pending: restored }, "node started");
      return new ChainNode({ genesis, store, rpc, rpcUrl, producer, log });
    } catch (error) {
      await store.close();
      throw error;
    }
  }

  /** Stops serving, lets a block in progress commit, then closes storage. */
  async stop(): Promise<void> {
    await this.rpc.close();
    await this.producer.stop();
    await this.store.close();
    this.log.info("node stopped");
  }
}
