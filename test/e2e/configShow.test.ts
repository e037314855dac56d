import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { parse as parseToml } from "smol-toml";

/** `chain-node config show` as a real process: the effective configuration and where it came from. */

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** The environment of the test run without any CHAIN_NODE_* setting that could leak in. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !key.startsWith("CHAIN_NODE_")),
  );
  return { ...env, ...extra };
}

const show = (args: string[], env: Record<string, string> = {}) =>
  execFileSync(process.execPath, ["bin/chain-node.js", "config", "show", ...args], {
    cwd: ROOT,
    encoding: "utf8",
    env: cleanEnv(env),
  });

describe("chain-node config show", () => {
  const home = mkdtempSync(join(tmpdir(), "chain-node-config-show-"));
  after(() => rmSync(home, { recursive: true, force: true }));
  writeFileSync(
    join(home, "config.toml"),
    '[node]\nname = "from-file"\n[rpc]\nport = 9000\nmax_block_range = 50\n[p2p]\nport = 3000\n',
  );
  const env = { CHAIN_NODE_RPC_PORT: "9100", CHAIN_NODE_P2P_PORT: "3100" };

  it("prints TOML with flags over environment over config.toml over defaults, each value with its source", () => {
    const out = show(["--home", home, "--p2p-port", "3200", "--metrics", "--log-level", "debug"], env);
    const config = parseToml(out) as Record<string, Record<string, unknown>>;
    assert.equal(config.node?.name, "from-file");
    assert.equal(config.node?.log_level, "debug");
    assert.equal(config.rpc?.port, 9100, "environment over file");
    assert.equal(config.rpc?.max_block_range, 50, "file over default");
    assert.equal(config.rpc?.metrics, true);
    assert.equal(config.p2p?.port, 3200, "flag over environment");
    assert.equal(config.pool?.max_txs, 5000, "default");
    assert.match(out, /^port = 9100 +# env CHAIN_NODE_RPC_PORT$/m);
    assert.match(out, /^port = 3200 +# flag --p2p-port$/m);
    assert.match(out, /^max_block_range = 50 +# file .*config\.toml$/m);
    assert.match(out, /^max_txs = 5000 +# default$/m);
  });

  it("--json prints the values and their sources", () => {
    const out = JSON.parse(show(["--home", home, "--json"], env)) as {
      config: Record<string, Record<string, unknown>>;
      sources: Record<string, { source: string; from?: string }>;
    };
    assert.equal(out.config.rpc?.port, 9100);
    assert.deepEqual(out.sources["rpc.port"], { source: "env", from: "CHAIN_NODE_RPC_PORT" });
    assert.deepEqual(out.sources["pool.max_txs"], { source: "default" });
    assert.equal(out.sources["node.name"]?.source, "file");
  });

  it("fails with a message naming the variable when a value is malformed", () => {
    const run = spawnSync(process.execPath, ["bin/chain-node.js", "config", "show", "--home", home], {
      cwd: ROOT,
      encoding: "utf8",
      env: cleanEnv({ CHAIN_NODE_RPC_PORT: "eighty" }),
    });
    assert.notEqual(run.status, 0);
    assert.match(run.stderr, /CHAIN_NODE_RPC_PORT: rpc\.port/);
  });
});
