import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import {
  Chain,
  chunksHash,
  encodeManifest,
  manifestHash,
  type SnapshotManifest,
} from "../../../src/chain/index.ts";
import type { DerivedAccount } from "../../../src/crypto/index.ts";
import { openSnapshotFile, writeSnapshotFile } from "../../../src/node/snapshotFile.ts";
import { LmdbStore } from "../../../src/storage/index.ts";
import { type SnapshotSource, StateSync, serveBlocks } from "../../../src/sync/index.ts";
import { DEV_ACCOUNTS, DEV_GENESIS, devTransfer, produceSigned } from "../../helpers/signedDevChain.ts";

/**
 * The state-sync client (src/sync/stateSync.ts) against peers simulated over a real dev chain's
 * snapshots: it takes the highest trusted snapshot, fetches chunks from several peers, refuses a
 * corrupt chunk (penalizing its server) and gets it from another, refuses a manifest that does
 * not hash to its offer, and gives up on a snapshot the trusted chain does not lead to.
 */

const ACCOUNTS = DEV_ACCOUNTS;
const GENESIS = DEV_GENESIS;

interface Served {
  manifest: SnapshotManifest;
  manifestBytes: Uint8Array;
  chunks: Uint8Array[];
}

/** A peer: what it offers and serves; `corrupt` flips a byte of every chunk it serves. */
interface FakePeer {
  id: string;
  snapshots: Served[];
  corrupt?: boolean;
  /** Offers this hash for its snapshots instead of the real one. */
  lieAboutHash?: boolean;
}

function sourceOf(
  peers: FakePeer[],
  store: LmdbStore,
): SnapshotSource & { penalized: string[]; chunkServers: string[] } {
  const find = (peer: string) => peers.find((p) => p.id === peer) as FakePeer;
  const penalized: string[] = [];
  const chunkServers: string[] = [];
  return {
    penalized,
    chunkServers,
    peers: () => peers.map((p) => ({ id: p.id, head: store.headNumber() ?? 0 })),
    requestBlocks: async (_peer, from, to) => [...serveBlocks(store, from, to, 100)],
    penalize: (peer, reason) => penalized.push(`${peer}: ${reason}`),
    listSnapshots: async (peer) =>
      find(peer).snapshots.map((s) => ({
        height: s.manifest.height,
        manifest_hash: find(peer).lieAboutHash ? `0x${"ab".repeat(32)}` : manifestHash(s.manifest),
        chunks_hash: chunksHash(s.manifest),
      })),
    requestManifest: async (peer, height) =>
      find(peer).snapshots.find((s) => s.manifest.height === height)?.manifestBytes,
    requestChunk: async (peer, height, index) => {
      const served = find(peer).snapshots.find((s) => s.manifest.height === height)?.chunks[index];
      if (served === undefined) return undefined;
      chunkServers.push(peer);
      if (!find(peer).corrupt) return served;
      const bad = new Uint8Array(served); // a copy (Buffer.slice would be a view of the served chunk)
      bad[bad.length - 2] = (bad[bad.length - 2] as number) ^ 1;
      return bad;
    },
  };
}

