import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { freePort, type NodeProcess, rpc, runCli, spawnNode } from "../helpers/process.ts";
import { waitFor } from "../helpers/testNode.ts";

/**
 * A network built as operators on separate hosts build it (issue 19, docs/deployment.md), here on
 * 127.0.0.1: each validator's `init` prints an entry (no key), one home collects them (`genesis
 * add-validator`), the others install the result (`genesis install`) with one bootstrap address, a
 * full node joins with `init --genesis`. Every refusal of a file that does not match what a home
 * holds is a clear line. Then the homes run as processes and commit blocks; every node finds every
 * other through one bootstrap peer and peer exchange.
 */

const cli = (args: string[]) => runCli(args, { CHAIN_NODE_TEST_KEYSTORE_SCRYPT_N: "2" });

async function ok(args: string[]): Promise<string> {
  const run = await cli(args);
  assert.equal(run.code, 0, `chain-node ${args.join(" ")}: ${run.stderr}`);
  return run.stdout;
}

async function refused(args: string[], line: RegExp): Promise<void> {
  const run = await cli(args);
  assert.equal(run.code, 1, `chain-node ${args.join(" ")} must fail: ${run.stdout}`);
  assert.match(run.stderr, line);
  assert.equal(run.stderr.trim().split("\n").length, 1, `one line: ${run.stderr}`);
}

const CHAIN_ID = 7;

