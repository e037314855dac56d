import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { after, before, describe, it } from "node:test";
import { delayProxyCommand, startDelayProxyProcess } from "../helpers/delayProxyProcess.ts";
import { HostNetwork } from "../helpers/netns.ts";
import { outputLine } from "../helpers/process.ts";
import { canMakeNamespaces, namespaceName, removeLeftoverNamespaces } from "../helpers/netnsCleanup.ts";
import { listNamespaces, runIp } from "../helpers/netnsCommands.ts";
import { waitFor } from "../helpers/testNode.ts";

/**
 * The multi-host test bed itself (test/helpers/netns.ts, docs/testing-hosts.md): three hosts in
 * network namespaces reach each other over TCP and nothing else, the root namespace gains nothing,
 * a cut link cuts and a restored one carries again, the delay proxy run inside a host adds its
 * delay between two others, and every namespace goes away: on destroy, when creation fails half
 * way, and when the process that made them is signalled, throws, or is SIGKILLed (then a later
 * run removes them). Needs root and `ip`; skipped otherwise, with the reason.
 */

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const PROBE = fileURLToPath(new URL("../helpers/tcpProbeMain.ts", import.meta.url));
const HOLDER = fileURLToPath(new URL("../helpers/netnsHolderMain.ts", import.meta.url));
const ECHO_PORT = 7100;
const PROXY_PORT = 7200;
const support = canMakeNamespaces();
const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

/** What the root namespace has that a test could change: links (index and name), routes, addresses. */
function rootNetworkState(): string[] {
  const links = runIp(["-o", "link"])
    .split("\n")
    .map((line) => /^(\d+: [^:]+):/.exec(line)?.[1] ?? line);
  const routes = runIp(["route"]).split("\n");
  const routes6 = runIp(["-6", "route"]).split("\n");
  const addresses = runIp(["-o", "addr"])
    .split("\n")
    .map((line) => line.replace(/\\.*$/, ""));
  return [...links, ...routes, ...routes6, ...addresses].filter((line) => line.trim() !== "");
}

