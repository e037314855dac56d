import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { hashHeader } from "../../src/chain/index.ts";
import type { DerivedAccount } from "../../src/crypto/index.ts";
import { TEST_FAULT_VARIABLES } from "../../src/faults/index.ts";
import {
  devAccounts,
  devGenesis,
  exportChain,
  ImportRefusedError,
  importChain,
  initHome,
} from "../../src/node/index.ts";
import { METHOD_LIST } from "../../src/rpc/index.ts";
import { freePort, type NodeProcess, rpc, spawnNode } from "../helpers/process.ts";
import { signTx, transferBody, waitFor } from "../helpers/testNode.ts";

/**
 * `chain-node export`, `import` and `backup` as real processes, on a dev chain with transfers, a
 * stake and a user data write: export and backup taken while the node runs; the import into a
 * fresh home and the backup each started with `chain-node dev`, answering every read method as
 * the original does and making the next block; an import killed (SIGKILL) inside a block's write
 * and run again, ending with the same chain (its own export is byte for byte the original's); a
 * network home (`init`, `start`) exported, imported and started again with the operator's files.
 */

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

interface Reply {
  result?: unknown;
  error?: unknown;
}

/** One JSON-RPC call; the reply's result or error (a refusal must be the same on both nodes too). */
async function call(url: string, method: string, params?: unknown): Promise<Reply> {
  const body: Record<string, unknown> = { jsonrpc: "2.0", id: 1, method };
  if (params !== undefined) body.params = params;
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const { result, error } = (await response.json()) as Reply;
  return { result, error };
}

/** What the original chain holds: the probes' parameters come from it. */
interface Corpus {
  head: number;
  hashes: string[];
  txs: { hash: string; block_number: number; block_hash: string; index: number }[];
  addresses: string[];
}

const UNKNOWN_HASH = `0x${"12".repeat(32)}`;

/**
 * Every read method of the API with the parameters it is asked with; each must answer the same on
 * the original and on the restored node. Methods that change state are listed apart; a method in
 * neither list fails the test, so a new one is added here.
 */
const READS: Record<string, (c: Corpus) => unknown[]> = {
  chain_getRecentBlock: () => [undefined],
  chain_getRecentBlockNumber: () => [undefined],
  chain_getBlockByNumber: (c) => [
    ...c.hashes.flatMap((_, number) => [{ number }, { number, getFullTransactions: true }]),
    { number: c.head + 1 },
  ],
  chain_getBlockByHash: (c) => [
    ...c.hashes.flatMap((hash) => [{ hash }, { hash, getFullTransactions: true }]),
    { hash: UNKNOWN_HASH },
  ],
  chain_getBlocks: (c) => [{ from: 0, to: c.head }],
  chain_getBlockHeaders: (c) => [{ from: 0, to: c.head }],
  chain_getBlockTransactionCountByNumber: (c) => c.hashes.map((_, number) => ({ number })),
  chain_getBlockTransactionCountByHash: (c) => c.hashes.map((hash) => ({ hash })),
  chain_getProposerByNumber: (c) => c.hashes.map((_, number) => ({ number })),
  chain_getProposerByHash: (c) => c.hashes.map((hash) => ({ hash })),
  chain_getValidatorsByNumber: (c) => c.hashes.map((_, number) => ({ number })),
  chain_getValidatorsByHash: (c) => c.hashes.map((hash) => ({ hash })),
  chain_getPendingTransactions: () => [undefined],
  chain_getTransactionByBlockNumberAndIndex: (c) => [
    ...c.txs.map((tx) => ({ block_number: tx.block_number, index: tx.index })),
    { block_number: c.head, index: 999 },
  ],
  chain_getTransactionByBlockHashAndIndex: (c) =>
    c.txs.map((tx) => ({ block_hash: tx.block_hash, index: tx.index })),
  chain_getTransactionByHash: (c) => [...c.txs.map((tx) => ({ hash: tx.hash })), { hash: UNKNOWN_HASH }],
  chain_getBalance: (c) => c.addresses.map((address) => ({ address })),
  chain_getConsensusStakeAmount: (c) => c.addresses.map((address) => ({ address })),
  chain_getNonce: (c) => c.addresses.map((address) => ({ address })),
  chain_isValidator: (c) => c.addresses.map((address) => ({ address })),
  // The index is rebuilt by import (its commits) and copied by backup: the same pages and cursors.
  chain_getTransactionsByAddress: (c) =>
    c.addresses.flatMap((address) => [
      { address },
      { address, limit: 2 },
      { address, from_block: 2, to_block: 4 },
    ]),
  // Import re-executes every block and backup copies the trie: every kept state reads and proves alike.
  chain_getValue: (c) => [
    { ref: "/account" },
    ...c.addresses.flatMap((address) =>
      c.hashes.map((_, block_number) => ({ ref: `/account/${address}`, block_number })),
    ),
  ],
  chain_getProof: (c) =>
    c.addresses.flatMap((address) => [
      { ref: `/account/${address}/balance` },
      { ref: `/account/${address}`, block_number: 1 },
      { ref: `/users/${address}/nothing`, block_number: c.head },
    ]),
  net_listening: () => [undefined],
  net_nodeInfo: () => [undefined],
  net_peerCount: () => [undefined],
  net_syncing: () => [undefined],
  net_id: () => [undefined],
  net_chainId: () => [undefined],
  "rpc.discover": () => [undefined],
};
const WRITES = new Set(["chain_sendSignedTransaction", "chain_sendSignedTransactionBatch"]);

