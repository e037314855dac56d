import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { parse as parseToml } from "smol-toml";
import { UNORDERED_TX_WINDOW_MS } from "../../../src/chain/index.ts";
import {
  applyConfig,
  configJson,
  defaultNodeOptions,
  envLayer,
  envName,
  fileLayer,
  flagLayer,
  loadConfig,
  renderConfigToml,
  resolveConfig,
  SETTINGS,
  settingId,
  threadFor,
} from "../../../src/node/index.ts";

const DOCS = resolve(dirname(fileURLToPath(import.meta.url)), "../../../docs/configuration.md");

describe("configuration: flags > environment > config.toml > defaults", () => {
  const homes: string[] = [];
  after(() => {
    for (const home of homes) rmSync(home, { recursive: true, force: true });
  });
  const homeWith = (toml: string): string => {
    const home = mkdtempSync(join(tmpdir(), "chain-node-config-"));
    homes.push(home);
    writeFileSync(join(home, "config.toml"), toml);
    return home;
  };
  const flagOf = () => "--test-flag";

  it("takes each value from the strongest layer that sets it, and says which", () => {
    const home = homeWith(
      '[rpc]\nport = 9000\nmax_block_range = 50\ncors = true\n[node]\nname = "from-file"\n[p2p]\nport = 3000\n',
    );
    const resolved = resolveConfig(defaultNodeOptions(home), [
      fileLayer(home),
      envLayer({
        CHAIN_NODE_RPC_PORT: "9100",
        CHAIN_NODE_RPC_MAX_BLOCK_RANGE: "60",
        CHAIN_NODE_POOL_MAX_TXS: "7",
      }),
      flagLayer({ rpc: { port: 9200 } }, flagOf),
    ]);
    const { options, sources } = resolved;
    assert.equal(options.rpc.port, 9200, "flag over environment over file");
    assert.equal(options.rpc.maxBlockRange, 60, "environment over file");
    assert.equal(options.pool.maxPoolTxs, 7, "environment over default");
    assert.equal(options.rpc.cors, true, "file over default");
    assert.equal(options.name, "from-file");
    assert.equal(options.p2p.port, 3000);
    assert.equal(options.rpc.maxBodyBytes, defaultNodeOptions(home).rpc.maxBodyBytes, "default");

    assert.deepEqual(sources["rpc.port"], { source: "flag", from: "--test-flag" });
    assert.deepEqual(sources["rpc.max_block_range"], {
      source: "env",
      from: "CHAIN_NODE_RPC_MAX_BLOCK_RANGE",
    });
    assert.deepEqual(sources["rpc.cors"], { source: "file", from: join(home, "config.toml") });
    assert.deepEqual(sources["rpc.max_body_bytes"], { source: "default" });
    assert.equal(Object.keys(sources).length, SETTINGS.length, "a source for every setting");
  });

  it("does not change the defaults it starts from", () => {
    const defaults = defaultNodeOptions("/nowhere");
    resolveConfig(defaults, [envLayer({ CHAIN_NODE_P2P_BOOTSTRAP: "/ip4/1.2.3.4/tcp/1/p2p/a" })]);
    assert.deepEqual(defaults.p2p.bootstrap, []);
  });

  it("reads environment values as the setting's type", () => {
    const layer = envLayer({
      CHAIN_NODE_RPC_CORS: "true",
      CHAIN_NODE_RPC_METRICS: "0",
      CHAIN_NODE_P2P_BOOTSTRAP: " /ip4/1.2.3.4/tcp/1/p2p/a, /ip4/5.6.7.8/tcp/2/p2p/b ,",
      CHAIN_NODE_NODE_LOG_LEVEL: "debug",
      CHAIN_NODE_NODE_LOCATION: "Seoul",
      CHAIN_NODE_CONSENSUS_TIMEOUT_VOTE_MS: "750",
      CHAIN_NODE_PASSWORD: "not a setting: left alone",
      PATH: "/usr/bin",
    });
    assert.deepEqual(layer.values, {
      rpc: { cors: true, metrics: false },
      p2p: { bootstrap: ["/ip4/1.2.3.4/tcp/1/p2p/a", "/ip4/5.6.7.8/tcp/2/p2p/b"] },
      node: { log_level: "debug", location: "Seoul" },
      consensus: { timeout_vote_ms: 750 },
    });
  });

  it("refuses a malformed value, naming the variable, the file or the flag", () => {
    assert.throws(() => envLayer({ CHAIN_NODE_RPC_PORT: "80a" }), /CHAIN_NODE_RPC_PORT: rpc\.port/);
    assert.throws(() => envLayer({ CHAIN_NODE_RPC_PORT: "70000" }), /CHAIN_NODE_RPC_PORT/);
    assert.throws(() => envLayer({ CHAIN_NODE_RPC_CORS: "yes" }), /CHAIN_NODE_RPC_CORS/);
    assert.throws(() => envLayer({ CHAIN_NODE_NODE_LOG_LEVEL: "loud" }), /CHAIN_NODE_NODE_LOG_LEVEL/);
    assert.throws(() => flagLayer({ rpc: { port: -1 } }, flagOf), /--test-flag: rpc\.port/);
    const typo = homeWith("[rpc]\nprot = 1\n");
    assert.throws(
      () => loadConfig(typo),
      (error: Error) => error.message.includes("config.toml: rpc.prot"),
    );
    const wrongType = homeWith('[pool]\nmax_txs = "many"\n');
    assert.throws(() => loadConfig(wrongType), /pool\.max_txs/);
    const unknownSection = homeWith("[mempool]\nsize = 1\n");
    assert.throws(() => loadConfig(unknownSection), /mempool/);
  });

  it("bounds pool.replay_window_ms by the chain's window for unordered transactions", () => {
    const widest = envLayer({ CHAIN_NODE_POOL_REPLAY_WINDOW_MS: String(UNORDERED_TX_WINDOW_MS) });
    assert.deepEqual(widest.values, { pool: { replay_window_ms: UNORDERED_TX_WINDOW_MS } });
    assert.throws(
      () => envLayer({ CHAIN_NODE_POOL_REPLAY_WINDOW_MS: String(UNORDERED_TX_WINDOW_MS + 1) }),
      /CHAIN_NODE_POOL_REPLAY_WINDOW_MS: pool\.replay_window_ms/,
    );
    assert.throws(
      () => loadConfig(homeWith("[pool]\nreplay_window_ms = 86400000\n")),
      /pool\.replay_window_ms/,
    );
    assert.equal(defaultNodeOptions("/x").pool.replayWindowMs, UNORDERED_TX_WINDOW_MS);
  });

  it("takes retention 0 (keep all) or at least 2, from the environment and the file", () => {
    const layer = envLayer({
      CHAIN_NODE_STORAGE_RETAIN_STATES: "0",
      CHAIN_NODE_STORAGE_RETAIN_BLOCKS: "1000",
    });
    assert.deepEqual(layer.values, { storage: { retain_states: 0, retain_blocks: 1000 } });
    for (const bad of ["1", "-2", "2.5", "many"]) {
      assert.throws(
        () => envLayer({ CHAIN_NODE_STORAGE_RETAIN_STATES: bad }),
        /CHAIN_NODE_STORAGE_RETAIN_STATES: storage\.retain_states/,
        bad,
      );
    }
    assert.throws(() => loadConfig(homeWith("[storage]\nretain_blocks = 1\n")), /storage\.retain_blocks/);
    assert.deepEqual(defaultNodeOptions("/x").storage, {
      retainStates: 128,
      retainBlocks: 0,
      writeThread: "auto",
      trieThread: "auto",
    });
  });

  it("takes storage.write_thread as true, false or auto; auto is on for a dev node only", () => {
    const fromEnv = (text: string) =>
      resolveConfig(defaultNodeOptions("/x"), [envLayer({ CHAIN_NODE_STORAGE_WRITE_THREAD: text })]).options
        .storage.writeThread;
    assert.equal(fromEnv("true"), true);
    assert.equal(fromEnv("0"), false);
    assert.equal(fromEnv("auto"), "auto");
    assert.throws(() => fromEnv("sometimes"), /CHAIN_NODE_STORAGE_WRITE_THREAD: storage\.write_thread/);
    const file = (toml: string) =>
      resolveConfig(defaultNodeOptions("/x"), [fileLayer(homeWith(toml))]).options.storage.writeThread;
    assert.equal(file('[storage]\nwrite_thread = "auto"\n'), "auto");
    assert.equal(file("[storage]\nwrite_thread = false\n"), false);
    assert.throws(() => file('[storage]\nwrite_thread = "yes"\n'), /storage\.write_thread/);
    assert.equal(threadFor("auto", "dev"), true);
    assert.equal(threadFor("auto", "network"), false);
    assert.equal(threadFor(true, "network"), true);
    assert.equal(threadFor(false, "dev"), false);
  });

  it("takes storage.trie_thread as true, false or auto (the default)", () => {
    const fromEnv = (text: string) =>
      resolveConfig(defaultNodeOptions("/x"), [envLayer({ CHAIN_NODE_STORAGE_TRIE_THREAD: text })]).options
        .storage.trieThread;
    assert.equal(defaultNodeOptions("/x").storage.trieThread, "auto");
    assert.equal(fromEnv("true"), true);
    assert.equal(fromEnv("false"), false);
    assert.throws(() => fromEnv("sometimes"), /CHAIN_NODE_STORAGE_TRIE_THREAD: storage\.trie_thread/);
    const file = (toml: string) =>
      resolveConfig(defaultNodeOptions("/x"), [fileLayer(homeWith(toml))]).options.storage.trieThread;
    assert.equal(file("[storage]\ntrie_thread = true\n"), true);
  });

  it("treats a home without config.toml as an empty file", () => {
    const home = mkdtempSync(join(tmpdir(), "chain-node-config-"));
    homes.push(home);
    assert.deepEqual(loadConfig(home), {});
  });

  it("keeps applyConfig (file over defaults) for its callers", () => {
    const options = applyConfig(defaultNodeOptions("/x"), { rpc: { port: 1234 }, pool: { max_txs: 9 } });
    assert.equal(options.rpc.port, 1234);
    assert.equal(options.pool.maxPoolTxs, 9);
  });

  it("config show's TOML is a config.toml that yields the same options", () => {
    const home = homeWith('[rpc]\nport = 9000\n[p2p]\nbootstrap = ["/ip4/1.2.3.4/tcp/1/p2p/a"]\n');
    const resolved = resolveConfig(defaultNodeOptions(home), [
      fileLayer(home),
      envLayer({ CHAIN_NODE_NODE_NAME: 'quote " and \\ backslash' }),
      flagLayer({ node: { log_level: "warn" } }, () => "--log-level"),
    ]);
    const toml = renderConfigToml(resolved, home);
    assert.match(toml, /^port = 9000 +# file .*config\.toml$/m);
    assert.match(toml, /^log_level = "warn" +# flag --log-level$/m);
    assert.match(toml, /^name = .* +# env CHAIN_NODE_NODE_NAME$/m);
    assert.match(toml, /^max_txs = 5000 +# default$/m);
    const copy = homeWith(toml);
    const again = resolveConfig(defaultNodeOptions(copy), [fileLayer(copy)]);
    assert.deepEqual(again.options, { ...resolved.options, home: copy });
    // Compared as JSON: smol-toml builds its tables without Object.prototype.
    assert.deepEqual(JSON.parse(JSON.stringify(parseToml(toml))), configJson(resolved).config);
  });

  it("docs/configuration.md documents every setting with its environment variable", () => {
    const docs = readFileSync(DOCS, "utf8");
    for (const setting of SETTINGS) {
      const section = docs.indexOf(`### [${setting.section}]`);
      assert.ok(section >= 0, `a section for [${setting.section}]`);
      const next = docs.indexOf("\n### ", section + 1);
      const body = docs.slice(section, next === -1 ? undefined : next);
      assert.ok(body.includes(`| \`${setting.key}\` |`), `${settingId(setting)} has a row`);
      assert.ok(body.includes(`\`${envName(setting)}\``), `${settingId(setting)} names ${envName(setting)}`);
    }
  });
});
