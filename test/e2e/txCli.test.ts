// `chain-node tx …`, `chain-node balance` and `chain-node get` against a running dev node, as an operator types them.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { connect } from "../../src/client/index.ts";
import { freePort, type NodeProcess, rpc, runCli, spawnNode } from "../helpers/process.ts";

// Dev account 1 (public test mnemonic): funded with 10^12, not the validator.
const KEY = "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d";
const SENDER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const RECIPIENT = "0x00000000000000000000000000000000000000aa";

const cli = (args: string[], env: Record<string, string> = {}) => runCli(args, env);

describe("chain-node tx, balance and get", () => {
  const home = mkdtempSync(join(tmpdir(), "chain-node-txcli-"));
  let node: NodeProcess | undefined;
  let url = "";
  const env = { SENDER_KEY: KEY };

  before(async () => {
    const port = await freePort();
    node = await spawnNode(
      [
        "dev",
        "--home",
        join(home, "dev"),
        "--rpc-port",
        String(port),
        "--block-time",
        "100",
        "--log-level",
        "warn",
      ],
      port,
    );
    url = node.url;
  });
  after(async () => {
    await node?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it("tx transfer signs, sends, waits and reports the block; balance shows it", async () => {
    const run = await cli(
      [
        "tx",
        "transfer",
        "--to",
        RECIPIENT,
        "--amount",
        "25",
        "--private-key-env",
        "SENDER_KEY",
        "--rpc-url",
        url,
      ],
      env,
    );
    assert.equal(run.code, 0, run.stderr);
    const match = /^(0x[0-9a-f]{64}): committed in block (\d+) at index 0, succeeded$/m.exec(run.stdout);
    assert.ok(match, run.stdout);
    assert.equal(await rpc<number>(url, "chain_getBalance", { address: RECIPIENT }), 25);

    const got = await cli(["tx", "get", match[1] as string, "--rpc-url", url, "--json"]);
    assert.equal(got.code, 0, got.stderr);
    const tx = JSON.parse(got.stdout) as { block_number: number; result: { code: number } };
    assert.equal(tx.block_number, Number(match[2]));
    assert.deepEqual(tx.result, { code: 0 });

    const balance = await cli(["balance", RECIPIENT, "--rpc-url", url]);
    assert.equal(balance.code, 0, balance.stderr);
    assert.match(balance.stdout, /^balance\s+25$/m);
    assert.match(balance.stdout, /^validator\s+no$/m);
    const sender = JSON.parse((await cli(["balance", SENDER, "--rpc-url", url, "--json"])).stdout) as {
      nonce: number;
      balance: number;
    };
    assert.equal(sender.nonce, 1);
    assert.equal(sender.balance, 1_000_000_000_000 - 25);
  });

  it("tx stake with a keystore key (keys import), unlocked by --password-env", async () => {
    const keyFile = join(home, "key.txt");
    writeFileSync(keyFile, `${KEY}\n`, { mode: 0o600 });
    const keysEnv = { CHAIN_NODE_TEST_KEYSTORE_SCRYPT_N: "1024", PASS: "correct horse" };
    const imported = await cli(
      [
        "keys",
        "import",
        "--home",
        home,
        "--name",
        "alice",
        "--private-key-file",
        keyFile,
        "--password-env",
        "PASS",
      ],
      keysEnv,
    );
    assert.equal(imported.code, 0, imported.stderr);
    const staked = await cli(
      [
        "tx",
        "stake",
        "--amount",
        "1000",
        "--home",
        home,
        "--key",
        "alice",
        "--password-env",
        "PASS",
        "--rpc-url",
        url,
      ],
      keysEnv,
    );
    assert.equal(staked.code, 0, staked.stderr);
    assert.match(staked.stdout, /succeeded$/m);
    assert.equal(await rpc<number>(url, "chain_getConsensusStakeAmount", { address: SENDER }), 1000);

    const wrong = await cli(
      [
        "tx",
        "stake",
        "--amount",
        "1",
        "--home",
        home,
        "--key",
        "alice",
        "--password-env",
        "PASS",
        "--rpc-url",
        url,
      ],
      { ...keysEnv, PASS: "wrong" },
    );
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /wrong password/);
    assert.doesNotMatch(wrong.stderr, /^\s+at /m, "no stack trace");
  });

  it("a refused transaction exits 1 with the node's reason; unknown hashes are not found", async () => {
    const tooMuch = await cli(
      [
        "tx",
        "transfer",
        "--to",
        RECIPIENT,
        "--amount",
        "9007199254740991",
        "--private-key-env",
        "SENDER_KEY",
        "--rpc-url",
        url,
      ],
      env,
    );
    assert.equal(tooMuch.code, 1);
    assert.match(tooMuch.stderr, /insufficient_balance/);
    assert.doesNotMatch(tooMuch.stderr, /^\s+at /m, "no stack trace");

    const missing = await cli(["tx", "get", `0x${"ab".repeat(32)}`, "--rpc-url", url]);
    assert.equal(missing.code, 1);
    assert.match(missing.stdout, /not found/);

    const noKey = await cli(["tx", "transfer", "--to", RECIPIENT, "--amount", "1", "--rpc-url", url]);
    assert.equal(noKey.code, 1);
    assert.match(noKey.stderr, /name the signing key/);
  });

  it("get reads a value at the head and at a past height, and --prove verifies it", async () => {
    const client = connect(url);
    const wallet = client.wallet(KEY);
    const profile = `profile-${Date.now()}`;
    const first = await client.waitForTransaction(await wallet.setUserData(profile, { name: "ada", n: 1 }));
    await client.waitForTransaction(await wallet.setUserData(`${profile}/name`, "grace"));
    const ref = `/users/${SENDER.toLowerCase()}/${profile}`;

    const head = await cli(["get", ref, "--rpc-url", url]);
    assert.equal(head.code, 0, head.stderr);
    assert.deepEqual(JSON.parse(head.stdout), { name: "grace", n: 1 });
    const past = await cli(["get", ref, "--height", String(first.block_number), "--rpc-url", url, "--json"]);
    assert.deepEqual(JSON.parse(past.stdout), { name: "ada", n: 1 });

    const proven = await cli(["get", `${ref}/name`, "--prove", "--rpc-url", url]);
    assert.equal(proven.code, 0, proven.stderr);
    assert.equal(JSON.parse(proven.stdout), "grace");
    assert.match(
      proven.stderr,
      /^verified: \/users\/0x70997970C51812dc3A010C7d01b50e0d17dc79C8\/profile-\d+\/name in block \d+/,
    );
    const trusted = await cli([
      "get",
      `${ref}/name`,
      "--trusted-block-hash",
      first.block_hash,
      "--rpc-url",
      url,
      "--json",
    ]);
    assert.equal(trusted.code, 0, trusted.stderr);
    assert.deepEqual(JSON.parse(trusted.stdout), {
      ref: `/users/${SENDER}/${profile}/name`,
      value: "ada",
      block_number: first.block_number,
      block_hash: first.block_hash,
      state_root: JSON.parse(trusted.stdout).state_root,
      verified: true,
    });

    const future = await cli(["get", ref, "--height", "99999999", "--rpc-url", url]);
    assert.equal(future.code, 1);
    assert.match(future.stderr, /invalid_params: chain_getValue: block 99999999 is above the head/);
  });

  it("get --prove refuses a node that answers a different value than its proof shows", async () => {
    // A node that lies: chain_getProof answers pass through it with the value changed.
    const liar = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const upstream = await fetch(url, {
        method: "POST",
        body: Buffer.concat(chunks),
        headers: { "content-type": "application/json" },
      });
      const reply = (await upstream.json()) as { result?: { value?: unknown; proof?: unknown } };
      if (
        reply.result !== undefined &&
        reply.result !== null &&
        typeof reply.result === "object" &&
        "proof" in reply.result
      ) {
        reply.result.value = 1_000_000_000;
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(reply));
    });
    await new Promise<void>((resolve) => liar.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = liar.address() as AddressInfo;
      const ref = `/account/${SENDER}/balance`;
      const run = await cli(["get", ref, "--prove", "--rpc-url", `http://127.0.0.1:${port}`]);
      assert.equal(run.code, 1);
      assert.match(run.stderr, /proof does not verify \(value_mismatch\)/);
      assert.equal(run.stdout, "");
    } finally {
      await new Promise((resolve) => liar.close(resolve));
    }
  });

  it("an unreachable node is a one-line error", async () => {
    const port = await freePort();
    const run = await cli(["balance", SENDER, "--rpc-url", `http://127.0.0.1:${port}`]);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /^chain-node: /);
    assert.doesNotMatch(run.stderr, /^\s+at /m);
  });
});
