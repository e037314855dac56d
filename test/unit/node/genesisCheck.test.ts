import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { genesisBlock } from "../../../src/chain/index.ts";
import { NO_TEST_FAULTS } from "../../../src/faults/index.ts";
import {
  createSnapshot,
  devAccounts,
  devGenesis,
  exportChain,
  importChain,
} from "../../../src/node/index.ts";
import { genesisDigest, rememberedGenesisHash, rememberGenesisHash } from "../../../src/node/genesisCheck.ts";
import { homePaths, loadGenesis, saveGenesis } from "../../../src/node/home.ts";
import { startTestNode } from "../../helpers/testNode.ts";

/** The genesis startTestNode gives a home (test/helpers/testNode.ts). */
const GENESIS = devGenesis(devAccounts(), 1_700_000_000_000);
const BLOCK0 = genesisBlock(GENESIS).hash;
const HASH_A = `0x${"ab".repeat(32)}`;

describe("block 0's hash remembered per home (node/genesisCheck.ts)", () => {
  const root = mkdtempSync(join(tmpdir(), "chain-node-genesis-check-"));
  after(() => rmSync(root, { recursive: true, force: true }));

  /** A home whose node opened its chain once (so it holds the record), with its genesis.json. */
  const openedHome = async (name: string): Promise<string> => {
    const home = join(root, name);
    const node = await startTestNode({ home, keepHome: true });
    await node.stop();
    saveGenesis(home, GENESIS);
    return home;
  };

  it("digests the genesis itself: the same after a round trip through genesis.json, another for another chain", () => {
    const home = join(root, "digest");
    saveGenesis(home, GENESIS);
    assert.equal(genesisDigest(loadGenesis(home)), genesisDigest(GENESIS));
    assert.notEqual(genesisDigest({ ...GENESIS, chain_id: GENESIS.chain_id + 1 }), genesisDigest(GENESIS));
  });

  it("gives the hash only for the digest it was recorded for; a missing or torn record is none", () => {
    const home = join(root, "records");
    const digest = genesisDigest(GENESIS);
    assert.equal(rememberedGenesisHash(home, digest), undefined, "no record");
    mkdirSync(homePaths(home).data, { recursive: true });
    rememberGenesisHash(home, digest, HASH_A);
    assert.equal(rememberedGenesisHash(home, digest), HASH_A);
    assert.equal(rememberedGenesisHash(home, "00".repeat(32)), undefined, "another genesis");
    writeFileSync(homePaths(home).genesisCheck, '{"digest":');
    assert.equal(rememberedGenesisHash(home, digest), undefined, "a torn file");
  });

  it("a node records it when its chain opens, opens again from it, and still refuses another chain", async () => {
    const home = join(root, "node");
    const first = await startTestNode({ home, keepHome: true });
    await first.stop();
    assert.equal(rememberedGenesisHash(home, genesisDigest(GENESIS)), BLOCK0, "recorded at the first open");

    const again = await startTestNode({ home, keepHome: true });
    const head = await again.call("chain_getBlockByNumber", { number: 0 });
    await again.stop();
    assert.equal((head.result as { hash: string }).hash, BLOCK0);

    // Another genesis has another digest: built and compared, and refused.
    await assert.rejects(
      startTestNode({ home, keepHome: true, genesis: (base) => ({ ...base, chain_id: base.chain_id + 1 }) }),
      /the data directory holds another chain/,
    );
    // A record that names a wrong block 0 for this genesis is believed, and the store refuses it:
    // what makes the node's chain data the one it serves is the stored block 0, not the record.
    rememberGenesisHash(home, genesisDigest(GENESIS), HASH_A);
    await assert.rejects(
      startTestNode({ home, keepHome: true }),
      /another chain \(genesis 0x[0-9a-f]{64}, expected 0x(ab){32}\)/,
    );
  });

  it("snapshot create takes block 0's hash from the record instead of building block 0", async () => {
    const home = await openedHome("snapshot");
    const out = join(root, "a.snapshot");
    const made = await createSnapshot({ home, out, faults: NO_TEST_FAULTS });
    assert.equal(made.manifest.genesis_hash, BLOCK0);
    // Proof that the record is what it used: a wrong one makes the stored block 0 "another chain".
    rememberGenesisHash(home, genesisDigest(GENESIS), HASH_A);
    await assert.rejects(
      createSnapshot({ home, out: join(root, "b.snapshot"), faults: NO_TEST_FAULTS }),
      /another chain than genesis\.json \(genesis 0x(ab){32}\)/,
    );
    assert.equal(existsSync(join(root, "b.snapshot")), false);
  });

  it("import into a home of the same genesis compares the file's block 0 with the record", async () => {
    const home = await openedHome("import");
    const file = join(root, "chain.ndjson");
    await exportChain({ home, out: file });
    const again = await importChain({ home, file });
    assert.deepEqual([again.imported, again.wroteGenesis], [0, false]);
    // Proof that the record is what it compared: a wrong one refuses the file as another chain's.
    rememberGenesisHash(home, genesisDigest(GENESIS), HASH_A);
    await assert.rejects(importChain({ home, file }), /genesis\.json of chain \d+ \(genesis 0x(ab){32}\)/);
  });
});
