import assert from "node:assert/strict";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { HostNetwork } from "../helpers/netns.ts";
import { canMakeNamespaces, removeLeftoverNamespaces } from "../helpers/netnsCleanup.ts";
import { waitFor } from "../helpers/testNode.ts";

/**
 * Issue 19: "docs/deployment.md followed command by command on namespaces". The guide's own `sh`
 * blocks, read from the page by their section's heading, run as a new operator would run them,
 * on five hosts made of network namespaces (test/helpers/netns.ts): four validators (the guide's
 * 10.0.0.2–10.0.0.5), then a full node on a fifth host (10.0.0.6) that joins, then stakes and
 * becomes a validator. Only the guide's example values are replaced: `/var/lib/chain-node` by the
 * host's own home, 10.0.0.N by the hosts' addresses, `12D3KooW…` by the peer id the first host
 * printed, the example validator address by the one `init` printed, and `chain-node` by this
 * checkout's CLI. Files an operator would send (entries, genesis.json) are copied into the
 * receiving host's working directory, where its commands run. `start` is spawned and kept; every
 * other command must exit 0, and the doc's `curl` checks are polled until they say what the doc
 * says. Needs root and `ip`; skipped otherwise, with the reason.
 */

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const DOC = readFileSync(join(ROOT, "docs", "deployment.md"), "utf8");
const VALIDATORS = 4;
const NEW = VALIDATORS; // the fifth host: full node, then validator
const HOSTS = VALIDATORS + 1;
/** The guide's example addresses, in host order: 10.0.0.2 is host 0, 10.0.0.6 is host 4. */
const DOC_IP = /\b10\.0\.0\.([2-6])\b/g;
const docIp = (i: number) => `10.0.0.${i + 2}`;
/** The guide's stand-in for the new validator's address. */
const DOC_ADDRESS = "0x8ba1f109551bD432803012645Ac136ddd64DBA72";
const WAIT_MS = 60_000;
const support = canMakeNamespaces();