describe("hosts in network namespaces", {
  skip: support.ok ? false : support.reason,
  timeout: 180_000,
}, () => {
  let net: HostNetwork;
  let rootBefore: string[];

  async function ping(from: number, to: string, port: number, count = 1, timeoutMs = 2000) {
    const result = await net.exec(
      from,
      process.execPath,
      ["--import", "tsx", PROBE, "ping", to, String(port), String(count), String(timeoutMs)],
      { cwd: ROOT },
    );
    const line = result.stdout.trim().split("\n").pop() ?? "";
    try {
      return JSON.parse(line) as { rtts?: number[]; error?: string };
    } catch {
      throw new Error(
        `ping from host ${from} to ${to}:${port} printed no result: ${result.stdout}${result.stderr}`,
      );
    }
  }

  before(async () => {
    removeLeftoverNamespaces();
    rootBefore = rootNetworkState();
    net = await HostNetwork.create(3);
    for (const host of net.hosts) {
      const echo = net.spawn(
        host.index,
        process.execPath,
        ["--import", "tsx", PROBE, "serve", host.ip, String(ECHO_PORT)],
        { cwd: ROOT },
      );
      await outputLine(echo, /listening/, `echo server on host ${host.index}`);
    }
  });
  after(() => net?.destroy());

  it("every host reaches every other over TCP, and the root namespace gained nothing", async () => {
    for (const from of net.hosts) {
      for (const to of net.hosts.filter((h) => h !== from)) {
        const result = await ping(from.index, to.ip, ECHO_PORT);
        assert.equal(result.rtts?.length, 1, `host ${from.index} → host ${to.index}: ${result.error}`);
      }
    }
    assert.deepEqual(rootNetworkState(), rootBefore, "root namespace links, routes and addresses unchanged");
  });

  it("a host has its /24 and no way off it", async () => {
    const routes = await net.exec(0, "ip", ["route"]);
    assert.deepEqual(
      routes.stdout
        .trim()
        .split("\n")
        .map((line) => line.split(" ")[0]),
      [net.subnet],
      "one route: the hosts' /24",
    );
    const outside = await ping(0, "192.0.2.1", 53, 1, 1000);
    assert.match(outside.error ?? "", /ENETUNREACH/, "nothing beyond the /24 is reachable");
  });

  it("a cut host cannot be reached, and a restored one can", async () => {
    net.cut(2);
    const during = await ping(0, net.hosts[2]!.ip, ECHO_PORT, 1, 1500);
    assert.match(during.error ?? "", /within 1500 ms|EHOSTUNREACH/, "host 2 unreachable while cut");
    const fromCut = await ping(2, net.hosts[1]!.ip, ECHO_PORT, 1, 1500);
    assert.ok(fromCut.error !== undefined, "host 2 reaches no one while cut");
    assert.equal((await ping(0, net.hosts[1]!.ip, ECHO_PORT)).rtts?.length, 1, "hosts 0 and 1 still talk");
    net.restore(2);
    await waitFor(
      "host 2 reachable again",
      async () => ((await ping(0, net.hosts[2]!.ip, ECHO_PORT, 1, 1000)).rtts ? true : undefined),
      15_000,
    );
  });

  it("the delay proxy inside host 1 adds twice its one-way delay to a round trip between hosts 0 and 2", async (t) => {
    const DELAY_MS = 50;
    const { command, args, cwd } = delayProxyCommand({
      listenHost: net.hosts[1]!.ip,
      listenPort: PROXY_PORT,
      targetHost: net.hosts[2]!.ip,
      targetPort: ECHO_PORT,
      delayMs: DELAY_MS,
    });
    const proxy = await startDelayProxyProcess(net.spawn(1, command, args, { cwd }));
    t.after(() => proxy.stop());
    const direct = await ping(0, net.hosts[2]!.ip, ECHO_PORT, 20);
    const delayed = await ping(0, net.hosts[1]!.ip, PROXY_PORT, 20);
    assert.ok(direct.rtts && delayed.rtts, `pings: ${direct.error ?? ""} ${delayed.error ?? ""}`);
    // The first round trip also waits for the proxy's own connection to host 2: left out.
    const added = median(delayed.rtts.slice(1)) - median(direct.rtts);
    t.diagnostic(
      `rtt direct ${median(direct.rtts).toFixed(2)} ms, through the proxy ${median(delayed.rtts.slice(1)).toFixed(2)} ms: +${added.toFixed(1)} ms for 2 × ${DELAY_MS} ms`,
    );
    assert.ok(
      added >= 2 * DELAY_MS - 1 && added <= 2 * DELAY_MS + 20,
      `added ${added} ms ≈ ${2 * DELAY_MS} ms`,
    );
  });

  it("destroy kills what runs inside, removes every namespace it made, and may be called twice", async () => {
    const ours = [net.bridgeNs, ...net.hosts.map((h) => h.ns)];
    assert.deepEqual(
      ours.filter((ns) => !listNamespaces().includes(ns)),
      [],
      "all there before",
    );
    await net.destroy();
    await net.destroy();
    assert.deepEqual(
      ours.filter((ns) => listNamespaces().includes(ns)),
      [],
      "none left after",
    );
    assert.deepEqual(rootNetworkState(), rootBefore, "root namespace as it was");
  });

  it("a failure half way through creation removes what was made, and only that", async (t) => {
    const tag = "clash";
    const taken = namespaceName("cn", process.pid, tag, "h2");
    runIp(["netns", "add", taken]);
    t.after(() => runIp(["netns", "del", taken]));
    await assert.rejects(HostNetwork.create(3, { tag }), /File exists/);
    const left = listNamespaces().filter((ns) => ns.startsWith(`cn-${process.pid}-${tag}-`));
    assert.deepEqual(left, [taken], "the bridge and hosts 0 and 1 removed; the one it did not make kept");
  });

  for (const [how, signal] of [
    ["SIGTERM", "SIGTERM"],
    ["SIGINT", "SIGINT"],
    ["an uncaught exception", undefined],
  ] as const) {
    it(`a process that made hosts removes them when it dies of ${how}`, async () => {
      const holder = spawn(
        process.execPath,
        ["--import", "tsx", HOLDER, "cn", signal === undefined ? "throw" : "wait"],
        {
          cwd: ROOT,
          stdio: ["ignore", "pipe", "pipe"],
        },
      );
      const exited = new Promise((resolve) => holder.once("exit", resolve));
      const made = JSON.parse((await outputLine(holder, /\{.*\}\n/, "holder"))[0]) as {
        namespaces: string[];
        sleeper: number;
      };
      assert.equal(made.namespaces.filter((ns) => listNamespaces().includes(ns)).length, 3);
      if (signal !== undefined) holder.kill(signal);
      await exited;
      assert.deepEqual(
        made.namespaces.filter((ns) => listNamespaces().includes(ns)),
        [],
        "no namespace left",
      );
      await waitFor("the process inside gone", async () => (isRunning(made.sleeper) ? undefined : true));
    });
  }

  it("after a SIGKILL, removeLeftoverNamespaces removes the dead run's namespaces and what runs inside", async () => {
    const holder = spawn(process.execPath, ["--import", "tsx", HOLDER, "cn", "wait"], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const exited = new Promise((resolve) => holder.once("exit", resolve));
    const made = JSON.parse((await outputLine(holder, /\{.*\}\n/, "holder"))[0]) as {
      namespaces: string[];
      sleeper: number;
    };
    holder.kill("SIGKILL");
    await exited;
    assert.equal(
      made.namespaces.filter((ns) => listNamespaces().includes(ns)).length,
      3,
      "a SIGKILL leaves them",
    );
    assert.deepEqual(removeLeftoverNamespaces().sort(), [...made.namespaces].sort());
    assert.deepEqual(
      made.namespaces.filter((ns) => listNamespaces().includes(ns)),
      [],
    );
    await waitFor("the process inside gone", async () => (isRunning(made.sleeper) ? undefined : true));
  });
});

/** Whether `pid` runs (a zombie waiting to be reaped does not count). */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}
