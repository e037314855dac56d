import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { canonicalJson, keccakHex } from "../../src/crypto/index.ts";
import { assertBlock, type ConfirmedTxJson } from "../helpers/shapes.ts";
import type { TestNode } from "../helpers/testNode.ts";
import {
  accountAt,
  assertInvalidParams,
  BAD_BOOLEANS,
  BAD_NUMBERS,
  startSampleChain,
  invalidParamCases,
} from "./support.ts";

const METHOD = "chain_getBlockByNumber";

describe(METHOD, () => {
  let t: TestNode;
  let sample: ConfirmedTxJson[][];
  before(async () => ({ t, sample } = await startSampleChain()));
  after(() => t?.stop()); // runs even when before() or a test fails

  it('returns the genesis block 0 with parent_hash "" and the genesis validators', async () => {
    const block = await t.result(METHOD, { number: 0 });
    assertBlock(block, false, "block 0");
    assert.equal(block.number, 0);
    assert.equal(block.parent_hash, "");
    assert.deepEqual(block.transactions, []);
    assert.equal(block.timestamp, t.genesis.genesis_time);
    assert.deepEqual(block.validators, [accountAt(t, 0).address]);
  });

  it("gives transaction hashes when getFullTransactions is omitted or false", async () => {
    const expected = sample[1]?.map((tx) => tx.hash);
    for (const params of [{ number: 2 }, { number: 2, getFullTransactions: false }]) {
      const block = await t.result(METHOD, params);
      assertBlock(block, false, `block 2 with ${JSON.stringify(params)}`);
      assert.deepEqual(block.transactions, expected, `hashes in block order with ${JSON.stringify(params)}`);
    }
  });

  it("gives full transaction objects when getFullTransactions is true", async () => {
    const block = await t.result(METHOD, { number: 2, getFullTransactions: true });
    assertBlock(block, true, "block 2");
    assert.equal(block.transactions.length, 3);
    block.transactions.forEach((tx, i) => {
      const confirmed = sample[1]?.[i] as ConfirmedTxJson;
      const { block_hash: _h, block_number: _n, index: _i, result: _r, ...inBlock } = confirmed;
      assert.deepEqual(tx, inBlock, `transaction ${i} of block 2 equals chain_getTransactionByHash's`);
    });
    assert.equal(block.transactions[0]?.parent_tx_hash, sample[0]?.[0]?.hash, "parent_tx_hash is kept");
    assert.ok(
      !("parent_tx_hash" in (block.transactions[1] ?? {})),
      "no parent_tx_hash where none was signed",
    );
  });

  it("links blocks: each parent_hash is the previous block's hash; proposer and validators are the validator", async () => {
    let previous = "";
    for (let number = 0; number <= 2; number++) {
      const block = await t.result(METHOD, { number });
      assertBlock(block, false, `block ${number}`);
      assert.equal(block.number, number);
      assert.equal(block.parent_hash, previous, `block ${number}.parent_hash`);
      if (number > 0) {
        assert.equal(block.proposer, accountAt(t, 0).address, `block ${number}.proposer`);
        assert.deepEqual(block.validators, [accountAt(t, 0).address], `block ${number}.validators`);
        assert.equal(block.hash, sample[number - 1]?.[0]?.block_hash, `block ${number}.hash`);
      }
      previous = block.hash;
    }
  });

  it("reports a hash and size that can be recomputed from what it returns (DESIGN.md §5)", async () => {
    for (let number = 0; number <= 2; number++) {
      const block = await t.result<Record<string, unknown>>(METHOD, { number, getFullTransactions: true });
      assertBlock(block, true, `block ${number}`);
      const header = {
        parent_hash: block.parent_hash,
        number: block.number,
        timestamp: block.timestamp,
        proposer: block.proposer,
        transactions_hash: block.transactions_hash,
        state_root: block.state_root,
        last_commit_hash: block.last_commit_hash,
        size: block.size,
      };
      assert.equal(keccakHex(canonicalJson(header)), block.hash, `block ${number}: hash of its header`);
      assert.equal(
        Buffer.byteLength(canonicalJson(block.transactions)),
        block.size,
        `block ${number}: size is the byte length of its transactions' canonical JSON`,
      );
    }
  });

  it("returns null for a number beyond the head", async () => {
    const head = await t.result<number>("chain_getRecentBlockNumber");
    for (const number of [head + 1, head + 1000, Number.MAX_SAFE_INTEGER]) {
      assert.equal(await t.result(METHOD, { number }), null, `block ${number}`);
      assert.equal(
        await t.result(METHOD, { number, getFullTransactions: true }),
        null,
        `full block ${number}`,
      );
    }
  });

  it("refuses invalid params with -32602 invalid_params", async () => {
    await assertInvalidParams(
      t,
      METHOD,
      invalidParamCases(
        { number: 1, getFullTransactions: true },
        { number: BAD_NUMBERS, getFullTransactions: BAD_BOOLEANS },
        ["getFullTransactions"],
      ),
    );
  });
});
