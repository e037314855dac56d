import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { assertPendingEntry, assertPendingTx, type PendingEntryJson } from "../helpers/shapes.ts";
import { startTestNode, type TestNode } from "../helpers/testNode.ts";
import {
  accountAt,
  assertInvalidParams,
  assertNoParamsForms,
  BAD_PARAM_CONTAINERS,
  commitOne,
  type SignedTx,
  submit,
  transfer,
  userWrite,
  waitForCommit,
  waitForEmptyPool,
} from "./support.ts";

const METHOD = "chain_getPendingTransactions";

function assertPendingList(value: unknown, what: string): asserts value is PendingEntryJson[] {
  assert.ok(Array.isArray(value), `${what}: expected an array`);
  value.forEach((entry: unknown, i) => {
    assertPendingEntry(entry, `${what}[${i}]`);
  });
}

describe(METHOD, () => {
  describe("on a node that commits every 50 ms", () => {
    let t: TestNode;
    before(async () => {
      t = await startTestNode();
    });
    after(() => t?.stop()); // runs even when before() or a test fails

    it("is an empty Array on a fresh node, the same with params absent or {}", async () => {
      const [absent, empty] = await assertNoParamsForms(t, METHOD);
      assert.deepEqual(absent, []);
      assert.deepEqual(empty, []);
    });

    it("no longer lists a transaction once it is committed", async () => {
      const hash = await submit(t, transfer(accountAt(t, 1), accountAt(t, 2).address, 5));
      await waitForCommit(t, hash);
      await waitForEmptyPool(t);
      assert.deepEqual(await t.result(METHOD), []);
    });

    it("refuses params other than an empty object with -32602", async () => {
      await assertInvalidParams(t, METHOD, [
        ...BAD_PARAM_CONTAINERS,
        ["an unknown member", { status: "PENDING" }],
      ]);
    });
  });

  describe("on a node whose next block is a minute away", () => {
    let t: TestNode;
    const sent: { signed: SignedTx; hash: string }[] = [];
    before(async () => {
      t = await startTestNode({ blockTimeMs: 60_000 });
      // The genesis is old, so the first transaction is committed at once (block 1); the next
      // block may not come before a minute has passed, so what follows stays pending.
      await commitOne(t, transfer(accountAt(t, 9), accountAt(t, 8).address, 1));
      const [alice, bob] = [accountAt(t, 1), accountAt(t, 2)];
      const list = [
        transfer(alice, bob.address, 11, { nonce: 0 }),
        transfer(bob, alice.address, 22, { parent_tx_hash: `0x${"12".repeat(32)}` }),
        userWrite(alice, { pending: true }, 1),
      ];
      for (const signed of list) sent.push({ signed, hash: await submit(t, signed) });
    });
    after(() => t?.stop()); // runs even when before() or a test fails

    it("lists admitted transactions in arrival order: status PENDING, no operation", async () => {
      const pending = await t.result(METHOD);
      assertPendingList(pending, "pending");
      assert.deepEqual(
        pending.map((p) => p.hash),
        sent.map((s) => s.hash),
      );
      pending.forEach((entry, i) => {
        const { signed } = sent[i] as { signed: SignedTx };
        assert.equal(entry.status, "PENDING", `entry ${i}`);
        assert.ok(!("operation" in entry), `entry ${i} has no operation`);
        assert.equal(entry.signature, signed.signature.toLowerCase(), `entry ${i}.signature`);
        assert.equal(entry.timestamp, signed.transaction.timestamp, `entry ${i}.timestamp`);
        assert.equal(entry.nonce, signed.transaction.nonce, `entry ${i}.nonce`);
      });
      assert.deepEqual(
        pending.map((p) => p.address),
        [accountAt(t, 1).address, accountAt(t, 2).address, accountAt(t, 1).address],
      );
      assert.equal(
        pending[1]?.parent_tx_hash,
        `0x${"12".repeat(32)}`,
        "parent_tx_hash is listed when signed",
      );
      assert.ok(!("parent_tx_hash" in (pending[0] ?? {})), "no parent_tx_hash where none was signed");
    });

    it("lists what chain_getTransactionByHash reports as PENDING", async () => {
      for (const { hash } of sent) {
        const tx = await t.result("chain_getTransactionByHash", { hash });
        assertPendingTx(tx, `transaction ${hash}`);
      }
    });

    it("leaves the chain untouched: head, balances and nonces are the committed ones", async () => {
      assert.equal(await t.result("chain_getRecentBlockNumber"), 1);
      assert.equal(await t.result("chain_getNonce", { address: accountAt(t, 1).address }), 0);
      assert.equal(
        await t.result("chain_getBalance", { address: accountAt(t, 2).address }),
        1_000_000_000_000,
      );
    });
  });

  describe("on a dev node held by CHAIN_NODE_TEST_HOLD_BLOCKS (the admission benchmark's node)", () => {
    let t: TestNode;
    before(async () => {
      t = await startTestNode({ blockTimeMs: 50, faults: { holdBlocks: true } });
    });
    after(() => t?.stop());

    it("admits and lists transactions but commits none, past many block times", async () => {
      const [alice, bob] = [accountAt(t, 1), accountAt(t, 2)];
      const hashes = [];
      for (let nonce = 0; nonce < 3; nonce++) {
        hashes.push(await submit(t, transfer(alice, bob.address, 1, { nonce })));
      }
      await new Promise((resolve) => setTimeout(resolve, 500)); // ten block times
      const pending = await t.result<PendingEntryJson[]>(METHOD);
      assert.deepEqual(
        pending.map((entry) => entry.hash),
        hashes,
      );
      assert.equal(await t.result<number>("chain_getRecentBlockNumber"), 0, "no block was made");
    });
  });
});
