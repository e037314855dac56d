import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { HostNetwork } from "../helpers/netns.ts";
import { outputLine } from "../helpers/process.ts";
import { orUndefined, unixRpc } from "../helpers/unixRpc.ts";
import { canMakeNamespaces, removeLeftoverNamespaces } from "../helpers/netnsCleanup.ts";
import { signTx, transferBody, waitFor } from "../helpers/testNode.ts";

/**
 * Issue 19 item 3: a network across hosts. Five nodes, each in a network namespace of its own
 * (test/helpers/netns.ts, docs/testing-hosts.md), set up by the genesis flow of docs/deployment.md:
 * four validators whose `init` announce their host's address, one genesis collected from their
 * entries and installed with one bootstrap peer (v0), and a full node that knows only v0. Every
 * node listens on 0.0.0.0:26656 and serves RPC on 127.0.0.1:8545 of its own host; the test, in the
 * root namespace, reaches each RPC through a unix socket forwarder run inside the host
 * (test/helpers/unixForwardMain.ts). Checked: blocks commit everywhere with one chain; the full node
 * finds the others by exchange; a transfer sent to any host commits on all; a host cut off lets
 * the other three validators go on, and catches up when its link comes back; no node ever dialled
 * a 127.0.0.1 p2p address. Needs root and `ip`; skipped otherwise, with the reason.
 */

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const FORWARDER = fileURLToPath(new URL("../helpers/unixForwardMain.ts", import.meta.url));
const CHAIN_ID = 7;
const P2P_PORT = 26656;
const RPC_PORT = 8545;
const VALIDATORS = 4;
const HOSTS = VALIDATORS + 1;
const FULL = VALIDATORS; // the full node's host
const support = canMakeNamespaces();

function cli(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ["bin/chain-node.js", ...args],
      { cwd: ROOT, env: { ...process.env, CHAIN_NODE_TEST_KEYSTORE_SCRYPT_N: "2" }, timeout: 60_000 },
      (error, stdout, stderr) => {
        if (error === null) resolve(stdout);
        else reject(new Error(`chain-node ${args.join(" ")}: ${error.message}\n${stderr}`));
      },
    );
  });
}

interface Block {
  number: number;
  hash: string;
}

