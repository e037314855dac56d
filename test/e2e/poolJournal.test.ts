import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { devAccounts } from "../../src/node/index.ts";
import { freePort, type NodeProcess, rpc, spawnNode } from "../helpers/process.ts";
import { signTx, transferBody, waitFor } from "../helpers/testNode.ts";

describe("pool journal", () => {
  const home = mkdtempSync(join(tmpdir(), "chain-node-pool-"));
  let node: NodeProcess | undefined;
  after(async () => {
    await node?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it("keeps pending transactions across a restart and commits them afterwards", async () => {
    const port = await freePort();
    const base = ["dev", "--home", home, "--rpc-port", String(port), "--log-level", "warn"];
    // A one-minute block time: the dev genesis is minutes old at most, so nothing commits yet.
    node = await spawnNode([...base, "--block-time", "600000"], port);
    const [, alice, bob] = devAccounts();
    if (alice === undefined || bob === undefined) throw new Error("dev accounts missing");
    const hashes: string[] = [];
    for (let nonce = 0; nonce < 3; nonce++) {
      const signed = signTx(alice.privateKey, transferBody(alice.address, bob.address, 10, nonce));
      hashes.push(await rpc<string>(node.url, "chain_sendSignedTransaction", signed));
    }
    const before = await rpc<{ hash: string }[]>(node.url, "chain_getPendingTransactions");
    assert.deepEqual(
      before.map((tx) => tx.hash),
      hashes,
      "all three are pending before the restart",
    );
    assert.equal(await node.stop(), 0, "SIGTERM stops the node cleanly with exit code 0");

    node = await spawnNode([...base, "--block-time", "50"], port);
    const url = node.url;
    const pendingAfter = await rpc<{ hash: string }[]>(url, "chain_getPendingTransactions");
    // They may already be in a block by now; each must be pending or committed, never lost.
    for (const hash of hashes) {
      const tx = await rpc<{ status?: string; block_number?: number } | null>(
        url,
        "chain_getTransactionByHash",
        { hash },
      );
      assert.ok(tx !== null, `${hash} survived the restart`);
    }
    assert.ok(pendingAfter.length <= 3);
    await waitFor("the restored transactions to commit", async () =>
      (await rpc<number>(url, "chain_getNonce", { address: alice.address })) === 3 ? true : undefined,
    );
    assert.equal(await rpc<number>(url, "chain_getBalance", { address: bob.address }), 1_000_000_000_030);
  });
});
