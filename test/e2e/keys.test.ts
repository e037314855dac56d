import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { freePort, type NodeProcess, rpc, spawnNode } from "../helpers/process.ts";
import { waitFor } from "../helpers/testNode.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** The Web3 Secret Storage test-vector key and its address. */
const PRIVATE_KEY = "0x7a28b5ba57c53603b0b07b56bba752f7784bf506fa95edc395f5cf6c7514fe9d";
const ADDRESS = "0x008AeEda4D805471dF9b2A5B0f38A0C3bCBA786b";
/** Test-only cheap scrypt (docs/keys.md), so each command takes milliseconds instead of seconds. */
const LIGHT_SCRYPT = { CHAIN_NODE_TEST_KEYSTORE_SCRYPT_N: "1024" };

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** `chain-node <args>` with stdin not a terminal (so there is never a prompt). */
function chainNode(args: string[], env: Record<string, string> = {}): Run {
  const result = spawnSync(process.execPath, ["bin/chain-node.js", ...args], {
    cwd: ROOT,
    encoding: "utf8",
    env: { ...process.env, ...LIGHT_SCRYPT, ...env },
    stdio: ["pipe", "pipe", "pipe"],
    timeout: 60_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function succeeds(args: string[], env?: Record<string, string>): Run {
  const run = chainNode(args, env);
  assert.equal(run.status, 0, `chain-node ${args.join(" ")}:\n${run.stderr}`);
  return run;
}

/** Exit code 1 and exactly one line `chain-node: …` on stderr, never a stack trace. */
function failsWith(args: string[], message: RegExp, env?: Record<string, string>): void {
  const run = chainNode(args, env);
  assert.equal(run.status, 1, `chain-node ${args.join(" ")} exits 1:\n${run.stdout}${run.stderr}`);
  const lines = run.stderr.split("\n").filter((line) => line !== "" && !line.startsWith("warning: "));
  assert.equal(lines.length, 1, `one error line:\n${run.stderr}`);
  assert.match(lines[0] ?? "", /^chain-node: /);
  assert.match(lines[0] ?? "", message);
  assert.doesNotMatch(run.stderr, /^\s+at /m, "no stack trace");
}

describe("chain-node keys", () => {
  const dir = mkdtempSync(join(tmpdir(), "chain-node-keys-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const home = join(dir, "home");
  const passwordFile = join(dir, "password");
  writeFileSync(passwordFile, "correct horse\n", { mode: 0o600 });
  const keyFile = join(dir, "private-key");
  writeFileSync(keyFile, `${PRIVATE_KEY}\n`, { mode: 0o600 });
  const withFile = ["--home", home, "--password-file", passwordFile];
  const envPassword = { CHAIN_NODE_TEST_PASSWORD: "correct horse" };
  const withEnv = ["--home", home, "--password-env", "CHAIN_NODE_TEST_PASSWORD"];

  it("new creates an encrypted key and prints its name and address", () => {
    const named = succeeds(["keys", "new", "--name", "alice", ...withFile]);
    assert.match(named.stdout, /created key "alice"\n\s+address\s+0x[0-9a-fA-F]{40}\n/);
    const unnamed = succeeds(["keys", "new", ...withEnv], envPassword);
    assert.match(unnamed.stdout, /created key "key1"/, "the default name is the first free keyN");
    const file = join(home, "keys", "alice.json");
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const keystore = JSON.parse(readFileSync(file, "utf8")) as { version: number; crypto: { kdf: string } };
    assert.equal(keystore.version, 3);
    assert.equal(keystore.crypto.kdf, "scrypt");
  });

  it("import reads the key from a file, never argv; show and list need no password", () => {
    const imported = succeeds([
      "keys",
      "import",
      "--name",
      "vector",
      "--private-key-file",
      keyFile,
      ...withFile,
    ]);
    assert.match(imported.stdout, new RegExp(`address\\s+${ADDRESS}`));
    assert.equal(succeeds(["keys", "show", "--home", home, "--name", "vector"]).stdout, `${ADDRESS}\n`);
    const lines = succeeds(["keys", "list", "--home", home]).stdout.trim().split("\n");
    assert.deepEqual(
      lines.map((line) => line.split(/\s+/)[0]),
      ["alice", "key1", "vector"],
    );
    assert.match(lines[2] ?? "", new RegExp(`^vector\\s+${ADDRESS}$`));
    const json = JSON.parse(succeeds(["keys", "list", "--home", home, "--json"]).stdout) as unknown[];
    assert.deepEqual(json[2], { name: "vector", address: ADDRESS, encrypted: true });
  });

  it("export prints the private key after the password, with a warning on stderr", () => {
    for (const [args, env] of [
      [withFile, {}],
      [withEnv, envPassword],
    ] as const) {
      const run = succeeds(["keys", "export", "--name", "vector", ...args], env);
      assert.equal(run.stdout, `${PRIVATE_KEY}\n`, "stdout holds the key alone");
      assert.match(run.stderr, /WARNING: .*private key/);
    }
  });

  it("a wrong password is one clear line and exit code 1", () => {
    failsWith(
      ["keys", "export", "--name", "vector", ...withEnv],
      /^chain-node: wrong password for key "vector" \(MAC mismatch\)$/,
      { CHAIN_NODE_TEST_PASSWORD: "wrong horse" },
    );
  });

  it("fails clearly on a taken name, a missing or corrupt key, a bad name and no password source", () => {
    failsWith(["keys", "new", "--name", "alice", ...withFile], /a key named "alice" already exists/);
    failsWith(["keys", "export", "--name", "nobody", ...withFile], /no key "nobody"/);
    failsWith(["keys", "show", "--home", home, "--name", "../etc"], /invalid key name/);
    writeFileSync(join(home, "keys", "broken.json"), '{"version":3,"crypto":{');
    failsWith(["keys", "export", "--name", "broken", ...withFile], /broken\.json is not JSON/);
    failsWith(
      ["keys", "export", "--name", "vector", "--home", home],
      /--password-file FILE or --password-env VAR/,
    );
    failsWith(["keys", "new", "--name", "x", "--home", home], /stdin is not a terminal/);
    failsWith(["keys", "import", "--name", "x", ...withFile], /--private-key-file/);
    failsWith(["keys", "export", "--name", "vector", ...withEnv], /CHAIN_NODE_TEST_PASSWORD is not set/);
    const list = chainNode(["keys", "list", "--home", home]);
    assert.equal(list.status, 0, "list still lists the readable keys");
    assert.match(list.stderr, /skipped "broken"/);
  });
});

describe("init --encrypt-key and start", () => {
  const dir = mkdtempSync(join(tmpdir(), "chain-node-keys-init-"));
  const home = join(dir, "home");
  let node: NodeProcess | undefined;
  after(async () => {
    await node?.stop();
    delete process.env.CHAIN_NODE_TEST_VALIDATOR_PASSWORD;
    rmSync(dir, { recursive: true, force: true });
  });

  it("writes the validator key as a keystore that start decrypts with --password-env", async () => {
    const [rpcPort, p2pPort] = [await freePort(), await freePort()];
    const passwordFile = join(dir, "password");
    writeFileSync(passwordFile, "validator pw\n", { mode: 0o600 });
    const init = ["init", "--home", home, "--encrypt-key", "--password-file", passwordFile];
    const out = succeeds([...init, "--rpc-port", String(rpcPort), "--p2p-port", String(p2pPort)]).stdout;
    const address = /validator\s+(0x[0-9a-fA-F]{40})/.exec(out)?.[1];
    assert.ok(address, out);
    const keyFile = JSON.parse(readFileSync(join(home, "keys", "validator.json"), "utf8")) as Record<
      string,
      unknown
    >;
    assert.equal(keyFile.version, 3, "a v3 keystore");
    assert.equal(keyFile.private_key, undefined, "no plain key on disk");
    assert.equal(succeeds(["keys", "show", "--home", home, "--name", "validator"]).stdout.trim(), address);

    const start = ["start", "--home", home, "--password-env", "CHAIN_NODE_TEST_VALIDATOR_PASSWORD"];
    failsWith(start, /wrong password for .*validator\.json \(MAC mismatch\)/, {
      CHAIN_NODE_TEST_VALIDATOR_PASSWORD: "not it",
    });
    failsWith(["start", "--home", home], /validator key .*needs a password/);

    // spawnNode passes this process's environment on to the node.
    process.env.CHAIN_NODE_TEST_VALIDATOR_PASSWORD = "validator pw";
    node = await spawnNode([...start, "--log-level", "warn"], rpcPort, 30_000);
    const started = node;
    assert.match(started.output(), new RegExp(`validator\\s+${address}`));
    await waitFor(
      "block 1 committed by the decrypted validator key",
      async () => ((await rpc<number>(started.url, "chain_getRecentBlockNumber")) >= 1 ? true : undefined),
      20_000,
    );
    assert.equal(await rpc(started.url, "chain_isValidator", { address }), true);
    assert.equal(await started.stop(), 0, "SIGTERM exits cleanly");
  });
});