describe("StateSync (the client)", () => {
  const dir = mkdtempSync(join(tmpdir(), "chain-node-state-sync-"));
  let store: LmdbStore;
  const snapshots: Served[] = [];

  /** A snapshot of the store's head, cut into small chunks so that there are many. */
  async function snapshot(): Promise<Served> {
    const file = join(dir, `${store.headNumber()}.snapshot`);
    const view = store.snapshotView();
    try {
      await writeSnapshotFile(view, GENESIS, file, { chunkTargetBytes: 400 });
    } finally {
      view.done();
    }
    const opened = await openSnapshotFile(file);
    try {
      const chunks: Uint8Array[] = [];
      for (let i = 0; i < opened.manifest.chunks.length; i++) chunks.push(await opened.readChunk(i));
      return { manifest: opened.manifest, manifestBytes: encodeManifest(opened.manifest), chunks };
    } finally {
      await opened.close();
    }
  }

  before(async () => {
    store = new LmdbStore(join(dir, "data"));
    const chain = new Chain(store, GENESIS);
    await chain.open();
    const [a, b] = ACCOUNTS.slice(1, 3) as [DerivedAccount, DerivedAccount];
    for (let height = 1; height <= 8; height++) {
      await produceSigned(chain, [devTransfer(a, b, 1, height - 1), devTransfer(b, a, 1, height - 1)]);
      if (height === 3 || height === 6) snapshots.push(await snapshot());
    }
  });
  after(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A manual clock: each pause moves it on, so giving up takes no real time. */
  const options = (trustHeight: number) => {
    let clock = 0;
    return {
      genesis: GENESIS,
      trust: { height: trustHeight, hash: store.getBlock(trustHeight)?.hash as string },
      parallel: 3,
      giveUpMs: 1_000,
      retryMs: 100,
      log: () => {},
      now: () => clock,
      sleep: async (ms: number) => {
        clock += ms;
      },
    };
  };

  it("takes the highest trusted snapshot, from several peers, and rebuilds its state", async () => {
    const peers: FakePeer[] = ["a", "b", "c"].map((id) => ({ id, snapshots }));
    const source = sourceOf(peers, store);
    const progress: number[] = [];
    const sync = new StateSync(source, { ...options(2), onProgress: (p) => progress.push(p.chunksDone) });
    const { manifest, restore } = await sync.run(0);
    assert.equal(manifest.height, 6);
    assert.equal(restore.block.hash, store.getBlock(6)?.hash);
    assert.ok(manifest.chunks.length >= 4, `${manifest.chunks.length} chunks`);
    assert.equal(new Set(source.chunkServers).size, 3, "chunks came from every peer");
    assert.deepEqual(source.penalized, []);
    assert.equal(Math.max(...progress), manifest.chunks.length);
  });

  it("refuses a corrupt chunk, penalizes its server, and takes the chunk from another peer", async () => {
    const peers: FakePeer[] = [
      { id: "honest-1", snapshots },
      { id: "corrupt", snapshots, corrupt: true },
      { id: "honest-2", snapshots },
    ];
    const source = sourceOf(peers, store);
    const { restore } = await new StateSync(source, options(2)).run(0);
    assert.equal(restore.block.hash, store.getBlock(6)?.hash);
    assert.equal(source.penalized.length, 1, source.penalized.join("\n"));
    assert.match(source.penalized[0] as string, /^corrupt: snapshot 6 chunk \d+/);
    const afterPenalty = source.chunkServers.slice(source.chunkServers.indexOf("corrupt") + 1);
    assert.ok(!afterPenalty.includes("corrupt"), "the corrupt peer is not asked again");
  });

  it("penalizes a manifest that does not hash to its offer, and uses an honest peer's", async () => {
    const peers: FakePeer[] = [
      { id: "liar", snapshots, lieAboutHash: true },
      { id: "honest", snapshots },
    ];
    const source = sourceOf(peers, store);
    const { manifest } = await new StateSync(source, options(1)).run(0);
    assert.equal(manifest.height, 6);
    // The liar's offer names a hash no manifest has: its candidate is tried and it is penalized.
    assert.ok(source.penalized.some((p) => p.startsWith("liar: snapshot 6: the manifest does not hash")));
  });

  it("skips snapshots below the trusted height, and gives up when none is left", async () => {
    const source = sourceOf([{ id: "a", snapshots: [snapshots[0] as Served] }], store);
    await assert.rejects(
      new StateSync(source, options(4)).run(0),
      /no peer offered a usable snapshot at or above trust_height 4/,
    );
  });

  it("takes an honest peer's manifest of the same chunks when another peer's is forged", async () => {
    const real = snapshots[1] as Served;
    const forgedManifest: SnapshotManifest = {
      ...real.manifest,
      validator_sets: [
        ...real.manifest.validator_sets,
        {
          from_height: 7,
          validators: [{ address: (ACCOUNTS[7] as DerivedAccount).address, stake: 1_000_000 }],
        },
      ],
    };
    const forged: Served = {
      ...real,
      manifest: forgedManifest,
      manifestBytes: encodeManifest(forgedManifest),
    };
    const source = sourceOf(
      [
        { id: "forger", snapshots: [forged] },
        { id: "honest", snapshots: [real] },
      ],
      store,
    );
    const refused: string[] = [];
    const sync = new StateSync(source, {
      ...options(2),
      log: (_level, message, fields) => refused.push(`${message} ${String(fields?.peer)}`),
    });
    const { manifest } = await sync.run(0);
    assert.equal(manifest.height, 6, "the snapshot at 6 is taken, not given up for the forger's manifest");
    assert.equal(manifestHash(manifest), manifestHash(real.manifest));
    assert.ok(
      refused.includes("state sync: a peer's manifest is not the trusted chain's forger"),
      refused.join("\n"),
    );
  });

  it("gives up on a snapshot the trusted chain does not lead to, and takes a lower one that it does", async () => {
    const good = snapshots[0] as Served;
    const forgedManifest: SnapshotManifest = {
      ...(snapshots[1] as Served).manifest,
      validator_sets: [
        ...(snapshots[1] as Served).manifest.validator_sets,
        {
          from_height: 7,
          validators: [{ address: (ACCOUNTS[7] as DerivedAccount).address, stake: 1_000_000 }],
        },
      ],
    };
    const forged: Served = {
      ...(snapshots[1] as Served),
      manifest: forgedManifest,
      manifestBytes: encodeManifest(forgedManifest),
    };
    const source = sourceOf([{ id: "a", snapshots: [good, forged] }], store);
    const warnings: string[] = [];
    const sync = new StateSync(source, {
      ...options(2),
      log: (_level, _message, fields) => warnings.push(String(fields?.reason)),
    });
    const { manifest } = await sync.run(0);
    assert.equal(manifest.height, 3);
    assert.ok(
      warnings.some((w) => /validator set of height 7 does not verify/.test(w)),
      warnings.join("\n"),
    );
  });
});
