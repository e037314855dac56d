import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { devAccounts } from "../../src/node/index.ts";
import { freePort, type NodeProcess, rpc, spawnNode } from "../helpers/process.ts";
import { signTx, transferBody, waitFor } from "../helpers/testNode.ts";

interface BlockHeaderJson {
  number: number;
  hash: string;
}

const KILLS = 3;
const INITIAL_BALANCE = 1_000_000_000_000;

/**
 * kill -9 while transfers stream in, three times: after each restart every block seen before the
 * kill is still there with the same hash, every hash the node returned is in a block or still
 * pending, and the balances add up exactly to the committed nonces.
 */
describe("crash recovery (SIGKILL)", () => {
  const home = mkdtempSync(join(tmpdir(), "chain-node-crash-"));
  let node: NodeProcess | undefined;
  after(async () => {
    await node?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it("keeps every reported block and every acknowledged transaction", async () => {
    const port = await freePort();
    const args = [
      "dev",
      "--home",
      home,
      "--rpc-port",
      String(port),
      "--block-time",
      "50",
      "--log-level",
      "warn",
    ];
    const senders = devAccounts().slice(1, 9);
    const recipient = devAccounts()[9]?.address as string;
    const acknowledged: string[] = [];
    const seenBlocks = new Map<number, string>();

    for (let round = 0; round < KILLS; round++) {
      node = await spawnNode(args, port);
      const url = node.url;
      let streaming = true;
      // Each sender streams ordered transfers, one at a time, from its committed-or-pending nonce.
      const streams = senders.map(async (account) => {
        let nonce =
          (await rpc<number>(url, "chain_getNonce", { address: account.address })) +
          (await rpc<{ address: string }[]>(url, "chain_getPendingTransactions")).filter(
            (tx) => tx.address === account.address,
          ).length;
        while (streaming) {
          const body = transferBody(account.address, recipient, 1, nonce, `r${round}n${nonce}`);
          try {
            acknowledged.push(
              await rpc<string>(url, "chain_sendSignedTransaction", signTx(account.privateKey, body)),
            );
            nonce++;
          } catch {
            return; // the node died mid-request: that hash was never acknowledged
          }
        }
      });
      const watcher = (async () => {
        while (streaming) {
          try {
            const head = await rpc<number>(url, "chain_getRecentBlockNumber");
            const headers = await rpc<BlockHeaderJson[]>(url, "chain_getBlockHeaders", {
              from: Math.max(0, head - 20),
              to: head,
            });
            for (const header of headers) seenBlocks.set(header.number, header.hash);
          } catch {
            return;
          }
          await new Promise((resolve) => setTimeout(resolve, 30));
        }
      })();
      const target = { blocks: seenBlocks.size + 5, txs: acknowledged.length + 50 + round * 37 };
      await waitFor(
        `round ${round}: ${target.blocks} blocks and ${target.txs} acknowledged transactions`,
        async () =>
          seenBlocks.size >= target.blocks && acknowledged.length >= target.txs ? true : undefined,
        30_000,
      );
      await node.kill();
      streaming = false;
      await Promise.all([...streams, watcher]);
    }

    node = await spawnNode(args, port);
    const url = node.url;
    for (const [number, hash] of seenBlocks) {
      const block = await rpc<BlockHeaderJson | null>(url, "chain_getBlockByNumber", { number });
      assert.equal(block?.hash, hash, `block ${number} changed or vanished across a crash`);
    }
    for (const hash of acknowledged) {
      const tx = await rpc<{ block_number?: number; status?: string } | null>(
        url,
        "chain_getTransactionByHash",
        {
          hash,
        },
      );
      assert.ok(tx !== null, `acknowledged transaction ${hash} was lost in a crash`);
      assert.ok(
        tx.block_number !== undefined || tx.status === "PENDING",
        `${hash} is neither committed nor pending`,
      );
    }
    await waitFor(
      "the restored pool to drain into blocks",
      async () =>
        (await rpc<unknown[]>(url, "chain_getPendingTransactions")).length === 0 ? true : undefined,
      15_000,
    );
    let committed = 0;
    for (const account of senders) {
      const nonce = await rpc<number>(url, "chain_getNonce", { address: account.address });
      const balance = await rpc<number>(url, "chain_getBalance", { address: account.address });
      assert.equal(
        balance,
        INITIAL_BALANCE - nonce,
        `${account.address}: balance matches its ${nonce} transfers`,
      );
      committed += nonce;
    }
    assert.ok(
      committed >= acknowledged.length,
      `${committed} committed ≥ ${acknowledged.length} acknowledged`,
    );
    const received = await rpc<number>(url, "chain_getBalance", { address: recipient });
    assert.equal(received, INITIAL_BALANCE + committed, "the recipient got exactly the committed transfers");
  });
});