describe("a genesis built by validators who never share keys", () => {
  const dir = mkdtempSync(join(tmpdir(), "chain-node-genesis-flow-"));
  const home = (name: string) => join(dir, name);
  const nodes: NodeProcess[] = [];
  const ports = new Map<string, { rpc: number; p2p: number }>();
  let bootstrap = "";

  after(async () => {
    await Promise.all(nodes.map((node) => node.stop()));
    rmSync(dir, { recursive: true, force: true });
  });

  before(async () => {
    for (const name of ["v0", "v1", "v2", "full", "other", "stranger"]) {
      ports.set(name, { rpc: await freePort(), p2p: await freePort() });
    }
  });

  const init = async (name: string, extra: string[] = []) => {
    const { rpc, p2p } = ports.get(name) as { rpc: number; p2p: number };
    return ok([
      "init",
      "--home",
      home(name),
      "--rpc-port",
      String(rpc),
      "--p2p-port",
      String(p2p),
      "--name",
      name,
      ...extra,
    ]);
  };

  it("init prints a validator entry that holds no key, and writes it beside the keys", async () => {
    for (const name of ["v0", "v1", "v2"]) {
      const out = await init(name, ["--chain-id", String(CHAIN_ID), "--stake", "500000"]);
      const entry = JSON.parse(out.trim().split("\n").at(-1) as string) as Record<string, unknown>;
      assert.deepEqual(entry, JSON.parse(readFileSync(join(home(name), "validator-entry.json"), "utf8")));
      assert.equal(entry.format, "chain-node/validator-entry");
      assert.equal(entry.chain_id, CHAIN_ID);
      assert.equal(entry.stake, 500_000);
      const key = JSON.parse(readFileSync(join(home(name), "keys", "validator.json"), "utf8")) as {
        private_key: string;
      };
      assert.ok(!out.includes(key.private_key.slice(2)), "the key is not printed");
      assert.match(
        String((entry.announce as string[])[0]),
        new RegExp(`^/ip4/127\\.0\\.0\\.1/tcp/${ports.get(name)?.p2p}/p2p/12D3`),
      );
    }
  });

  it("id prints the peer id and the announced addresses, as bootstrap entries", async () => {
    const id = JSON.parse(await ok(["id", "--home", home("v0"), "--json"])) as {
      peer_id: string;
      announce: string[];
    };
    assert.equal(id.announce.length, 1);
    assert.ok(id.announce[0]?.endsWith(`/p2p/${id.peer_id}`));
    bootstrap = id.announce[0] as string;
    const announced = JSON.parse(
      await ok(["id", "--home", home("v0"), "--json", "--p2p-announce", "/dns4/v0.example.org/tcp/26656"]),
    ) as { announce: string[] };
    assert.deepEqual(announced.announce, [`/dns4/v0.example.org/tcp/26656/p2p/${id.peer_id}`]);
    await refused(
      ["id", "--home", home("v0"), "--p2p-announce", "/ip4/0.0.0.0/tcp/1"],
      /p2p\.announce: .* is unspecified/,
    );
  });

  it("add-validator collects the entries into one genesis", async () => {
    const entries = ["v1", "v2"].map((name) => join(home(name), "validator-entry.json"));
    const out = await ok(["genesis", "add-validator", "--home", home("v0"), ...entries]);
    assert.match(out, /3 validators \(2 added/);
    const genesis = JSON.parse(readFileSync(join(home("v0"), "genesis.json"), "utf8")) as {
      validators: { stake: number }[];
    };
    assert.deepEqual(
      genesis.validators.map((v) => v.stake),
      [500_000, 500_000, 500_000],
    );
    // Adding the same entries again changes nothing.
    assert.match(await ok(["genesis", "add-validator", "--home", home("v0"), ...entries]), /0 added/);
  });

  it("refuses entries and genesis files that do not match, each with one clear line", async () => {
    await init("other", ["--chain-id", "8"]);
    await init("stranger", ["--chain-id", String(CHAIN_ID)]);
    const shared = join(home("v0"), "genesis.json");
    await refused(
      ["genesis", "add-validator", "--home", home("v0"), join(home("other"), "validator-entry.json")],
      /is for chain 8 \(network 1\); this genesis is chain 7/,
    );
    const forged = join(dir, "forged-entry.json");
    writeFileSync(forged, JSON.stringify({ format: "chain-node/validator-entry", version: 2 }));
    await refused(
      ["genesis", "add-validator", "--home", home("v0"), forged],
      /version 2; this node reads version 1/,
    );
    await refused(
      ["genesis", "install", "--home", home("other"), "--genesis", shared],
      /is chain 7 \(network 1\); .* was initialised for chain 8/,
    );
    await refused(
      ["genesis", "install", "--home", home("stranger"), "--genesis", shared],
      /does not list this home's validator .*: add its entry/,
    );
    // A file that is no genesis leaves no half-made home behind.
    await refused(["init", "--home", home("nothing"), "--genesis", forged], /forged-entry\.json: genesis: /);
    assert.equal(existsSync(home("nothing")), false);
  });

  it("install puts the genesis and one bootstrap peer into every other home; a full node joins with init --genesis", async () => {
    const shared = join(home("v0"), "genesis.json");
    const hashes = new Set<string>();
    for (const name of ["v1", "v2"]) {
      const out = await ok([
        "genesis",
        "install",
        "--home",
        home(name),
        "--genesis",
        shared,
        "--bootstrap",
        bootstrap,
      ]);
      assert.match(out, /this home validates/);
      hashes.add((/block 0 (0x[0-9a-f]{64})/.exec(out) as RegExpExecArray)[1] as string);
    }
    const full = await init("full", ["--genesis", shared, "--bootstrap", bootstrap]);
    hashes.add((/block 0 (0x[0-9a-f]{64})/.exec(full) as RegExpExecArray)[1] as string);
    assert.equal(hashes.size, 1, "one block 0 everywhere");
  });

  it("runs: blocks commit, and every node finds the three others from one bootstrap peer", async () => {
    const names = ["v0", "v1", "v2", "full"];
    for (const name of names) {
      const { rpc: port } = ports.get(name) as { rpc: number };
      nodes.push(await spawnNode(["start", "--home", home(name), "--log-level", "info"], port, 30_000));
    }
    // What each node last showed, named in the failure (a timeout alone does not say which node).
    let seen = "";
    await waitFor(
      "every node at block 3 with 3 peers",
      async () => {
        const views = await Promise.all(
          nodes.map(async (node) => ({
            height: await rpc<number>(node.url, "chain_getRecentBlockNumber"),
            peers: await rpc<number>(node.url, "net_peerCount"),
          })),
        );
        seen = views.map((view, i) => `${names[i]} ${view.height}/${view.peers}`).join(", ");
        return views.every((view) => view.height >= 3 && view.peers >= 3) ? true : undefined;
      },
      60_000,
    ).catch((err: Error) => {
      const logs = nodes.map((node, i) => `--- ${names[i]}\n${node.output().slice(-4_000)}`);
      throw new Error(`${err.message}; last seen (height/peers): ${seen}\n${logs.join("\n")}`);
    });
    const hashes = await Promise.all(
      nodes.map((node) => rpc<{ hash: string }>(node.url, "chain_getBlockByNumber", { number: 2 })),
    );
    assert.equal(new Set(hashes.map((block) => block.hash)).size, 1, "the same block 2 on every node");
  });

  it("refuses to install another chain's genesis into a home that already made block 0", async () => {
    await refused(
      [
        "genesis",
        "install",
        "--home",
        home("v1"),
        "--genesis",
        join(home("stranger"), "genesis.json"),
        "--as-full-node",
      ],
      /makes block 0 0x[0-9a-f]{64}; .* already holds block 0 0x[0-9a-f]{64}: another chain/,
    );
  });
});