/** A finished `chain-node` command: its exit and output. */
interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  output: string;
}

// The tests after the setup are independent (each its own homes and ports): two at a time took
// 46 s instead of 76 s on the 2-core machine at load average 6 (2026-11-25).
describe("backups: export, import, backup (real processes)", { concurrency: 2 }, () => {
  const dir = mkdtempSync(join(tmpdir(), "chain-node-backups-"));
  const path = (name: string) => join(dir, name);
  const nodes: NodeProcess[] = [];
  const running = new Set<{ kill(): void }>();
  const accounts = devAccounts();
  const recipient = (accounts[9] as DerivedAccount).address;
  let original: NodeProcess;
  let corpus: Corpus;

  /** Runs `chain-node <args>` to its end; killed by the teardown if the test fails first. */
  async function cli(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
    // bin/chain-node.js (Node's type stripping): half the start-up CPU of tsx.
    const child = spawn(process.execPath, ["bin/chain-node.js", ...args], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, ...env },
    });
    const handle = { kill: () => child.kill("SIGKILL") };
    running.add(handle);
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    try {
      const [code, signal] = (await once(child, "close")) as [number | null, NodeJS.Signals | null];
      return { code, signal, output };
    } finally {
      running.delete(handle);
    }
  }

  /** `chain-node dev` on `home`, stopped by the teardown. */
  async function startDev(home: string): Promise<NodeProcess> {
    const port = await freePort();
    const node = await spawnNode(
      ["dev", "--home", home, "--rpc-port", String(port), "--block-time", "50", "--log-level", "warn"],
      port,
      30_000,
      // No signature-check threads: a few transfers need none, and each costs a start-up.
      { CHAIN_NODE_POOL_VERIFY_THREADS: "0" },
    );
    nodes.push(node);
    return node;
  }

  const headOf = (url: string) => rpc<number>(url, "chain_getRecentBlockNumber");

  async function send(url: string, from: DerivedAccount, nonce: number, ref: string, value: unknown) {
    const input = signTx(from.privateKey, { nonce, operation: { type: "SET_VALUE", ref, value } });
    return rpc<string>(url, "chain_sendSignedTransaction", input);
  }

  before(async () => {
    original = await startDev(path("original"));
    // Blocks of transfers from three senders, a stake, and a write of user data.
    const senders = accounts.slice(1, 4);
    for (let round = 0; round < 6; round++) {
      await Promise.all(
        senders.map((from) => {
          const body = transferBody(from.address, recipient, 10 + round, round, `r${round}`);
          return rpc(original.url, "chain_sendSignedTransaction", signTx(from.privateKey, body));
        }),
      );
      await new Promise((resolve) => setTimeout(resolve, 80));
    }
    const staker = accounts[4] as DerivedAccount;
    await send(original.url, staker, 0, `/staking/${staker.address}/s0/value`, 5_000);
    await send(original.url, staker, 1, `/users/${staker.address}/profile`, { name: "s", tags: [1, 2] });
    const url = original.url;
    await waitFor(
      "the pool to drain",
      async () =>
        (await rpc<unknown[]>(url, "chain_getPendingTransactions")).length === 0 ? true : undefined,
      15_000,
    );
    const head = await headOf(url);
    assert.ok(head >= 4, `several blocks (${head})`);
    const blocks = await rpc<{ hash: string; transactions: { hash: string; index: number }[] }[]>(
      url,
      "chain_getBlocks",
      { from: 0, to: head },
    );
    corpus = {
      head,
      hashes: blocks.map((b) => b.hash),
      txs: blocks.flatMap((b, number) =>
        b.transactions.map((tx, index) => ({
          hash: tx.hash,
          block_number: number,
          block_hash: b.hash,
          index,
        })),
      ),
      addresses: [...accounts.map((a) => a.address), `0x${"ab".repeat(20)}`],
    };
    assert.ok(corpus.txs.length >= 20, `the blocks hold the transactions (${corpus.txs.length})`);

    // Taken while the node runs. (The prefix in this process: it is only the setup of a test.)
    const [exported, backup] = await Promise.all([
      cli(["export", "--home", path("original"), "--out", path("chain.ndjson")]),
      cli(["backup", "--home", path("original"), "--out", path("backup")]),
      exportChain({ home: path("original"), out: path("prefix.ndjson"), to: 2 }),
    ]);
    for (const run of [exported, backup]) assert.equal(run.code, 0, run.output);
    assert.match(exported.output, new RegExp(`exported blocks 1\\.\\.${head} of chain 100`));
  });

  after(async () => {
    for (const handle of running) handle.kill();
    await Promise.all(nodes.map((node) => node.stop()));
    rmSync(dir, { recursive: true, force: true });
  });

  it("lists every method of the API as a read or a write", () => {
    const unlisted = METHOD_LIST.map((m) => m.name).filter((name) => !(name in READS) && !WRITES.has(name));
    assert.deepEqual(unlisted, [], "add these to READS (or WRITES)");
  });

  it("writes an export that starts with its versioned header, and no .partial is left", () => {
    const [first = ""] = readFileSync(path("chain.ndjson"), "utf8").split("\n", 1);
    const header = JSON.parse(first) as Record<string, unknown>;
    assert.equal(header.format, "chain-node-export");
    assert.equal(header.version, 1);
    assert.equal(header.chain_id, 100);
    assert.equal(header.genesis_hash, corpus.hashes[0]);
    assert.deepEqual([header.from, header.to], [1, corpus.head]);
    assert.equal(readFileSync(path("chain.ndjson"), "utf8").trimEnd().split("\n").length, corpus.head + 1);
    assert.equal(existsSync(path("chain.ndjson.partial")), false);
  });

  /** Every probe of READS answers the same on `url` as on the original. */
  async function assertSameAnswers(url: string, label: string): Promise<number> {
    let probes = 0;
    for (const [method, paramsOf] of Object.entries(READS)) {
      for (const params of paramsOf(corpus)) {
        const [ours, theirs] = await Promise.all([
          call(original.url, method, params),
          call(url, method, params),
        ]);
        assert.deepEqual(theirs, ours, `${label}: ${method} ${JSON.stringify(params)}`);
        probes++;
      }
    }
    return probes;
  }

  /** `url` makes block head + 1 with a new transfer. */
  async function assertMakesNextBlock(url: string, label: string): Promise<void> {
    const from = accounts[5] as DerivedAccount;
    const hash = await rpc<string>(
      url,
      "chain_sendSignedTransaction",
      signTx(from.privateKey, transferBody(from.address, recipient, 1, 0, "next")),
    );
    const tx = await waitFor(
      `${label}: the new transfer in a block`,
      async () => {
        // Pending first (no block_number): the dev node answers while the block is written.
        const found = await rpc<{ block_number?: number } | null>(url, "chain_getTransactionByHash", {
          hash,
        });
        return found?.block_number === undefined ? undefined : found;
      },
      10_000,
    );
    assert.equal(tx.block_number, corpus.head + 1, `${label}: the next block is ${corpus.head + 1}`);
  }

  it("import into a fresh home, then chain-node dev: same answers to every read, and the next block", async (t) => {
    const run = await cli(["import", "--home", path("imported"), "--file", path("chain.ndjson")]);
    assert.equal(run.code, 0, run.output);
    assert.match(
      run.output,
      new RegExp(`imported ${corpus.head} blocks .*\\(0 already there\\); head ${corpus.head}`),
    );
    assert.match(run.output, /genesis\.json written/);
    const node = await startDev(path("imported"));
    const probes = await assertSameAnswers(node.url, "imported");
    await assertMakesNextBlock(node.url, "imported");
    t.diagnostic(`${probes} read probes answered alike`);
  });

  it("backup of the running node, then chain-node dev: same answers to every read, and the next block", async () => {
    const manifest = JSON.parse(readFileSync(path("backup/backup.json"), "utf8")) as Record<string, unknown>;
    assert.equal(manifest.format, "chain-node-backup");
    assert.equal(manifest.chain_id, 100);
    assert.equal(manifest.head, corpus.head);
    assert.equal(existsSync(path("backup/keys")), false, "keys are not copied without --with-keys");
    assert.ok(existsSync(path("original/data/LOCK")), "the running node holds its home's lock");
    assert.equal(existsSync(path("backup/data/LOCK")), false, "which is not copied: the copy is not in use");
    const [refused, node] = await Promise.all([
      cli(["backup", "--home", path("original"), "--out", path("backup")]),
      startDev(path("backup")),
    ]);
    assert.equal(refused.code, 1);
    assert.match(refused.output, /exists and is not an empty directory: a backup never overwrites/);
    await assertSameAnswers(node.url, "backup");
    await assertMakesNextBlock(node.url, "backup");
  });

  it("an import killed inside a block's write (SIGKILL) completes when run again, into the same chain", async () => {
    const home = path("killed");
    // A home that holds blocks 1..2 already: the import continues from its head.
    assert.equal((await importChain({ home, file: path("prefix.ndjson") })).head, 2);
    // Killed in the second block it writes (block 4), inside the group's write transaction.
    const killed = await cli(["import", "--home", home, "--file", path("chain.ndjson")], {
      [TEST_FAULT_VARIABLES.failpoint]: "commit.afterStateWrites:2",
    });
    assert.equal(killed.signal, "SIGKILL", killed.output);
    assert.match(killed.output, /failpoint commit\.afterStateWrites reached/);
    const rerun = await cli(["import", "--home", home, "--file", path("chain.ndjson")]);
    assert.equal(rerun.code, 0, rerun.output);
    assert.match(
      rerun.output,
      new RegExp(`imported ${corpus.head - 2} blocks .*\\(2 already there\\); head ${corpus.head}`),
    );
    // The same chain: its export is the original's, byte for byte.
    await exportChain({ home, out: path("killed.ndjson") });
    assert.ok(
      readFileSync(path("killed.ndjson")).equals(readFileSync(path("chain.ndjson"))),
      "the re-exported chain equals the original export",
    );
  });

  it("a network home (init): exported stopped, imported into a fresh home, then chain-node start continues the chain", async () => {
    const home = path("network");
    const [rpcPort, p2pPort] = [await freePort(), await freePort()];
    const { address } = initHome(home, { chainId: 101, networkId: 1, rpcPort, p2pPort, name: "net" });
    const genesisPath = join(home, "genesis.json");
    const genesis = JSON.parse(readFileSync(genesisPath, "utf8")) as { consensus: { block_time_ms: number } };
    genesis.consensus.block_time_ms = 100;
    writeFileSync(genesisPath, JSON.stringify(genesis));
    const env = { CHAIN_NODE_POOL_VERIFY_THREADS: "0" };
    const args = (dir: string) => ["start", "--home", dir, "--log-level", "warn"];
    const first = await spawnNode(args(home), rpcPort, 30_000, env);
    nodes.push(first);
    await waitFor("three blocks", async () => ((await headOf(first.url)) >= 3 ? true : undefined), 20_000);
    assert.equal(await first.stop(), 0, first.output());
    await exportChain({ home, out: path("network.ndjson") });

    const restored = path("network-restored");
    const run = await cli(["import", "--home", restored, "--file", path("network.ndjson")]);
    assert.equal(run.code, 0, run.output);
    // What the operator supplies (docs/operations.md): config.toml, keys/, and the validator's signing log.
    cpSync(join(home, "config.toml"), join(restored, "config.toml"));
    cpSync(join(home, "keys"), join(restored, "keys"), { recursive: true });
    for (const file of ["signing.jsonl", "signing.proposal.json"]) {
      if (existsSync(join(home, "data", file)))
        cpSync(join(home, "data", file), join(restored, "data", file));
    }
    const lines = readFileSync(path("network.ndjson"), "utf8").trimEnd().split("\n").slice(1);
    const hashes = lines.map((line) => hashHeader((JSON.parse(line) as { header: never }).header));
    const head = hashes.length;
    assert.ok(head >= 3, `the export holds the blocks (${head})`);

    const second = await spawnNode(args(restored), rpcPort, 30_000, env);
    nodes.push(second);
    await waitFor(
      `a block above ${head}`,
      async () => ((await headOf(second.url)) > head ? true : undefined),
      20_000,
    );
    for (const [i, hash] of hashes.entries()) {
      const block = await rpc<{ hash: string }>(second.url, "chain_getBlockByNumber", { number: i + 1 });
      assert.equal(block.hash, hash, `block ${i + 1} is the original's`);
    }
    const next = await rpc<{ validators: string[] }>(second.url, "chain_getBlockByNumber", {
      number: head + 1,
    });
    assert.deepEqual(next.validators, [address], "the restored validator certifies the next block");
  });

  it("refuses a file of another chain, and one of another format version, with one line", async () => {
    const other = path("other");
    mkdirSync(other);
    writeFileSync(join(other, "genesis.json"), JSON.stringify(devGenesis(accounts, 1_600_000_000_000)));
    const wrongChain = await cli(["import", "--home", other, "--file", path("chain.ndjson")]);
    assert.equal(wrongChain.code, 1);
    assert.match(
      wrongChain.output.trim(),
      /^chain-node: import refused \(wrong_chain\): the file is of chain 100 \(genesis 0x[0-9a-f]{64}\), .*genesis\.json of chain 100 \(genesis 0x[0-9a-f]{64}\)$/,
    );
    assert.equal(existsSync(join(other, "data")), false, "nothing written");

    const lines = readFileSync(path("chain.ndjson"), "utf8").split("\n");
    lines[0] = (lines[0] ?? "").replace('"version":1', '"version":2');
    writeFileSync(path("v2.ndjson"), lines.join("\n"));
    await assert.rejects(
      importChain({ home: path("v2"), file: path("v2.ndjson") }),
      (error) => error instanceof ImportRefusedError && error.reason === "bad_format",
    );
    assert.equal(existsSync(path("v2")), false, "nothing written");
  });
});
