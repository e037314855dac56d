import { createServer } from "node:http";
import { type Genesis, genesisBlock } from "../chain/index.ts";
import { isHex } from "../crypto/index.ts";
import { P2pNetwork } from "../p2p/index.ts";
import type { LmdbStore } from "../storage/index.ts";
import { StateSync, type StateSyncProgress } from "../sync/index.ts";
import { stateSyncHandler } from "./health.ts";
import type { Logger } from "./logger.ts";
import { p2pOptionsOf } from "./network.ts";
import type { NodeOptions } from "./options.ts";

/** How long a joining node looks for a usable snapshot before it gives up (and does not start). */
const GIVE_UP_MS = 5 * 60_000;
const RETRY_MS = 1_000;
/** Progress lines while chunks arrive, at most this often. */
const PROGRESS_EVERY_MS = 5_000;

/**
 * State sync before the node starts (issue 17): when `[sync] state_sync` is on and the home holds
 * no chain data, the node joins its peers on the p2p network as a node at block 0 that serves
 * nothing, fetches a snapshot at or above the trusted block (sync/stateSync.ts), and writes it
 * (LmdbStore.restoreSnapshot, one transaction). The node then starts as on any home: the chain
 * opens at the snapshot's block, block sync fetches the rest, consensus joins. A home that holds
 * data starts as usual whatever the setting says (state sync is for joining, not for catching up).
 */
export async function stateSyncIfEmpty(parts: {
  options: NodeOptions;
  genesis: Genesis;
  store: LmdbStore;
  nodeKey: Uint8Array;
  log: Logger;
  /** Told of every step (a terminal's progress bar: cli/commands/start.ts). */
  onProgress?: (progress: StateSyncProgress) => void;
}): Promise<void> {
  const { options, genesis, store, log } = parts;
  const { sync } = options;
  if (!sync.stateSync || store.headNumber() !== undefined) return;
  if (sync.trustHeight < 1 || !isHex(sync.trustHash, 32)) {
    throw new Error(
      "[sync] state_sync needs trust_height (≥ 1) and trust_hash (0x + 64 hex): a block the operator trusts, e.g. from chain_getBlockByNumber on a node they run",
    );
  }
  const genesisHash = genesisBlock(genesis).hash;
  const p2p = new P2pNetwork(p2pOptionsOf(options, parts.nodeKey, log), {
    status: () => ({
      chain_id: genesis.chain_id,
      network_id: genesis.network_id,
      genesis_hash: genesisHash,
      head_number: 0,
      head_hash: genesisHash,
    }),
    onGossip: () => "ignore",
    serveBlocks: () => [],
  });
  // /health and /ready (503, with the progress) on the RPC port until the node itself serves.
  let current: StateSyncProgress | undefined;
  const probes = createServer(stateSyncHandler(() => (current === undefined ? undefined : { ...current })));
  await new Promise<void>((resolve, reject) => {
    probes.once("error", reject);
    probes.listen(options.rpc.port, options.rpc.host, resolve);
  });
  const closeProbes = () =>
    new Promise((resolve) => {
      probes.close(resolve);
      probes.closeAllConnections(); // a probe's keep-alive connection would hold the port
    });
  try {
    await p2p.start();
  } catch (error) {
    await closeProbes();
    throw error;
  }
  const started = Date.now();
  let lastLine = 0;
  let lastPhase: StateSyncProgress["phase"] | undefined;
  const onProgress = (progress: StateSyncProgress) => {
    current = progress;
    parts.onProgress?.(progress);
    const now = Date.now();
    if (progress.phase === lastPhase && now - lastLine < PROGRESS_EVERY_MS) return;
    lastPhase = progress.phase;
    lastLine = now;
    log.info({ ...progress }, `state sync: ${progress.phase}`);
  };
  try {
    const stateSync = new StateSync(
      {
        peers: () => p2p.peers().map((p) => ({ id: p.id, head: p.status.head_number })),
        requestBlocks: (peer, from, to) => p2p.requestBlocks(peer, from, to),
        penalize: (peer, reason) => p2p.penalize(peer, reason),
        listSnapshots: (peer) => p2p.requestSnapshotList(peer),
        requestManifest: (peer, height) => p2p.requestSnapshotManifest(peer, height),
        requestChunk: (peer, height, index) => p2p.requestSnapshotChunk(peer, height, index),
      },
      {
        genesis,
        trust: { height: sync.trustHeight, hash: sync.trustHash.toLowerCase() },
        parallel: sync.chunkFetchers,
        giveUpMs: GIVE_UP_MS,
        retryMs: RETRY_MS,
        log: (level, message, fields) => log[level](fields ?? {}, message),
        onProgress,
      },
    );
    const { manifest, restore } = await stateSync.run(store.nextTrieNodeId());
    store.restoreSnapshot(restore);
    log.info(
      {
        height: manifest.height,
        block_hash: manifest.block_hash,
        leaves: manifest.leaf_count,
        chunks: manifest.chunks.length,
        seconds: Math.round((Date.now() - started) / 100) / 10,
      },
      "state sync: restored; block sync goes on from here",
    );
  } finally {
    await closeProbes();
    await p2p.stop();
  }
}
