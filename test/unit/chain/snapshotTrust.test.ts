import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import {
  Chain,
  checkSnapshotTrust,
  type LinkedBlock,
  type SnapshotManifest,
  trustRange,
  type TrustAnchor,
} from "../../../src/chain/index.ts";
import type { DerivedAccount } from "../../../src/crypto/index.ts";
import { writeSnapshotFile } from "../../../src/node/snapshotFile.ts";
import { LmdbStore } from "../../../src/storage/index.ts";
import { serveBlocks } from "../../../src/sync/index.ts";
import { DEV_ACCOUNTS, DEV_GENESIS, produceSigned } from "../../helpers/signedDevChain.ts";

/**
 * checkSnapshotTrust (src/chain/snapshotTrust.ts): a snapshot is believed only through hashes
 * from the operator's trusted block, and the validator sets the restored state cannot vouch for
 * must verify certificates those hashes bind. A dev chain of 7 blocks with real certificates,
 * snapshotted at block 4.
 */

const ACCOUNTS = DEV_ACCOUNTS;
const GENESIS = DEV_GENESIS;
const SNAPSHOT_AT = 4;

describe("checkSnapshotTrust", () => {
  const dir = mkdtempSync(join(tmpdir(), "chain-node-trust-"));
  let store: LmdbStore;
  let manifest: SnapshotManifest;
  const blocks = (from: number, to: number): LinkedBlock[] => [
    ...serveBlocks(store, from, to, to - from + 1),
  ];
  const anchorAt = (height: number): TrustAnchor => ({
    height,
    hash: store.getBlock(height)?.hash as string,
  });

  before(async () => {
    store = new LmdbStore(join(dir, "data"));
    const chain = new Chain(store, GENESIS);
    await chain.open();
    for (let i = 0; i < SNAPSHOT_AT; i++) await produceSigned(chain, []);
    const view = store.snapshotView();
    try {
      manifest = await writeSnapshotFile(view, GENESIS, join(dir, "at4.snapshot"));
    } finally {
      view.done();
    }
    for (let i = 0; i < 3; i++) await produceSigned(chain, []);
  });
  after(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("believes a snapshot reached by hashes from a trusted block below it, or at it", () => {
    for (const trusted of [1, 2, SNAPSHOT_AT]) {
      const anchor = anchorAt(trusted);
      const { from, to } = trustRange(manifest, anchor);
      assert.deepEqual([from, to], [trusted + 1, SNAPSHOT_AT + 2]);
      assert.deepEqual(
        checkSnapshotTrust(manifest, anchor, blocks(from, to)),
        { ok: true },
        `trusted ${trusted}`,
      );
    }
  });

  it("refuses a trusted hash the chain does not lead from, and a snapshot below the trusted height", () => {
    const wrong = { height: 2, hash: store.getBlock(1)?.hash as string };
    const refused = checkSnapshotTrust(manifest, wrong, blocks(3, 6));
    assert.equal(refused.ok, false);
    assert.match((refused as { message: string }).message, /does not link to the trusted chain/);
    const atSnapshot = { height: SNAPSHOT_AT, hash: store.getBlock(1)?.hash as string };
    assert.match(
      (checkSnapshotTrust(manifest, atSnapshot, blocks(5, 6)) as { message: string }).message,
      /not the trusted/,
    );
    const above = anchorAt(SNAPSHOT_AT + 1);
    assert.match(
      (checkSnapshotTrust(manifest, above, blocks(6, 6)) as { message: string }).message,
      /below the trusted height/,
    );
  });

  it("refuses a tampered or missing block of the range", () => {
    const anchor = anchorAt(1);
    const range = blocks(2, 6);
    const tampered = range.map((b, i) =>
      i === 1 ? { ...b, header: { ...b.header, timestamp: b.header.timestamp + 1 } } : b,
    );
    assert.match(
      (checkSnapshotTrust(manifest, anchor, tampered) as { message: string }).message,
      /does not link/,
    );
    assert.match(
      (checkSnapshotTrust(manifest, anchor, range.slice(0, -1)) as { message: string }).message,
      /expected blocks 2..6/,
    );
    const forgedCertificate = range.map((b, i) =>
      i === range.length - 1
        ? { ...b, last_commit: { ...(b.last_commit as NonNullable<LinkedBlock["last_commit"]>), round: 1 } }
        : b,
    );
    assert.match(
      (checkSnapshotTrust(manifest, anchor, forgedCertificate) as { message: string }).message,
      /certificate its header does not hash/,
    );
  });

  it("refuses a manifest whose validator set after the snapshot is not the one that signed", () => {
    const impostor = ACCOUNTS[5] as DerivedAccount;
    const forged: SnapshotManifest = {
      ...manifest,
      validator_sets: [
        ...manifest.validator_sets,
        { from_height: SNAPSHOT_AT + 1, validators: [{ address: impostor.address, stake: 1_000_000 }] },
      ],
    };
    const refused = checkSnapshotTrust(forged, anchorAt(1), blocks(2, 6));
    assert.match(
      (refused as { message: string }).message,
      /validator set of height 5 does not verify its certificate/,
    );
  });
});
