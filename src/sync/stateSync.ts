import {
  checkManifestChain,
  checkSnapshotTrust,
  chunksHash,
  decodeManifest,
  type Genesis,
  type LinkedBlock,
  SnapshotAssembler,
  SnapshotError,
  type SnapshotManifest,
  type SnapshotRestore,
  type TrustAnchor,
  trustRange,
} from "../chain/index.ts";
import { bytesToHex, keccak256 } from "../crypto/index.ts";
import type { BlockSource } from "./blockSync.ts";

/** Where snapshots come from: peers that offer them (the p2p layer in a node). */
export interface SnapshotSource extends BlockSource {
  /** What `peer` offers: items `{height, manifest_hash, chunks_hash}` (anything else is ignored). */
  listSnapshots(peer: string): Promise<unknown[]>;
  /** The manifest's bytes; undefined when the peer has no snapshot at `height`. */
  requestManifest(peer: string, height: number): Promise<Uint8Array | undefined>;
  /** Chunk `index`'s bytes; undefined when the peer does not have it. */
  requestChunk(peer: string, height: number, index: number): Promise<Uint8Array | undefined>;
}

export interface StateSyncProgress {
  phase: "discovering" | "verifying" | "fetching" | "rebuilding";
  /** The snapshot being fetched (fetching, rebuilding). */
  height?: number;
  chunksDone: number;
  chunksTotal: number;
  /** Peers serving chunks. */
  peers: number;
}

export interface StateSyncOptions {
  genesis: Genesis;
  /** What the operator trusts: the snapshot must be at or above it and reached from it by hashes. */
  trust: TrustAnchor;
  /** Chunk requests in flight at once, spread over the peers that offer the snapshot. */
  parallel: number;
  /** Give up when no usable snapshot was found for this long. */
  giveUpMs: number;
  /** Between two rounds of asking peers for offers (and for the blocks above a snapshot). */
  retryMs: number;
  log(level: "debug" | "info" | "warn", message: string, fields?: Record<string, unknown>): void;
  onProgress?(progress: StateSyncProgress): void;
  /** Clock and pause, injectable for tests. */
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/**
 * A snapshot's content (height and chunks hash, chain/snapshot.ts chunksHash) and the peers that
 * offer it, each with the hash of its own manifest: nodes' manifests of one block differ in the
 * certificate each stored, their chunks do not, so chunks may come from any of them.
 */
interface Candidate {
  height: number;
  chunksHash: string;
  /** Peer id → the hash of the manifest it offers. */
  peers: Map<string, string>;
}

/** A peer that fails this many chunk requests (errors, not bad bytes) is not asked again. */
const MAX_PEER_FAILURES = 3;
/** Chunk requests in flight to one peer: the snapshots protocol serves two streams per connection. */
const MAX_IN_FLIGHT_PER_PEER = 2;

const HASH = /^0x[0-9a-f]{64}$/;
const isOffer = (item: unknown): item is { height: number; manifest_hash: string; chunks_hash: string } => {
  const offer = item as { height?: unknown; manifest_hash?: unknown; chunks_hash?: unknown } | null;
  return (
    typeof offer === "object" &&
    offer !== null &&
    Number.isSafeInteger(offer.height) &&
    (offer.height as number) >= 0 &&
    typeof offer.manifest_hash === "string" &&
    HASH.test(offer.manifest_hash) &&
    typeof offer.chunks_hash === "string" &&
    HASH.test(offer.chunks_hash)
  );
};

const isLinkedBlock = (item: unknown): item is LinkedBlock => {
  const block = item as { header?: { number?: unknown; parent_hash?: unknown } } | null;
  return (
    typeof block === "object" &&
    block !== null &&
    typeof block.header === "object" &&
    block.header !== null &&
    Number.isSafeInteger(block.header.number) &&
    typeof block.header.parent_hash === "string"
  );
};

/** Why a candidate snapshot was given up (the next one is tried). */
class CandidateFailed extends Error {}

/**
 * State sync (issue 17; CometBFT's, in outline): a node without chain data asks its peers what
 * snapshots they offer at or above the trusted height, takes the highest that most peers offer,
 * checks its manifest against the offer's hash and against the trusted block (chain/
 * snapshotTrust.ts: hashes from the trusted block to it, certificates for the sets its state
 * cannot vouch for), fetches its chunks from several peers at once, checks each on arrival against
 * the manifest (a peer that serves a bad chunk or manifest is penalized, the chunk asked of
 * another), and rebuilds the state, whose root must be the block's. The caller writes the result
 * (LmdbStore.restoreSnapshot) and block sync goes on from there.
 */
export class StateSync {
  private readonly source: SnapshotSource;
  private readonly options: StateSyncOptions;
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;
  /** Snapshots given up on ("height/hash"): never tried again. */
  private readonly rejected = new Set<string>();
  private stopped = false;

