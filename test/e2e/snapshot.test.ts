import assert from "node:assert/strict";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { TEST_FAULT_VARIABLES } from "../../src/faults/index.ts";
import type { DerivedAccount } from "../../src/crypto/index.ts";
import { Chain } from "../../src/chain/index.ts";
import { createSnapshot, devAccounts, loadGenesis, restoreSnapshot } from "../../src/node/index.ts";
import { NO_TEST_FAULTS } from "../../src/faults/index.ts";
import { LmdbStore } from "../../src/storage/index.ts";
import { devNodeArgs } from "../helpers/crash.ts";
import { openSnapshotFile } from "../../src/node/snapshotFile.ts";
import { freePort, launchNode, type NodeProcess, rpc, spawnNode } from "../helpers/process.ts";
import { signTx, startTestNode, transferBody, waitFor } from "../helpers/testNode.ts";

/**
 * `chain-node snapshot create` / `restore` and periodic snapshots, in real processes: a dev chain
 * with signed transfers is snapshotted while it runs and once stopped, each snapshot restored into
 * a fresh home that then answers as the original did and makes the next block; processes killed
 * (failpoints) while a snapshot is written or restored leave nothing that looks complete.
 */

const ACCOUNTS = devAccounts();
const [SENDER, RECIPIENT, THIRD] = ACCOUNTS.slice(1, 4) as [DerivedAccount, DerivedAccount, DerivedAccount];

interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  output: string;
}

/** Runs one chain-node command to its end (killed after `timeoutMs`). */
async function cli(args: string[], env: Record<string, string> = {}, timeoutMs = 30_000): Promise<CliRun> {
  const launched = launchNode(args, env);
  const timer = setTimeout(() => launched.child.kill("SIGKILL"), timeoutMs);
  try {
    const { code, signal } = await launched.exited;
    return { code, signal, output: launched.output() };
  } finally {
    clearTimeout(timer);
  }
}

async function cliOk(args: string[]): Promise<string> {
  const run = await cli(args);
  assert.equal(run.code, 0, `chain-node ${args.join(" ")} failed:\n${run.output}`);
  return run.output;
}

/** Sends a signed transfer and waits until it is in a block. */
async function transferAndWait(
  url: string,
  from: DerivedAccount,
  to: DerivedAccount,
  amount: number,
): Promise<void> {
  const nonce = await rpc<number>(url, "chain_getNonce", { address: from.address });
  await rpc(
    url,
    "chain_sendSignedTransaction",
    signTx(from.privateKey, transferBody(from.address, to.address, amount, nonce)),
  );
  await waitFor(
    `nonce ${nonce + 1} of ${from.address}`,
    async () =>
      (await rpc<number>(url, "chain_getNonce", { address: from.address })) > nonce ? true : undefined,
    10_000,
  );
}

/** What a node answers about its head and the test accounts. */
async function answers(url: string): Promise<unknown> {
  const head = await rpc<number>(url, "chain_getRecentBlockNumber");
  const accounts = [];
  for (const account of ACCOUNTS.slice(0, 4)) {
    const address = account.address;
    accounts.push({
      address,
      balance: await rpc<number>(url, "chain_getBalance", { address }),
      nonce: await rpc<number>(url, "chain_getNonce", { address }),
      stake: await rpc<number>(url, "chain_getConsensusStakeAmount", { address }),
      validator: await rpc<boolean>(url, "chain_isValidator", { address }),
    });
  }
  return {
    head,
    block: await rpc(url, "chain_getBlockByNumber", { number: head, getFullTransactions: true }),
    recent: await rpc(url, "chain_getRecentBlock"),
    accounts,
  };
}

/** The head a home's chain opens at (Chain.open: block 0 checked against its genesis.json). */
async function headOf(home: string): Promise<number> {
  const store = new LmdbStore(join(home, "data"));
  try {
    const chain = new Chain(store, loadGenesis(home));
    await chain.open();
    return chain.head().header.number;
  } finally {
    await store.close();
  }
}

const devArgs = (home: string, port: number, blockTimeMs = 50) => devNodeArgs(home, port, blockTimeMs);

