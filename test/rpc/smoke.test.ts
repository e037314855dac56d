import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { DerivedAccount } from "../../src/crypto/index.ts";
import { signTx, startTestNode, type TestNode, transferBody, waitFor } from "../helpers/testNode.ts";

for (const writeThread of [false, true]) {
  describe(`dev node smoke${writeThread ? " (storage.write_thread)" : ""}`, () => {
    let t: TestNode;
    before(async () => {
      t = await startTestNode({ storage: { writeThread } });
    });
    after(async () => {
      await t?.stop();
    });

    it("commits a transfer and reports it consistently", async () => {
      const [, alice, bob] = t.accounts as [DerivedAccount, DerivedAccount, DerivedAccount];
      const signed = signTx(alice.privateKey, transferBody(alice.address, bob.address, 500, 0));
      const hash = await t.result<string>("chain_sendSignedTransaction", signed);
      const tx = await waitFor("transfer to be committed", async () => {
        const found = await t.result<{ block_number?: number } | null>("chain_getTransactionByHash", {
          hash,
        });
        return found?.block_number === undefined ? undefined : found;
      });
      assert.equal(await t.result("chain_getBalance", { address: bob.address }), 1_000_000_000_500);
      assert.equal(await t.result("chain_getNonce", { address: alice.address }), 1);
      assert.equal(await t.result("chain_getRecentBlockNumber"), tx.block_number);
    });
  });
}
