import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { freePort, type NodeProcess, rpc, spawnNode } from "../helpers/process.ts";
import { waitFor } from "../helpers/testNode.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const VERSION = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;

describe("chain-node CLI", () => {
  it("version prints the package version", () => {
    const out = execFileSync(process.execPath, ["bin/chain-node.js", "version"], {
      cwd: ROOT,
      encoding: "utf8",
    });
    assert.equal(out.trim(), VERSION);
  });

  it("rejects a malformed flag with a message and a non-zero exit", () => {
    assert.throws(
      () =>
        execFileSync(process.execPath, ["bin/chain-node.js", "dev", "--rpc-port", "x"], {
          cwd: ROOT,
          stdio: "pipe",
        }),
      /expected an integer/,
    );
  });

  describe("dev", () => {
    const home = mkdtempSync(join(tmpdir(), "chain-node-cli-"));
    let node: NodeProcess | undefined;
    after(async () => {
      await node?.stop();
      rmSync(home, { recursive: true, force: true });
    });

    it("prints the RPC URL, chain id and ten accounts with keys, and serves them", async () => {
      const port = await freePort();
      node = await spawnNode(
        ["dev", "--home", home, "--rpc-port", String(port), "--log-level", "warn"],
        port,
      );
      const out = node.output();
      assert.match(out, new RegExp(`RPC URL\\s+http://127\\.0\\.0\\.1:${port}`));
      assert.match(out, /chain id\s+100/);
      assert.match(out, /WARNING/);
      const accounts = [...out.matchAll(/\((\d)\) (0x[0-9a-fA-F]{40})\s+private key (0x[0-9a-f]{64})/g)];
      assert.equal(accounts.length, 10, "ten accounts with keys are printed");
      assert.equal(
        accounts[0]?.[2],
        "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
        "account 0 is the hardhat one",
      );
      for (const [, , address] of accounts) {
        assert.equal(await rpc<number>(node.url, "chain_getBalance", { address }), 1_000_000_000_000);
      }
      assert.equal(await rpc<number>(node.url, "net_chainId"), 100);
      assert.equal(await rpc<boolean>(node.url, "chain_isValidator", { address: accounts[0]?.[2] }), true);
      // --reset deletes the home: not from under the node that runs on it.
      assert.throws(
        () =>
          execFileSync(process.execPath, ["bin/chain-node.js", "dev", "--home", home, "--reset"], {
            cwd: ROOT,
            stdio: "pipe",
            timeout: 30_000,
          }),
        new RegExp(`in use by another chain-node process \\(pid ${node.child.pid}\\)`),
      );
      assert.equal(await rpc<number>(node.url, "net_chainId"), 100, "the running node goes on");
      assert.ok(readFileSync(join(home, "genesis.json"), "utf8").length > 0, "its home is untouched");
      const code = await node.stop();
      // A failure says how the process ended (a signal means it died rather than stopped) and what it printed.
      assert.equal(
        code,
        0,
        `SIGTERM exits cleanly (signal ${node.child.signalCode})\n${node.output().slice(-2_000)}`,
      );
    });
  });

  describe("init and start", () => {
    const home = mkdtempSync(join(tmpdir(), "chain-node-init-"));
    let node: NodeProcess | undefined;
    after(async () => {
      await node?.stop();
      rmSync(home, { recursive: true, force: true });
    });

    it("init writes a home whose single validator then commits blocks alone with start", async () => {
      const [rpcPort, p2pPort] = [await freePort(), await freePort()];
      const out = execFileSync(
        process.execPath,
        [
          "bin/chain-node.js",
          "init",
          "--home",
          home,
          "--rpc-port",
          String(rpcPort),
          "--p2p-port",
          String(p2pPort),
        ],
        { cwd: ROOT, encoding: "utf8" },
      );
      const address = /validator\s+(0x[0-9a-fA-F]{40})/.exec(out)?.[1];
      assert.ok(address, out);
      for (const file of ["config.toml", "genesis.json", "keys/validator.json", "keys/node_key.json"]) {
        assert.ok(readFileSync(join(home, file), "utf8").length > 0, `${file} written`);
      }
      const genesis = JSON.parse(readFileSync(join(home, "genesis.json"), "utf8")) as {
        validators: { address: string }[];
      };
      assert.deepEqual(
        genesis.validators.map((v) => v.address),
        [address],
      );
      assert.throws(
        () =>
          execFileSync(process.execPath, ["bin/chain-node.js", "init", "--home", home], {
            cwd: ROOT,
            stdio: "pipe",
          }),
        /already initialised/,
        "init never overwrites a home",
      );

      node = await spawnNode(["start", "--home", home, "--log-level", "warn"], rpcPort, 30_000);
      assert.match(node.output(), new RegExp(`validator\\s+${address}`));
      const started = node;
      await waitFor(
        "two blocks",
        async () => ((await rpc<number>(started.url, "chain_getRecentBlockNumber")) >= 2 ? true : undefined),
        20_000,
      );
      assert.equal(await rpc(started.url, "chain_isValidator", { address }), true);
      assert.equal(await rpc(started.url, "net_listening"), true);
      assert.equal(await rpc(started.url, "net_peerCount"), 0);
      const block = await rpc<{ validators: string[] }>(started.url, "chain_getBlockByNumber", { number: 2 });
      assert.deepEqual(block.validators, [address], "its own precommit is the whole certificate");

      // A second node on the same home (say, started by hand beside the service) would write its
      // store and sign with its key as well: it refuses to start, and the first goes on.
      assert.throws(
        () =>
          execFileSync(
            process.execPath,
            ["bin/chain-node.js", "start", "--home", home, "--log-level", "warn"],
            {
              cwd: ROOT,
              stdio: "pipe",
              timeout: 30_000,
            },
          ),
        new RegExp(`in use by another chain-node process \\(pid ${started.child.pid}\\)`),
      );
      const head = await rpc<number>(started.url, "chain_getRecentBlockNumber");
      await waitFor(
        "the next block",
        async () =>
          (await rpc<number>(started.url, "chain_getRecentBlockNumber")) > head ? true : undefined,
        20_000,
      );
    });
  });
});