describe("snapshots (chain-node snapshot create / restore)", () => {
  const root = mkdtempSync(join(tmpdir(), "chain-node-snapshot-"));
  const nodes: NodeProcess[] = [];
  after(async () => {
    for (const node of nodes) await node.kill();
    rmSync(root, { recursive: true, force: true });
  });
  const spawn = async (args: string[], port: number, env: Record<string, string> = {}) => {
    const node = await spawnNode(args, port, 30_000, env);
    nodes.push(node);
    return node;
  };

  it("a dev chain snapshotted while running and stopped restores into homes that answer the same and go on", async (t) => {
    const source = join(root, "source");
    const port = await freePort();
    const node = await spawn(devArgs(source, port), port);
    await transferAndWait(node.url, SENDER, RECIPIENT, 1_000);
    await transferAndWait(node.url, RECIPIENT, THIRD, 10);
    await transferAndWait(node.url, SENDER, THIRD, 5);

    // While it runs and makes blocks: transfers keep arriving during the create.
    const running = join(root, "running.snapshot");
    let streaming = true;
    const stream = (async () => {
      while (streaming) await transferAndWait(node.url, SENDER, RECIPIENT, 1);
    })();
    const created = await cliOk(["snapshot", "create", "--home", source, "--out", running]);
    streaming = false;
    await stream;
    const runningHeight = Number(/height\s+(\d+)/.exec(created)?.[1]);
    const runningHash = /block hash\s+(0x[0-9a-f]{64})/.exec(created)?.[1];
    const atThatHeight = await rpc<{ hash: string; state_root: string }>(node.url, "chain_getBlockByNumber", {
      number: runningHeight,
    });
    assert.equal(
      runningHash,
      atThatHeight.hash,
      `the running snapshot is of block ${runningHeight} as the node has it`,
    );

    const expected = await answers(node.url);
    assert.equal(await node.stop(), 0, "the source stops cleanly");
    const stopped = join(root, "stopped.snapshot");
    // In this process, so that the times below are the work's, not a process start's.
    const createdAt = Date.now();
    const { manifest } = await createSnapshot({ home: source, out: stopped, faults: NO_TEST_FAULTS });
    const createMs = Date.now() - createdAt;
    assert.equal(manifest.height, (expected as { head: number }).head);
    assert.ok(!existsSync(`${stopped}.partial`), "no partial file is left");

    // --height: the head, or a height the node took a snapshot at; anything else names the choices.
    await assert.rejects(
      createSnapshot({ home: source, out: join(root, "x"), height: 1, faults: NO_TEST_FAULTS }),
      /no snapshot can be made at height 1: the state is kept at the head only \(\d+\)/,
    );

    // Restore the stopped one; `dev` continues it.
    const restoredHome = join(root, "restored");
    const restoredAt = Date.now();
    const result = await restoreSnapshot({ home: restoredHome, file: stopped, faults: NO_TEST_FAULTS });
    const restoreMs = Date.now() - restoredAt;
    assert.equal(result.wroteGenesis, true, "genesis.json written from the snapshot");
    await assert.rejects(
      restoreSnapshot({ home: restoredHome, file: stopped, faults: NO_TEST_FAULTS }),
      /already holds chain data/,
      "a home with chain data is refused",
    );
    const restoredPort = await freePort();
    const restored = await spawn(devArgs(restoredHome, restoredPort), restoredPort);
    assert.deepEqual(await answers(restored.url), expected, "the restored home answers as the source did");
    const head = (expected as { head: number }).head;
    await assert.rejects(
      rpc(restored.url, "chain_getBlockByNumber", { number: head - 1 }),
      new RegExp(`"code":-32005.*"reason":"pruned","first_available":${head}`),
      "a block below it answers pruned, with the snapshot's height as the first kept",
    );
    await transferAndWait(restored.url, THIRD, SENDER, 2);
    assert.equal(
      await rpc<number>(restored.url, "chain_getRecentBlockNumber"),
      head + 1,
      "it made the next block",
    );

    // Restore the running one; `start` (a network node, its validator key copied) makes the next block.
    const networkHome = join(root, "network");
    const restoreOut = await cliOk(["snapshot", "restore", "--home", networkHome, "--file", running]);
    assert.match(restoreOut, /genesis\.json written from the snapshot/);
    mkdirSync(join(networkHome, "keys"), { recursive: true });
    copyFileSync(join(source, "keys", "validator.json"), join(networkHome, "keys", "validator.json"));
    const [rpcPort, p2pPort] = [await freePort(), await freePort()];
    const network = await spawn(
      [
        "start",
        "--home",
        networkHome,
        "--rpc-port",
        String(rpcPort),
        "--p2p-port",
        String(p2pPort),
        "--log-level",
        "warn",
      ],
      rpcPort,
    );
    const first = await rpc<{ hash: string; state_root: string }>(network.url, "chain_getBlockByNumber", {
      number: runningHeight,
    });
    assert.deepEqual(first, atThatHeight, `block ${runningHeight} is the source's`);
    await waitFor(
      `block ${runningHeight + 1} on the restored network node`,
      async () =>
        (await rpc<number>(network.url, "chain_getRecentBlockNumber")) > runningHeight ? true : undefined,
      15_000,
    );
    t.diagnostic(
      `snapshot of height ${head}: ${statSync(stopped).size} bytes, create ${createMs} ms, restore ${restoreMs} ms (${manifest.leaf_count} leaves, ${manifest.chunks.length} chunks)`,
    );
  });

  it("periodic snapshots: interval 2 and keep 2 leave the two latest, each restorable", async () => {
    const home = join(root, "periodic");
    const port = await freePort();
    const env = { CHAIN_NODE_SNAPSHOT_INTERVAL: "2", CHAIN_NODE_SNAPSHOT_KEEP: "2" };
    const node = await spawn(devArgs(home, port), port, env);
    const dir = join(home, "data", "snapshots");
    /** Waits until the snapshots directory holds exactly the snapshots of `heights`. */
    const holds = (heights: number[]) =>
      waitFor(
        `snapshots ${heights.join(" and ")}, and no other`,
        async () => {
          const files = existsSync(dir) ? readdirSync(dir).sort() : [];
          return JSON.stringify(files) === JSON.stringify(heights.map((h) => `${h}.snapshot`))
            ? true
            : undefined;
        },
        20_000,
      );
    for (let height = 1; height <= 7; height++) {
      await transferAndWait(node.url, SENDER, RECIPIENT, 1);
      // Each snapshot ends before the next is due: a node skips a height whose snapshot would
      // begin while the last is still being written (the first one starts the thread, which on
      // a loaded machine took longer than the two blocks to the next).
      if (height % 2 === 0) await holds([height - 2, height].filter((h) => h > 0));
    }
    assert.equal(await rpc<number>(node.url, "chain_getRecentBlockNumber"), 7);
    await holds([4, 6]);
    // 4 is below the head: copied from the node's own snapshot, while the node runs.
    const copy = join(root, "periodic-4.snapshot");
    assert.match(
      await cliOk(["snapshot", "create", "--home", home, "--out", copy, "--height", "4"]),
      /snapshot copied/,
    );
    for (const [height, file] of [
      [4, copy],
      [6, join(dir, "6.snapshot")],
    ] as const) {
      const target = join(root, `periodic-restored-${height}`);
      const { manifest } = await restoreSnapshot({ home: target, file, faults: NO_TEST_FAULTS });
      assert.equal(manifest.height, height);
      assert.equal(await headOf(target), height, `the home restored from snapshot ${height} opens at it`);
    }
    await node.stop();
  });

  it("a kill -9 while a snapshot is written leaves no complete-looking file; one during restore is completed by a rerun", async () => {
    const home = join(root, "killed");
    const port = await freePort();
    const fail = (name: string) => ({ [TEST_FAULT_VARIABLES.failpoint]: name });

    // The node dies writing its periodic snapshot at height 2; the next start drops the partial file.
    const env = { CHAIN_NODE_SNAPSHOT_INTERVAL: "2" };
    const node = await spawn(devArgs(home, port), port, { ...env, ...fail("snapshot.afterFirstChunk") });
    await rpc(
      node.url,
      "chain_sendSignedTransaction",
      signTx(SENDER.privateKey, transferBody(SENDER.address, RECIPIENT.address, 1, 0)),
    );
    await rpc(
      node.url,
      "chain_sendSignedTransaction",
      signTx(SENDER.privateKey, transferBody(SENDER.address, RECIPIENT.address, 1, 1)),
    );
    const exit = await waitFor(
      "the node's death at the snapshot failpoint",
      async () => (node.child.signalCode === null ? undefined : node.child.signalCode),
      10_000,
    );
    assert.equal(exit, "SIGKILL", node.output());
    const dir = join(home, "data", "snapshots");
    assert.deepEqual(readdirSync(dir), ["2.snapshot.partial"], "only a partial file");
    // Restarted in this process (a process start costs seconds): the node drops the partial file.
    const restarted = await startTestNode({ home, keepHome: true, genesis: () => loadGenesis(home) });
    assert.deepEqual(readdirSync(dir), [], "the partial file is removed at start");
    await restarted.stop();

    // snapshot create killed after its first chunk: no file under the name asked for.
    const out = join(root, "killed.snapshot");
    const killed = await cli(
      ["snapshot", "create", "--home", home, "--out", out],
      fail("snapshot.afterFirstChunk"),
    );
    assert.equal(killed.signal, "SIGKILL", killed.output);
    assert.ok(!existsSync(out), "the killed create left no file under its name");
    await assert.rejects(openSnapshotFile(`${out}.partial`), /not a complete chain-node-snapshot file/);
    await createSnapshot({ home, out, faults: NO_TEST_FAULTS });

    // restore killed inside its write, then after it (before genesis.json): reruns complete it.
    const target = join(root, "killed-restore");
    const inWrite = await cli(
      ["snapshot", "restore", "--home", target, "--file", out],
      fail("snapshot.restoreInWrite"),
    );
    assert.equal(inWrite.signal, "SIGKILL", inWrite.output);
    const beforeGenesis = await cli(
      ["snapshot", "restore", "--home", target, "--file", out],
      fail("snapshot.restoreBeforeGenesis"),
    );
    assert.equal(beforeGenesis.signal, "SIGKILL", beforeGenesis.output);
    assert.ok(!existsSync(join(target, "genesis.json")), "killed before genesis.json");
    const rerun = await restoreSnapshot({ home: target, file: out, faults: NO_TEST_FAULTS });
    assert.deepEqual(
      [rerun.wroteStore, rerun.wroteGenesis],
      [false, true],
      "the rerun only wrote genesis.json",
    );
    assert.equal(await headOf(target), 2, "the restored home opens at the snapshot's head");
  });
});