/** The fenced `sh` blocks of the section under `heading` (up to the next heading of its level or above). */
function shBlocks(heading: string): string[] {
  const start = DOC.indexOf(`\n${heading}\n`);
  assert.ok(start >= 0, `docs/deployment.md has a section "${heading}"`);
  const level = heading.indexOf(" ");
  const rest = DOC.slice(start + heading.length + 2);
  const end = rest.search(new RegExp(`^#{1,${level}} `, "m"));
  const section = end < 0 ? rest : rest.slice(0, end);
  const blocks = [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((match) => match[1] as string);
  assert.ok(blocks.length > 0, `"${heading}" has an sh block`);
  return blocks;
}

/** A block's commands: one per line, lines ending in `\` joined to the next; blank lines dropped. */
function commandsOf(block: string): string[] {
  return block
    .replace(/\\\n\s*/g, "")
    .split("\n")
    .filter((line) => line.trim() !== "");
}

/** The one command of a block that holds one. */
function onlyCommand(block: string): string {
  const [command, ...more] = commandsOf(block);
  assert.ok(command !== undefined && more.length === 0, `one command in:\n${block}`);
  return command;
}

interface Block {
  number: number;
  hash: string;
  proposer: string;
  validators: string[];
}

describe("docs/deployment.md, followed command by command on five namespaced hosts", {
  skip: support.ok ? false : support.reason,
  timeout: 240_000,
}, () => {
  const dir = mkdtempSync(join(tmpdir(), "cn-guide-"));
  /** Host i's /var/lib/chain-node. */
  const home = (i: number) => join(dir, `host${i}`, "var-lib-chain-node");
  /** Host i's working directory: where its commands run and files sent to it land. */
  const work = (i: number) => join(dir, `host${i}`, "work");
  const outputs: string[] = Array.from({ length: HOSTS }, () => "");
  let net: HostNetwork | undefined;
  /** What the run learns as the operator would: host 0's peer id, block 0's hash, the new validator. */
  let peerId = "";
  let genesisHash = "";
  let newAddress = "";

  const hosts = (): HostNetwork => {
    assert.ok(net !== undefined, "the host network exists");
    return net;
  };

  /** The guide's text as host `i`'s operator types it, example values replaced by this run's. */
  const forHost = (i: number, command: string): string =>
    command
      .replaceAll("/var/lib/chain-node", home(i))
      .replace(DOC_IP, (_, n: string) => hosts().hosts[Number(n) - 2]?.ip ?? "no-such-host")
      .replaceAll("12D3KooW…", peerId)
      .replaceAll(DOC_ADDRESS, newAddress)
      .replace(/^chain-node /gm, `"${process.execPath}" "${join(ROOT, "bin", "chain-node.js")}" `);

  /** Runs one command of the guide in host `i`; it must exit 0. Returns its stdout. */
  const run = async (i: number, command: string): Promise<string> => {
    const { code, stdout, stderr } = await hosts().exec(i, "bash", ["-c", forHost(i, command)], {
      cwd: work(i),
      timeoutMs: WAIT_MS,
    });
    assert.equal(code, 0, `host ${i}: ${command}\nexited ${code}\n${stdout}\n${stderr}`);
    return stdout;
  };

  /** Spawns the guide's `chain-node start` in host `i` and keeps what it prints for failure messages. */
  const start = (i: number, command: string): void => {
    assert.match(command, /^chain-node start /, "the block's long-running command");
    // `exec`: the pid `destroy()` kills is the node's, not a shell's.
    const node = hosts().spawn(i, "bash", ["-c", `exec ${forHost(i, command)}`], { cwd: work(i) });
    const keep = (chunk: Buffer) => {
      outputs[i] = `${outputs[i]}${chunk.toString()}`.slice(-20_000);
    };
    node.stdout?.on("data", keep);
    node.stderr?.on("data", keep);
  };

  /** Repeats the guide's check `command` in host `i` until its output satisfies `ok` (a command may fail meanwhile). */
  const until = (i: number, command: string, ok: (stdout: string) => boolean, what: string) =>
    waitFor(
      `host ${i}: ${what}`,
      async () => {
        const { code, stdout } = await hosts().exec(i, "bash", ["-c", forHost(i, command)], { cwd: work(i) });
        if (code === 0 && ok(stdout)) return stdout;
        await new Promise((resolve) => setTimeout(resolve, 250));
        return undefined;
      },
      WAIT_MS,
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}\n--- host ${i}'s node\n${outputs[i]}`);
    });

  /** The test's own look at a host's node: JSON-RPC to its 127.0.0.1:8545, from inside the host. */
  const rpc = async <T>(i: number, method: string, params?: unknown): Promise<T | undefined> => {
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method, params });
    const { code, stdout } = await hosts().exec(
      i,
      "curl",
      ["-s", "-X", "POST", "-H", "content-type: application/json", "--data", body, "localhost:8545"],
      { timeoutMs: 10_000 },
    );
    if (code !== 0) return undefined;
    return (JSON.parse(stdout) as { result?: T }).result;
  };
  const head = async (i: number) => (await rpc<number>(i, "chain_getRecentBlockNumber")) ?? -1;
  const blockAt = (i: number, number: number) => rpc<Block | null>(i, "chain_getBlockByNumber", { number });

  /** An operator "sends" a file: a copy from one host's disk into another's working directory. */
  const send = (from: string, to: number, name: string) => copyFileSync(from, join(work(to), name));

  /** Waits for every host in `which` at `height` or above, and checks they hold the same block there. */
  const sameBlockAt = async (which: number[], height: number): Promise<Block> => {
    await waitFor(
      `hosts ${which.join(",")} at block ${height}`,
      async () => {
        const heads = await Promise.all(which.map(head));
        if (heads.every((h) => h >= height)) return true;
        await new Promise((resolve) => setTimeout(resolve, 250));
        return undefined;
      },
      WAIT_MS,
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}\n${which.map((i) => `--- host ${i}\n${outputs[i]}`).join("\n")}`);
    });
    const blocks = await Promise.all(which.map((i) => blockAt(i, height)));
    assert.equal(new Set(blocks.map((block) => block?.hash)).size, 1, `one block ${height} on every host`);
    assert.ok(blocks[0]?.hash !== undefined, `block ${height} exists`);
    return blocks[0];
  };

  before(async () => {
    removeLeftoverNamespaces();
    net = await HostNetwork.create(HOSTS);
    for (let i = 0; i < HOSTS; i += 1) mkdirSync(work(i), { recursive: true });
  });

  after(async () => {
    await net?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  const validators = Array.from({ length: VALIDATORS }, (_, i) => i);
  const others = validators.slice(1);

  it("sections 1–3: an entry on each validator host, one genesis from them, installed on the others", async () => {
    // 1. Each validator host runs the block with its own address in --p2p-announce, as the guide says.
    const [init] = shBlocks("## 1. On each validator host: a key and an entry");
    assert.ok(init !== undefined);
    const initCommand = onlyCommand(init);
    const printed = await Promise.all(
      validators.map((i) => run(i, initCommand.replaceAll(docIp(0), docIp(i)))),
    );
    for (const i of validators) {
      // It prints the entry it wrote: the same JSON, with this host's address announced.
      const entry = JSON.parse(readFileSync(join(home(i), "validator-entry.json"), "utf8")) as {
        chain_id: number;
        peer_id: string;
        announce: string[];
      };
      const line = (printed[i] ?? "").split("\n").find((l) => l.startsWith("{"));
      assert.deepEqual(JSON.parse(line ?? "null"), entry, `host ${i} prints its entry`);
      assert.deepEqual(entry.announce, [`/ip4/${hosts().hosts[i]?.ip}/tcp/26656/p2p/${entry.peer_id}`]);
      assert.equal(String(entry.chain_id), /--chain-id (\d+)/.exec(initCommand)?.[1], "the doc's chain id");
      if (i === 0) peerId = entry.peer_id;
    }

    // 2. The other three send their entries to host 0 as entry-1.json … entry-3.json.
    for (const k of others) send(join(home(k), "validator-entry.json"), 0, `entry-${k}.json`);
    const [assemble] = shBlocks("## 2. On one host: the genesis");
    assert.ok(assemble !== undefined);
    const assembled = await run(0, onlyCommand(assemble));
    assert.match(assembled, new RegExp(`${VALIDATORS} validators \\(${others.length} added`));
    for (const i of validators) {
      const announced = `/ip4/${hosts().hosts[i]?.ip}/tcp/26656/p2p/`;
      assert.ok(assembled.includes(announced), `add-validator prints host ${i}'s address:\n${assembled}`);
    }

    // 3. Host 0 sends its genesis.json; the others install it with host 0 as bootstrap.
    for (const i of [...others, NEW]) send(join(home(0), "genesis.json"), i, "genesis.json");
    const [install] = shBlocks("## 3. On every other host: install it");
    assert.ok(install !== undefined);
    const installed = await Promise.all(others.map((i) => run(i, onlyCommand(install))));
    const hashes = installed.map((out) => /block 0 (0x[0-9a-f]{64})/.exec(out)?.[1]);
    for (const out of installed) assert.match(out, /this home validates/);
    assert.equal(new Set(hashes).size, 1, `one block 0 on hosts ${others.join(",")}: ${hashes.join(" ")}`);
    genesisHash = hashes[0] ?? "";
    assert.match(genesisHash, /^0x[0-9a-f]{64}$/);
  });

  it("section 4: started on every validator host, /ready says ready, and blocks commit as one chain", async () => {
    const [block] = shBlocks("## 4. Start, and check");
    assert.ok(block !== undefined);
    const [startCommand, readyCommand] = commandsOf(block);
    assert.ok(startCommand !== undefined && readyCommand !== undefined);
    for (const i of validators) start(i, startCommand);
    const ready = await Promise.all(
      validators.map((i) =>
        until(i, readyCommand, (out) => JSON.parse(out).status === "ready", "/ready says ready"),
      ),
    );
    // The body the guide shows after the block: the same members, a ready node with peers.
    const sample = JSON.parse(/```json\n(.*)\n```/.exec(DOC.slice(DOC.indexOf(block)))?.[1] ?? "null");
    for (const out of ready) {
      const body = JSON.parse(out) as { reasons: string[]; peers: number };
      assert.deepEqual(Object.keys(body), Object.keys(sample), `/ready's body is the guide's: ${out}`);
      assert.ok(body.reasons.length === 0 && body.peers >= 1, out);
    }
    const zero = await blockAt(0, 0);
    assert.equal(zero?.hash, genesisHash, "host 0 built the block 0 the others installed");
    await sameBlockAt(validators, 3);
  });

  it("a full node joining: the fifth host inits from genesis.json, starts, and syncs to the validators' head", async () => {
    const [block] = shBlocks("## A full node joining an existing network");
    assert.ok(block !== undefined);
    const [initCommand, startCommand, readyCommand] = commandsOf(block);
    assert.ok(initCommand !== undefined && startCommand !== undefined && readyCommand !== undefined);
    const printed = await run(NEW, initCommand);
    assert.equal(
      /block 0 (0x[0-9a-f]{64})/.exec(printed)?.[1],
      genesisHash,
      "init prints the network's block 0",
    );
    // The address the guide's next section stakes from: what init printed.
    newAddress = /validator +(0x[0-9a-fA-F]{40})/.exec(printed)?.[1] ?? "";
    assert.match(newAddress, /^0x[0-9a-fA-F]{40}$/, `init prints the validator address:\n${printed}`);
    start(NEW, startCommand);
    await until(NEW, readyCommand, (out) => JSON.parse(out).status === "ready", "/ready says ready");
    // Caught up: at the height the validators were at after it became ready, the same block.
    await sameBlockAt([...validators, NEW], Math.max(...(await Promise.all(validators.map(head)))));
  });

  it("adding a validator later: funded by a transfer, it stakes, joins the set, and proposes; blocks go on", async () => {
    const [fund, stake] = shBlocks("## Adding a validator later");
    assert.ok(
      fund !== undefined && stake !== undefined,
      "a block for the funding host and one for the new host",
    );
    assert.match(await run(0, onlyCommand(fund)), /committed in block \d+ at index \d+, succeeded/);

    const [stakeCommand, isValidator] = commandsOf(stake);
    assert.ok(stakeCommand !== undefined && isValidator !== undefined);
    const result = (out: string) => (JSON.parse(out) as { result?: boolean }).result;
    assert.equal(result(await run(NEW, isValidator)), false, "not a validator before it stakes");
    const staked = await run(NEW, stakeCommand);
    const stakedAt = Number(/committed in block (\d+) at index \d+, succeeded/.exec(staked)?.[1]);
    assert.ok(Number.isInteger(stakedAt), `the stake commits:\n${staked}`);
    await until(NEW, isValidator, (out) => result(out) === true, "chain_isValidator true");

    // It takes part in consensus: among the signers of a later block's commit (`validators`: the
    // precommits that finalized it, any >2/3 of the stake, so not necessarily every block), and the
    // proposer of one. Every block on the way is the same on all five hosts.
    const lower = newAddress.toLowerCase();
    const LOOK = 30;
    let signed: number | undefined;
    let proposed: number | undefined;
    let height = stakedAt;
    while (signed === undefined || proposed === undefined) {
      height += 1;
      assert.ok(
        height <= stakedAt + LOOK,
        `signed (${signed}) and proposed (${proposed}) within ${LOOK} blocks`,
      );
      const block = await sameBlockAt([...validators, NEW], height);
      if (block.validators.some((v) => v.toLowerCase() === lower)) signed ??= height;
      if (block.proposer.toLowerCase() === lower) proposed ??= height;
    }
    // And the chain goes on with five validators.
    await sameBlockAt([...validators, NEW], height + 3);
  });
});
