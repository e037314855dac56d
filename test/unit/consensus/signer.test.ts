import assert from "node:assert/strict";
import fs, { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import {
  ConsensusSigner,
  DoubleSignError,
  readSigningLog,
  recoverBodySigner,
  type SignedProposal,
  type VoteBody,
} from "../../../src/consensus/index.ts";
import { hexToBytes } from "../../../src/crypto/index.ts";

const KEY = hexToBytes("0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80");
const HASH = `0x${"a".repeat(64)}`;
const OTHER = `0x${"b".repeat(64)}`;

const prevote = (height: number, round: number, block_hash: string): VoteBody => ({
  type: "prevote",
  chain_id: 9,
  height,
  round,
  block_hash,
});

describe("ConsensusSigner", () => {
  const dir = mkdtempSync(join(tmpdir(), "chain-node-signer-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("signs in the transaction format, recoverable to its address", () => {
    const signer = ConsensusSigner.open(join(dir, "a.jsonl"), KEY);
    const body = prevote(1, 0, HASH);
    assert.equal(recoverBodySigner(body, signer.sign(body)), signer.address);
    signer.close();
  });

  it("returns the same signature for the identical message and refuses a different one at the same step", () => {
    const signer = ConsensusSigner.open(join(dir, "b.jsonl"), KEY);
    const first = signer.sign(prevote(2, 0, HASH));
    assert.equal(signer.sign(prevote(2, 0, HASH)), first);
    assert.throws(() => signer.sign(prevote(2, 0, OTHER)), DoubleSignError);
    assert.throws(() => signer.sign(prevote(2, 0, "")), DoubleSignError, "nil is a different vote too");
    assert.throws(() => signer.sign(prevote(1, 5, HASH)), DoubleSignError, "nothing below the last step");
    signer.sign({ ...prevote(2, 0, HASH), type: "precommit" });
    signer.sign(prevote(2, 1, ""));
    signer.close();
  });

  it("keeps a proposal durably: the file is synced, renamed into place, then its directory synced", (t) => {
    // Without the directory's fsync the rename may not survive a power loss, and a restarted
    // validator whose log says it voted for a block would not hold that block.
    const signer = ConsensusSigner.open(join(dir, "p.jsonl"), KEY);
    const steps: string[] = [];
    const fsyncSync = fs.fsyncSync;
    const renameSync = fs.renameSync;
    t.mock.method(fs, "fsyncSync", (fd: number) => {
      steps.push(fs.fstatSync(fd).isDirectory() ? "fsync directory" : "fsync file");
      fsyncSync(fd);
    });
    t.mock.method(fs, "renameSync", (from: string, to: string) => {
      steps.push("rename");
      renameSync(from, to);
    });
    syncBuiltinESMExports();
    try {
      const proposal = { proposal: { height: 3, round: 0, block_hash: HASH } } as unknown as SignedProposal;
      signer.saveProposal(proposal);
      assert.deepEqual(steps, ["fsync file", "rename", "fsync directory"]);
    } finally {
      t.mock.restoreAll();
      syncBuiltinESMExports();
      signer.close();
    }
    const reopened = ConsensusSigner.open(join(dir, "p.jsonl"), KEY);
    assert.equal(reopened.savedProposals(3).length, 1, "read back after a reopen");
    reopened.close();
  });

  it("remembers across a reopen (a restart after kill -9), ignoring a torn last line", () => {
    const path = join(dir, "c.jsonl");
    const signer = ConsensusSigner.open(path, KEY);
    signer.sign(prevote(5, 3, HASH));
    signer.close();
    appendFileSync(path, '{"height":5,"round":4,"st'); // a write cut by the crash, never fsynced
    const reopened = ConsensusSigner.open(path, KEY);
    assert.equal(reopened.lastSigned()?.round, 3);
    assert.throws(() => reopened.sign(prevote(5, 3, OTHER)), DoubleSignError);
    reopened.sign(prevote(5, 4, OTHER));
    reopened.close();
    const records = readSigningLog(readFileSync(path, "utf8"));
    assert.deepEqual(
      records.map((r) => `${r.height}/${r.round}/${r.step}`),
      ["5/3/2", "5/4/2"],
      "the torn line is skipped and did not swallow the next record",
    );
  });
});