  constructor(source: SnapshotSource, options: StateSyncOptions) {
    this.source = source;
    this.options = options;
    this.now = options.now ?? Date.now;
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  /** Ends `run` at its next step (it then rejects). */
  stop(): void {
    this.stopped = true;
  }

  /** Finds, checks, fetches and rebuilds a snapshot; `nextTrieId` numbers its trie nodes. */
  async run(nextTrieId: number): Promise<{ manifest: SnapshotManifest; restore: SnapshotRestore }> {
    const deadline = this.now() + this.options.giveUpMs;
    while (this.now() <= deadline) {
      this.checkStopped();
      this.progress({
        phase: "discovering",
        chunksDone: 0,
        chunksTotal: 0,
        peers: this.source.peers().length,
      });
      for (const candidate of await this.candidates()) {
        try {
          return await this.take(candidate, nextTrieId);
        } catch (error) {
          if (!(error instanceof CandidateFailed)) throw error;
          this.rejected.add(`${candidate.height}/${candidate.chunksHash}`);
          this.options.log("warn", "state sync: snapshot given up", {
            height: candidate.height,
            chunks_hash: candidate.chunksHash,
            reason: error.message,
          });
        }
      }
      await this.sleep(this.options.retryMs);
    }
    throw new Error(
      `state sync: no peer offered a usable snapshot at or above trust_height ${this.options.trust.height} within ${Math.round(this.options.giveUpMs / 1000)} s`,
    );
  }

  /** Offers at or above the trusted height, highest first, then those more peers offer. */
  private async candidates(): Promise<Candidate[]> {
    const byKey = new Map<string, Candidate>();
    await Promise.all(
      this.source.peers().map(async ({ id }) => {
        let offers: unknown[];
        try {
          offers = await this.source.listSnapshots(id);
        } catch (error) {
          this.options.log("debug", "state sync: snapshot list failed", { peer: id, error: String(error) });
          return;
        }
        for (const offer of offers.filter(isOffer)) {
          const key = `${offer.height}/${offer.chunks_hash}`;
          if (offer.height < this.options.trust.height || this.rejected.has(key)) continue;
          const candidate = byKey.get(key) ?? {
            height: offer.height,
            chunksHash: offer.chunks_hash,
            peers: new Map(),
          };
          candidate.peers.set(id, offer.manifest_hash);
          byKey.set(key, candidate);
        }
      }),
    );
    return [...byKey.values()].sort((a, b) => b.height - a.height || b.peers.size - a.peers.size);
  }

  private async take(
    candidate: Candidate,
    nextTrieId: number,
  ): Promise<{ manifest: SnapshotManifest; restore: SnapshotRestore }> {
    const { manifest, peers, from } = await this.trustedManifestOf(candidate);
    const assembler = await this.fetchChunks(manifest, peers);
    this.progress({
      phase: "rebuilding",
      height: manifest.height,
      chunksDone: manifest.chunks.length,
      chunksTotal: manifest.chunks.length,
      peers: peers.length,
    });
    try {
      return { manifest, restore: assembler.finish(nextTrieId) };
    } catch (error) {
      if (!(error instanceof SnapshotError)) throw error;
      // Every chunk matched the manifest, whose block the trusted chain vouched for: the manifest's
      // chunk list (or its validator sets) lied about the state. Its server is at fault, not the
      // peers that served chunks matching it.
      this.source.penalize(from, `snapshot ${manifest.height}: ${error.message}`);
      throw new CandidateFailed(error.message);
    }
  }

  /**
   * A manifest of the candidate that the trusted chain vouches for. Peers' manifests of one block
   * differ (each its own certificate), so one that fails the trust check (forged validator sets,
   * another block) only takes its peer out: an honest peer's manifest of the same chunks is next.
   */
  private async trustedManifestOf(
    candidate: Candidate,
  ): Promise<{ manifest: SnapshotManifest; peers: string[]; from: string }> {
    const peers = [...candidate.peers.keys()];
    for (const manifest of this.manifestsOf(candidate, peers)) {
      const { value, peer } = await manifest;
      if (value === undefined) continue;
      this.progress({
        phase: "verifying",
        height: value.height,
        chunksDone: 0,
        chunksTotal: value.chunks.length,
        peers: peers.length,
      });
      try {
        await this.checkTrust(value);
        return { manifest: value, peers, from: peer };
      } catch (error) {
        if (!(error instanceof CandidateFailed)) throw error;
        this.options.log("warn", "state sync: a peer's manifest is not the trusted chain's", {
          peer,
          height: value.height,
          reason: error.message,
        });
        peers.splice(peers.indexOf(peer), 1);
      }
    }
    throw new CandidateFailed("no offering peer served a manifest the trusted chain leads to");
  }

  /** Each offering peer's manifest in turn, checked against its offer (undefined: none usable). */
  private *manifestsOf(
    candidate: Candidate,
    peers: string[],
  ): Generator<Promise<{ value: SnapshotManifest | undefined; peer: string }>> {
    for (const peer of [...candidate.peers.keys()]) {
      if (peers.includes(peer))
        yield this.manifestFrom(candidate, peer, peers).then((value) => ({ value, peer }));
    }
  }

  /** `peer`'s manifest of the candidate, if it matches the peer's offer; a bad one penalizes it. */
  private async manifestFrom(
    candidate: Candidate,
    peer: string,
    peers: string[],
  ): Promise<SnapshotManifest | undefined> {
    this.checkStopped();
    let bytes: Uint8Array | undefined;
    try {
      bytes = await this.source.requestManifest(peer, candidate.height);
    } catch (error) {
      this.options.log("debug", "state sync: manifest request failed", { peer, error: String(error) });
      return undefined;
    }
    if (bytes === undefined) return undefined; // deleted meanwhile (kept count): not a fault
    if (bytesToHex(keccak256(bytes)) !== candidate.peers.get(peer)) {
      this.penalize(
        peers,
        peer,
        `snapshot ${candidate.height}: the manifest does not hash to what it offered`,
      );
      return undefined;
    }
    try {
      const manifest = decodeManifest(bytes);
      if (manifest.height !== candidate.height || chunksHash(manifest) !== candidate.chunksHash) {
        throw new SnapshotError("bad_manifest", "the manifest is not of the snapshot offered");
      }
      checkManifestChain(manifest, this.options.genesis);
      return manifest;
    } catch (error) {
      this.penalize(peers, peer, `snapshot ${candidate.height}: ${(error as Error).message}`);
      return undefined;
    }
  }

  /** The blocks from the trusted one to just above the snapshot, and the check they support. */
  private async checkTrust(manifest: SnapshotManifest): Promise<void> {
    const { trust } = this.options;
    const { from, to } = trustRange(manifest, trust);
    const blocks: LinkedBlock[] = [];
    let waitedFor = 0;
    while (blocks.length < to - from + 1) {
      this.checkStopped();
      const next = from + blocks.length;
      const served = await this.blocksFrom(next, to);
      if (served.length === 0) {
        // The blocks just above a fresh snapshot may not be made yet: wait a few rounds.
        if (++waitedFor > 30) throw new CandidateFailed(`no peer serves blocks ${next}..${to}`);
        await this.sleep(this.options.retryMs);
        continue;
      }
      blocks.push(...served);
    }
    const check = checkSnapshotTrust(manifest, trust, blocks);
    if (!check.ok) throw new CandidateFailed(check.message);
  }

  /** Blocks from `from` (up to `to`) from the first peer that serves any, in the sync form. */
  private async blocksFrom(from: number, to: number): Promise<LinkedBlock[]> {
    for (const peer of this.source.peers().filter((p) => p.head >= from)) {
      try {
        const answer = await this.source.requestBlocks(peer.id, from, to);
        const blocks: LinkedBlock[] = [];
        for (const [i, item] of answer.entries()) {
          if (!isLinkedBlock(item) || item.header.number !== from + i) break;
          blocks.push(item);
        }
        if (blocks.length > 0) return blocks;
      } catch (error) {
        this.options.log("debug", "state sync: block request failed", {
          peer: peer.id,
          error: String(error),
        });
      }
    }
    return [];
  }

  /**
   * Every chunk, `parallel` requests at a time, each from the least busy offering peer not given
   * up on; a chunk that fails its check is asked of another peer, and its server is penalized.
   */
  private async fetchChunks(manifest: SnapshotManifest, offering: string[]): Promise<SnapshotAssembler> {
    // The joining node has its genesis: the genesis chunks are not fetched.
    const assembler = new SnapshotAssembler(manifest, this.options.genesis);
    const queue = assembler.missing();
    const total = queue.length;
    const peers = offering; // penalized peers leave the caller's list too
    const busy = new Map<string, number>();
    const failures = new Map<string, number>();
    /** Peers asked for chunk i already without getting it: asked last next time. */
    const triedFor = new Map<number, Set<string>>();
    let done = 0;
    const report = () =>
      this.progress({
        phase: "fetching",
        height: manifest.height,
        chunksDone: done,
        chunksTotal: total,
        peers: peers.length,
      });
    report();
    /** Resolves when any request ends (a peer may have a free slot again). */
    let requestEnded: Promise<void> = Promise.resolve();
    let endRequest: () => void = () => {};
    const nextEnd = () => {
      requestEnded = new Promise((resolve) => {
        endRequest = resolve;
      });
    };
    nextEnd();
    /** A peer with a free slot, those not yet asked for this chunk and least busy first. */
    const pickPeer = (index: number): string | undefined => {
      const tried = triedFor.get(index) ?? new Set<string>();
      return peers
        .filter((peer) => (busy.get(peer) ?? 0) < MAX_IN_FLIGHT_PER_PEER)
        .sort(
          (a, b) => Number(tried.has(a)) - Number(tried.has(b)) || (busy.get(a) ?? 0) - (busy.get(b) ?? 0),
        )[0];
    };
    const worker = async (): Promise<void> => {
      while (queue.length > 0) {
        this.checkStopped();
        if (peers.length === 0) throw new CandidateFailed("every offering peer was given up on");
        const index = queue.shift() as number;
        const peer = pickPeer(index);
        if (peer === undefined) {
          // Every peer is at its limit: wait for a request to end.
          queue.unshift(index);
          await requestEnded;
          continue;
        }
        busy.set(peer, (busy.get(peer) ?? 0) + 1);
        let bytes: Uint8Array | undefined;
        try {
          bytes = await this.source.requestChunk(peer, manifest.height, index);
        } catch (error) {
          this.options.log("debug", "state sync: chunk request failed", {
            peer,
            index,
            error: String(error),
          });
        } finally {
          busy.set(peer, (busy.get(peer) ?? 1) - 1);
          endRequest();
          nextEnd();
        }
        const tried = triedFor.get(index) ?? new Set<string>();
        tried.add(peer);
        triedFor.set(index, tried);
        if (bytes === undefined) {
          const failed = (failures.get(peer) ?? 0) + 1;
          failures.set(peer, failed);
          if (failed >= MAX_PEER_FAILURES && peers.includes(peer)) peers.splice(peers.indexOf(peer), 1);
          queue.push(index);
          continue;
        }
        try {
          assembler.add(index, bytes);
        } catch (error) {
          if (!(error instanceof SnapshotError)) throw error;
          this.penalize(peers, peer, `snapshot ${manifest.height} chunk ${index}: ${error.message}`);
          queue.push(index);
          continue;
        }
        done += 1;
        report();
      }
    };
    // A worker that re-queues a chunk goes on with it itself, so when all have ended, none is missing.
    await Promise.all(Array.from({ length: Math.max(1, this.options.parallel) }, worker));
    return assembler;
  }

  /** Penalizes `peer` and stops asking it for this snapshot. */
  private penalize(peers: string[], peer: string, reason: string): void {
    this.options.log("warn", "state sync: peer served a bad snapshot part", { peer, reason });
    this.source.penalize(peer, reason);
    const at = peers.indexOf(peer);
    if (at !== -1) peers.splice(at, 1);
  }

  private progress(progress: StateSyncProgress): void {
    this.options.onProgress?.(progress);
  }

  private checkStopped(): void {
    if (this.stopped) throw new Error("state sync stopped");
  }
}