describe("a network across hosts: five nodes in five network namespaces, built by the genesis flow", {
  skip: support.ok ? false : support.reason,
  timeout: 180_000,
}, () => {
  const dir = mkdtempSync(join(tmpdir(), "chain-node-hosts-"));
  const home = (i: number) => join(dir, `h${i}`);
  const socket = (i: number) => join(dir, `rpc-${i}.sock`);
  const call = <T>(i: number, method: string, params?: unknown) => unixRpc<T>(socket(i), method, params);
  const head = (i: number) => call<number>(i, "chain_getRecentBlockNumber");
  const blockAt = (i: number, number: number) => call<Block | null>(i, "chain_getBlockByNumber", { number });
  const all = Array.from({ length: HOSTS }, (_, i) => i);
  const outputs: string[] = all.map(() => "");
  let net: HostNetwork | undefined;
  /** Every TCP socket seen on a host (`ss -tan`, all states but LISTEN), sampled while the test runs. */
  const seen: Set<string>[] = all.map(() => new Set());
  let sampler: NodeJS.Timeout | undefined;
  let sampling: Promise<void> = Promise.resolve();

  const hostsNet = (): HostNetwork => {
    assert.ok(net !== undefined, "the host network exists");
    return net;
  };

  const sample = async (): Promise<void> => {
    const network = net;
    if (network === undefined) return;
    await Promise.all(
      all.map(async (i) => {
        const { stdout } = await network.exec(i, "ss", ["-tanH"], { timeoutMs: 5_000 });
        for (const line of stdout.split("\n")) {
          const fields = line.trim().split(/\s+/);
          if (fields.length < 5 || fields[0] === "LISTEN") continue;
          seen[i]?.add(`${fields[0]} ${fields[3]} ${fields[4]}`);
        }
      }),
    );
  };

  after(async () => {
    clearInterval(sampler);
    await sampling.catch(() => {});
    await net?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  before(async () => {
    removeLeftoverNamespaces();
    net = await HostNetwork.create(HOSTS);
  });

  it("sets up by the genesis flow: entries, one genesis, installs, a full node, and starts on every host", async (t) => {
    const network = hostsNet();
    const startedAt = Date.now();
    const announce = (i: number) => `/ip4/${network.hosts[i]?.ip}/tcp/${P2P_PORT}`;
    const common = ["--p2p-host", "0.0.0.0", "--p2p-port", String(P2P_PORT), "--rpc-port", String(RPC_PORT)];
    const validators = Array.from({ length: VALIDATORS }, (_, i) => i);
    await Promise.all(
      validators.map((i) =>
        cli([
          "init",
          "--home",
          home(i),
          "--chain-id",
          String(CHAIN_ID),
          "--p2p-announce",
          announce(i),
          "--name",
          `v${i}`,
          ...common,
        ]),
      ),
    );
    // What v0's operator hands the others as the bootstrap address: its entry's announced address.
    const entry = JSON.parse(readFileSync(join(home(0), "validator-entry.json"), "utf8")) as {
      peer_id: string;
      announce: string[];
    };
    const bootstrap = `${announce(0)}/p2p/${entry.peer_id}`;
    assert.deepEqual(entry.announce, [bootstrap], "v0 announces its host's address");
    const entries = Array.from({ length: VALIDATORS - 1 }, (_, k) =>
      join(home(k + 1), "validator-entry.json"),
    );
    assert.match(
      await cli(["genesis", "add-validator", "--home", home(0), ...entries]),
      /4 validators \(3 added/,
    );
    const genesis = join(home(0), "genesis.json");
    const installs = validators
      .slice(1)
      .map((i) =>
        cli(["genesis", "install", "--home", home(i), "--genesis", genesis, "--bootstrap", bootstrap]),
      );
    const fullInit = cli([
      "init",
      "--home",
      home(FULL),
      "--genesis",
      genesis,
      "--bootstrap",
      bootstrap,
      "--p2p-announce",
      announce(FULL),
      "--name",
      "full",
      ...common,
    ]);
    const [, ...installed] = await Promise.all([fullInit, ...installs]);
    for (const out of installed) assert.match(out, /this home validates/);

    const setUpAt = Date.now();
    const forwarders: Promise<unknown>[] = [];
    for (const i of all) {
      const node = network.spawn(
        i,
        process.execPath,
        ["bin/chain-node.js", "start", "--home", home(i), "--log-level", "warn"],
        { cwd: ROOT },
      );
      const keep = (chunk: Buffer) => {
        outputs[i] = `${outputs[i]}${chunk.toString()}`.slice(-20_000);
      };
      node.stdout?.on("data", keep);
      node.stderr?.on("data", keep);
      const forwarder = network.spawn(
        i,
        process.execPath,
        ["--import", "tsx", FORWARDER, socket(i), String(RPC_PORT)],
        { cwd: ROOT },
      );
      forwarders.push(outputLine(forwarder, /listening/, `RPC forwarder on host ${i}`));
    }
    await Promise.all(forwarders);
    sampler = setInterval(() => {
      sampling = sampling.then(sample).catch(() => {});
    }, 2_000);
    for (const i of all) {
      await waitFor(`host ${i}'s RPC`, () => orUndefined(head(i)), 30_000).catch((error: unknown) => {
        throw new Error(`${String(error)}\n${outputs[i]}`);
      });
    }
    t.diagnostic(
      `genesis flow ${setUpAt - startedAt} ms, then every node serving RPC after ${Date.now() - setUpAt} ms`,
    );
  });

  it("commits blocks on all five hosts, one chain, and the full node finds the others by exchange", async () => {
    await waitFor(
      "every host at block 3, the full node with 3 peers",
      async () => {
        for (const i of all) if (((await orUndefined(head(i))) ?? 0) < 3) return undefined;
        return ((await orUndefined(call<number>(FULL, "net_peerCount"))) ?? 0) >= 3 ? true : undefined;
      },
      60_000,
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}\n${outputs.map((o, i) => `--- host ${i}\n${o}`).join("\n")}`);
    });
    const blocks = await Promise.all(all.map((i) => blockAt(i, 3)));
    assert.equal(new Set(blocks.map((block) => block?.hash)).size, 1, "the same block 3 on every host");
    assert.ok(blocks[0]?.hash !== undefined);
  });

  it("a transfer sent to a validator's host, and one sent to the full node, commit on every host", async () => {
    const key = JSON.parse(readFileSync(join(home(1), "keys", "validator.json"), "utf8")) as {
      address: string;
      private_key: string;
    };
    const recipient = `0x${randomBytes(20).toString("hex")}`;
    const sends = [
      { host: 2, amount: 1_000 },
      { host: FULL, amount: 234 },
    ];
    const hashes: string[] = [];
    for (const [n, { host, amount }] of sends.entries()) {
      const tx = signTx(
        key.private_key,
        transferBody(key.address, recipient, amount, -1, `hosts-${n}-${Date.now()}`),
        CHAIN_ID,
      );
      hashes.push(await call<string>(host, "chain_sendSignedTransaction", tx));
    }
    for (const hash of hashes) {
      await waitFor(
        `transfer ${hash} committed on every host`,
        async () => {
          const found = await Promise.all(
            all.map((i) =>
              orUndefined(
                call<{ block_number?: number; status?: string } | null>(i, "chain_getTransactionByHash", {
                  hash,
                }),
              ),
            ),
          );
          return found.every((tx) => typeof tx?.block_number === "number") ? found : undefined;
        },
        30_000,
      );
    }
    const expected = sends.reduce((sum, send) => sum + send.amount, 0);
    await waitFor(
      "the recipient's balance the same on every host",
      async () => {
        const balances = await Promise.all(
          all.map((i) => orUndefined(call<number>(i, "chain_getBalance", { address: recipient }))),
        );
        return balances.every((balance) => balance === expected) ? true : undefined;
      },
      10_000,
    );
  });

  it("a host cut off: the other three validators go on; restored, it catches up with the same chain", async (t) => {
    const network = hostsNet();
    const CUT = 3;
    const others = all.filter((i) => i !== CUT);
    const before = Math.max(...(await Promise.all(all.map(head))));
    network.cut(CUT);
    const cutAt = Date.now();
    const target = before + 4;
    await waitFor(
      `hosts ${others.join(",")} past block ${target} without host ${CUT}`,
      async () => {
        for (const i of others) if (((await orUndefined(head(i))) ?? 0) < target) return undefined;
        return true;
      },
      40_000,
    );
    // Host 3 serves RPC on its own loopback still: it is alive, and stuck behind.
    assert.ok((await head(CUT)) < target, "the cut host made no progress with the others");
    t.diagnostic(`blocks ${before}..${target} without host ${CUT} in ${Date.now() - cutAt} ms`);
    network.restore(CUT);
    const restoredAt = Date.now();
    const reached = Math.max(...(await Promise.all(others.map(head))));
    await waitFor(
      `host ${CUT} back at block ${reached}`,
      async () => (((await orUndefined(head(CUT))) ?? 0) >= reached ? true : undefined),
      40_000,
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}\n--- host ${CUT}\n${outputs[CUT]}`);
    });
    t.diagnostic(`host ${CUT} at block ${reached} ${Date.now() - restoredAt} ms after its link came back`);
    const afterCut = before + 2;
    const blocks = await Promise.all(all.map((i) => blockAt(i, afterCut)));
    assert.equal(
      new Set(blocks.map((block) => block?.hash)).size,
      1,
      `the same block ${afterCut} (made while host ${CUT} was cut off) on every host`,
    );
  });

  it("no node dialled a 127.0.0.1 p2p address: every p2p connection is between two hosts' addresses", async (t) => {
    clearInterval(sampler);
    await sampling;
    await sample();
    const ips = new Set(hostsNet().hosts.map((host) => host.ip));
    const isP2p = (address: string) => address.endsWith(`:${P2P_PORT}`);
    let p2pSockets = 0;
    for (const i of all) {
      for (const entry of seen[i] ?? []) {
        const [state, local = "", peer = ""] = entry.split(" ");
        if (!isP2p(local) && !isP2p(peer)) continue;
        p2pSockets += 1;
        const ipOf = (address: string) => address.slice(0, address.lastIndexOf(":"));
        assert.ok(
          ipOf(local) === hostsNet().hosts[i]?.ip && ips.has(ipOf(peer)) && ipOf(peer) !== ipOf(local),
          `host ${i}: p2p socket ${state} ${local} → ${peer} is not between two hosts`,
        );
      }
    }
    assert.ok(p2pSockets >= HOSTS, `p2p sockets were seen (${p2pSockets})`);
    t.diagnostic(`${p2pSockets} p2p sockets seen across the hosts, every one between two hosts' addresses`);
  });
});
