import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { Command } from "commander";
import { keyOptions, rpcOptions, rpcUrlFromHome } from "../../../src/cli/commands/clientOptions.ts";

/**
 * `chain-node tx` without `--rpc-url` on a validator host: the home's config.toml names the node's
 * RPC (8545 for `init`'s homes), found by the deployment guide's walk-through where the default
 * 8080 (`chain-node dev`'s port) reached nothing.
 */

const dir = mkdtempSync(join(tmpdir(), "chain-node-rpcurl-"));
after(() => rmSync(dir, { recursive: true, force: true }));

function home(name: string, config?: string): string {
  const path = join(dir, name);
  if (config !== undefined) {
    mkdirSync(path, { recursive: true });
    writeFileSync(join(path, "config.toml"), config);
  }
  return path;
}

/** The rpcUrl a `tx`-like command ends up with for these arguments. */
function rpcUrlFor(args: string[], env: Record<string, string> = {}): string {
  const saved = process.env.CHAIN_NODE_RPC_URL;
  delete process.env.CHAIN_NODE_RPC_URL;
  Object.assign(process.env, env);
  try {
    let url = "";
    const command = new Command("send").exitOverride();
    for (const option of [...keyOptions(), ...rpcOptions(true)]) command.addOption(option);
    command.hook("preAction", (self) => rpcUrlFromHome(self));
    command.action((flags: { rpcUrl: string }) => {
      url = flags.rpcUrl;
    });
    command.parse(args, { from: "user" });
    return url;
  } finally {
    if (saved === undefined) delete process.env.CHAIN_NODE_RPC_URL;
    else process.env.CHAIN_NODE_RPC_URL = saved;
  }
}

describe("tx's RPC URL from the home", () => {
  const validator = home("validator", '[rpc]\nhost = "0.0.0.0"\nport = 8545\n');
  const local = home("local", "[rpc]\nport = 9000\n");
  const ipv6 = home("ipv6", '[rpc]\nhost = "::"\nport = 8545\n');
  const bare = home("bare");

  it("takes the home's RPC when neither --rpc-url nor CHAIN_NODE_RPC_URL is given", () => {
    assert.equal(rpcUrlFor(["--home", validator]), "http://127.0.0.1:8545", "0.0.0.0 is dialled on loopback");
    assert.equal(rpcUrlFor(["--home", local]), "http://127.0.0.1:9000");
    assert.equal(rpcUrlFor(["--home", ipv6]), "http://[::1]:8545");
  });

  it("keeps --rpc-url and CHAIN_NODE_RPC_URL as given, and 8080 for a home without config.toml", () => {
    assert.equal(
      rpcUrlFor(["--home", validator, "--rpc-url", "http://10.0.0.9:1234"]),
      "http://10.0.0.9:1234",
    );
    assert.equal(
      rpcUrlFor(["--home", validator], { CHAIN_NODE_RPC_URL: "http://10.0.0.8:4321" }),
      "http://10.0.0.8:4321",
    );
    assert.equal(rpcUrlFor(["--home", bare]), "http://127.0.0.1:8080");
  });
});
