import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { assertBlock, type ConfirmedTxJson } from "../helpers/shapes.ts";
import type { TestNode } from "../helpers/testNode.ts";
import {
  assertInvalidParams,
  BAD_BOOLEANS,
  BAD_HASHES,
  startSampleChain,
  invalidParamCases,
  UNKNOWN_HASH,
} from "./support.ts";

const METHOD = "chain_getBlockByHash";

describe(METHOD, () => {
  let t: TestNode;
  let sample: ConfirmedTxJson[][];
  let hashes: string[];
  before(async () => ({ t, sample, hashes } = await startSampleChain()));
  after(() => t?.stop()); // runs even when before() or a test fails

  it("returns the same block as chain_getBlockByNumber, hashes only or full", async () => {
    for (const [number, hash] of hashes.entries()) {
      for (const full of [undefined, false, true]) {
        const params = full === undefined ? { hash } : { hash, getFullTransactions: full };
        const block = await t.result(METHOD, params);
        if (full === true) assertBlock(block, true, `block ${number} by hash (full)`);
        else assertBlock(block, false, `block ${number} by hash (${String(full)})`);
        assert.equal(block.hash, hash);
        const byNumber = await t.result("chain_getBlockByNumber", {
          number,
          getFullTransactions: full === true,
        });
        assert.deepEqual(block, byNumber, `block ${number}, getFullTransactions ${String(full)}`);
      }
    }
  });

  it('gives the genesis block with parent_hash ""', async () => {
    const block = await t.result(METHOD, { hash: hashes[0] });
    assertBlock(block, false, "block 0");
    assert.equal(block.number, 0);
    assert.equal(block.parent_hash, "");
  });

  it("gives full transaction objects only when getFullTransactions is true", async () => {
    const full = await t.result(METHOD, { hash: hashes[2], getFullTransactions: true });
    assertBlock(full, true, "block 2 (full)");
    assert.deepEqual(
      full.transactions.map((tx) => tx.hash),
      sample[1]?.map((tx) => tx.hash),
    );
    const bare = await t.result(METHOD, { hash: hashes[2] });
    assertBlock(bare, false, "block 2 (hashes)");
    assert.deepEqual(
      bare.transactions,
      sample[1]?.map((tx) => tx.hash),
    );
  });

  it("accepts the hash in upper case", async () => {
    const hash = hashes[1] as string;
    const upper = `0x${hash.slice(2).toUpperCase()}`;
    const block = await t.result(METHOD, { hash: upper });
    assertBlock(block, false, "block 1 by upper-case hash");
    assert.equal(block.number, 1);
  });

  it("returns null for an unknown hash, and for a transaction's hash", async () => {
    assert.equal(await t.result(METHOD, { hash: UNKNOWN_HASH }), null);
    assert.equal(await t.result(METHOD, { hash: UNKNOWN_HASH, getFullTransactions: true }), null);
    assert.equal(await t.result(METHOD, { hash: sample[0]?.[0]?.hash }), null);
  });

  it("refuses invalid params with -32602 invalid_params", async () => {
    await assertInvalidParams(
      t,
      METHOD,
      invalidParamCases(
        { hash: UNKNOWN_HASH, getFullTransactions: false },
        { hash: BAD_HASHES, getFullTransactions: BAD_BOOLEANS },
        ["getFullTransactions"],
      ),
    );
  });
});
