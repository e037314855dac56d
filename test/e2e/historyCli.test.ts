// `chain-node history` against a running dev node, as an operator types it.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { DerivedAccount } from "../../src/crypto/index.ts";
import { devAccounts } from "../../src/node/index.ts";
import type { HistoryPage } from "../helpers/history.ts";
import { devNodeArgs } from "../helpers/crash.ts";
import { freePort, type NodeProcess, rpc, runCli, spawnNode } from "../helpers/process.ts";
import { signTx, transferBody, waitFor } from "../helpers/testNode.ts";

const cli = (args: string[]) => runCli(args);

describe("chain-node history", () => {
  const home = mkdtempSync(join(tmpdir(), "chain-node-history-cli-"));
  const accounts = devAccounts();
  const [alice, bob] = [accounts[1], accounts[2]] as [DerivedAccount, DerivedAccount];
  let node: NodeProcess | undefined;
  let url = "";
  /** Alice's five transactions, newest first: four sent, then one received (the newest). */
  let hashes: string[] = [];
  let lastBlock = 0;

  const run = (...args: string[]) => cli(["history", ...args, "--rpc-url", url]);

  before(async () => {
    const port = await freePort();
    node = await spawnNode(devNodeArgs(join(home, "dev"), port, 50), port);
    url = node.url;
    const sent: string[] = [];
    for (let nonce = 0; nonce < 4; nonce++) {
      const body = transferBody(alice.address, bob.address, 10 + nonce, nonce, `cli-${nonce}`);
      sent.push(await rpc<string>(url, "chain_sendSignedTransaction", signTx(alice.privateKey, body)));
    }
    const back = transferBody(bob.address, alice.address, 3, 0, "cli-back");
    sent.push(await rpc<string>(url, "chain_sendSignedTransaction", signTx(bob.privateKey, back)));
    for (const hash of sent) {
      const tx = await waitFor(`${hash} to be committed`, async () => {
        const found = await rpc<{ block_number?: number } | null>(url, "chain_getTransactionByHash", {
          hash,
        });
        return found?.block_number === undefined ? undefined : found;
      });
      lastBlock = Math.max(lastBlock, tx.block_number as number);
    }
    const page = await rpc<HistoryPage>(url, "chain_getTransactionsByAddress", { address: alice.address });
    hashes = page.transactions.map((tx) => tx.hash);
    assert.deepEqual([...hashes].sort(), [...sent].sort(), "the node lists all five");
  });
  after(async () => {
    await node?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it("prints one line per transaction, newest first, saying sent or received and how it went", async () => {
    const out = await run(alice.address);
    assert.equal(out.code, 0, out.stderr);
    const lines = out.stdout.trimEnd().split("\n");
    assert.equal(lines.length, 5, out.stdout);
    assert.deepEqual(
      lines.map((line) => /(0x[0-9a-f]{64})/.exec(line)?.[1]),
      hashes,
    );
    for (const line of lines)
      assert.match(
        line,
        /^\d+:\d+ {2}0x[0-9a-f]{64} {2}(sent {4}|received) {2}\/transfer\/.* = \d+ {2}succeeded$/,
      );
    assert.equal(lines.filter((line) => line.includes("received")).length, 1, "one received from bob");
    assert.doesNotMatch(out.stdout, /more:/, "a single page");
  });

  it("--limit pages and names the cursor; --cursor goes on from it; --json prints the page", async () => {
    const first = await run(alice.address, "--limit", "2");
    assert.equal(first.code, 0, first.stderr);
    const cursor = /^more: --cursor (0x[0-9a-f]{16})$/m.exec(first.stdout)?.[1];
    assert.ok(cursor, first.stdout);
    const second = await run(alice.address, "--limit", "2", "--cursor", cursor, "--json");
    assert.equal(second.code, 0, second.stderr);
    const page = JSON.parse(second.stdout) as HistoryPage;
    assert.deepEqual(
      page.transactions.map((tx) => tx.hash),
      hashes.slice(2, 4),
    );
    assert.equal(typeof page.next_cursor, "string");
  });

  it("--all follows every cursor to the last page", async () => {
    const all = await run(alice.address, "--limit", "2", "--all", "--json");
    assert.equal(all.code, 0, all.stderr);
    const page = JSON.parse(all.stdout) as HistoryPage;
    assert.deepEqual(
      page.transactions.map((tx) => tx.hash),
      hashes,
    );
    assert.equal(page.next_cursor, null);
    const text = await run(alice.address, "--limit", "1", "--all");
    assert.equal(text.stdout.trimEnd().split("\n").length, 5, text.stdout);
    assert.doesNotMatch(text.stdout, /more:/);
  });

  it("--from-block and --to-block bound the blocks listed", async () => {
    const out = await run(
      alice.address,
      "--from-block",
      String(lastBlock),
      "--to-block",
      String(lastBlock),
      "--json",
    );
    assert.equal(out.code, 0, out.stderr);
    const page = JSON.parse(out.stdout) as HistoryPage;
    assert.ok(page.transactions.length >= 1);
    assert.ok(page.transactions.every((tx) => tx.block_number === lastBlock));
    const none = await run(alice.address, "--from-block", String(lastBlock + 1000));
    assert.equal(none.code, 0, none.stderr);
    assert.equal(none.stdout.trim(), "no transactions");
  });

  it("refuses a bad address, limit or cursor with a one-line error and exit 1", async () => {
    for (const [args, message] of [
      [["0x1234"], /not an address/],
      [[alice.address, "--limit", "101"], /expected an integer from 1 to 100/],
      [[alice.address, "--from-block", "-1"], /expected an integer/],
      [[alice.address, "--cursor", "page-2"], /invalid_params/],
      [
        [alice.address, "--from-block", "5", "--to-block", "4"],
        /invalid_params: .*from_block \(5\) is greater than to_block \(4\)/,
      ],
    ] as const) {
      const out = await run(...args);
      assert.equal(out.code, 1, `${args.join(" ")}: ${out.stdout}`);
      assert.match(out.stderr, message, args.join(" "));
      assert.doesNotMatch(out.stderr, /^\s+at /m, "no stack trace");
    }
  });
});
