import assert from "node:assert/strict";
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { parse as parseToml } from "smol-toml";
import { parse as parseYaml } from "yaml";
import { freePort, rpc } from "../helpers/process.ts";
import { waitFor } from "../helpers/testNode.ts";

/**
 * The container image, the compose network and the systemd unit, where no container engine runs
 * (issue 19, item 5). The Dockerfile's runtime stage is read, not restated: its ENTRYPOINT and CMD
 * run on this host with its ENV, paths under its WORKDIR mapped to this checkout and `node` being
 * the pinned Node 24 (what the image's `node:24-slim` has). Changed from the image, and only these:
 * the home (the VOLUME) is a temporary directory, the ports are free ones, and both listeners bind
 * 127.0.0.1 instead of the image's 0.0.0.0, since a test must not open ports to the network.
 * What this cannot show: that the image builds (npm ci in node:24-slim), file ownership inside it,
 * and Docker's own handling of the health check and stop signal.
 */

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const CLI = join(ROOT, "bin", "chain-node.js");
/** `docker stop` waits this long before SIGKILL unless told otherwise (Docker's documented default). */
const DOCKER_DEFAULT_STOP_TIMEOUT_MS = 10_000;

// --- the Dockerfile -------------------------------------------------------------------------------

interface Instruction {
  name: string;
  args: string;
}

/** Instructions in order: continuation lines joined, comments and blank lines dropped (as Docker does). */
function dockerInstructions(text: string): Instruction[] {
  const out: Instruction[] = [];
  let pending = "";
  for (const line of text.split("\n")) {
    if (/^\s*#/.test(line) || (pending === "" && line.trim() === "")) continue;
    if (line.endsWith("\\")) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    const whole = (pending + line).trim();
    pending = "";
    const match = /^(\S+)\s+([\s\S]*)$/.exec(whole);
    if (match?.[1] !== undefined && match[2] !== undefined)
      out.push({ name: match[1].toUpperCase(), args: match[2].trim() });
  }
  return out;
}

/** Words of an instruction's arguments, double quotes grouping. */
const words = (args: string): string[] =>
  [...args.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? "");

/** An exec-form (JSON array) argument list; the shell form would put `sh -c` between Docker and the node. */
function execForm(what: string, args: string): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    throw new Error(`${what} is not in exec form (a JSON array): ${args}`);
  }
  assert.ok(Array.isArray(parsed) && parsed.every((w) => typeof w === "string"), `${what}: ${args}`);
  return parsed as string[];
}

interface RuntimeStage {
  from: string;
  workdir: string;
  env: Record<string, string>;
  user: string;
  volumes: string[];
  exposed: number[];
  stopSignal: string;
  entrypoint: string[];
  cmd: string[];
  healthcheck: { options: Record<string, string>; command: string[] };
  copied: string[];
}

/** The last stage of the Dockerfile: what `docker run` runs. */
function runtimeStage(): RuntimeStage {
  const all = dockerInstructions(readFileSync(join(ROOT, "Dockerfile"), "utf8"));
  const start = all.findLastIndex((i) => i.name === "FROM");
  assert.ok(start >= 0, "the Dockerfile has a FROM");
  const stage = all.slice(start);
  const last = (name: string): string | undefined => stage.findLast((i) => i.name === name)?.args;
  const env: Record<string, string> = {};
  for (const { args } of stage.filter((i) => i.name === "ENV")) {
    for (const word of words(args)) {
      const eq = word.indexOf("=");
      assert.ok(eq > 0, `ENV in KEY=VALUE form: ${args}`);
      env[word.slice(0, eq)] = word.slice(eq + 1);
    }
  }
  const health = last("HEALTHCHECK") ?? "";
  const cmdAt = health.indexOf("CMD ");
  assert.ok(cmdAt >= 0, `HEALTHCHECK runs a command: ${health}`);
  const options = Object.fromEntries(
    words(health.slice(0, cmdAt)).map((w) => {
      const [key = "", value = ""] = w.replace(/^--/, "").split("=");
      return [key, value];
    }),
  );
  return {
    from: words(stage[0]?.args ?? "")[0] ?? "",
    workdir: last("WORKDIR") ?? "/",
    env,
    user: last("USER") ?? "root",
    volumes: stage.filter((i) => i.name === "VOLUME").flatMap((i) => execForm("VOLUME", i.args)),
    exposed: stage
      .filter((i) => i.name === "EXPOSE")
      .flatMap((i) => words(i.args).map((w) => Number.parseInt(w, 10))),
    stopSignal: last("STOPSIGNAL") ?? "SIGTERM",
    entrypoint: execForm("ENTRYPOINT", last("ENTRYPOINT") ?? "[]"),
    cmd: execForm("CMD", last("CMD") ?? "[]"),
    healthcheck: { options, command: execForm("HEALTHCHECK CMD", health.slice(cmdAt + 4)) },
    copied: stage
      .filter((i) => i.name === "COPY")
      .flatMap((i) => words(i.args).filter((w) => !w.startsWith("--"))),
  };
}

/** A Docker duration ("10s", "1m30s", "500ms") in ms. */
function durationMs(text: string): number {
  let total = 0;
  for (const [, n, unit] of text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)) {
    total += Number(n) * { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 }[unit as "ms" | "s" | "m" | "h"];
  }
  assert.ok(total > 0, `a duration: ${text}`);
  return total;
}

const image = runtimeStage();
/** The variable the entrypoint takes the home from: the one whose value is the image's VOLUME. */
const homeVariable = Object.keys(image.env).find((k) => image.volumes.includes(image.env[k] ?? ""));
const listenHosts = Object.keys(image.env).filter((k) => /^CHAIN_NODE_(RPC|P2P)_HOST$/.test(k));
const rpcPortVariable = "CHAIN_NODE_RPC_PORT";
const p2pPortVariable = "CHAIN_NODE_P2P_PORT";

/** A path of the image mapped to this checkout (the image copies the checkout to its WORKDIR). */
const onHost = (path: string): string =>
  path.startsWith(`${image.workdir}/`) ? join(ROOT, path.slice(image.workdir.length + 1)) : path;

/** Whether the image COPYs `path` (an absolute path of the image) from the checkout. */
function isCopied(path: string): boolean {
  if (!path.startsWith(`${image.workdir}/`)) return false;
  const relative = path.slice(image.workdir.length + 1);
  return image.copied.some((c) => c === relative || relative.startsWith(`${c.replace(/\/$/, "")}/`));
}

/** A command of the image as this host runs it: `node` is the pinned Node 24, image paths are the checkout's. */
function hostCommand(argv: readonly string[]): [string, string[]] {
  const [file = "", ...args] = argv.map(onHost);
  return [file === "node" ? process.execPath : file, args];
}

/** The image's environment with the test's changes; nothing else from this process leaks in. */
function containerEnv(overrides: Record<string, string>): NodeJS.ProcessEnv {
  // The entrypoint script finds `node` on PATH, as in the image.
  const path = `${dirname(process.execPath)}:${process.env.PATH ?? "/usr/bin:/bin"}`;
  return { PATH: path, ...image.env, ...overrides };
}

interface Container {
  child: ChildProcess;
  env: NodeJS.ProcessEnv;
  rpcUrl: string;
  output(): string;
  exited: Promise<number | null>;
  /** The stop signal; resolves with the exit code and how long the stop took. */
  stop(): Promise<{ code: number | null; ms: number }>;
}

/** `docker run`: the ENTRYPOINT with the CMD, in the image's environment plus `overrides`. */
function runImage(overrides: Record<string, string>): Container {
  const env = containerEnv(overrides);
  const [file, args] = hostCommand([...image.entrypoint, ...image.cmd]);
  const child = spawn(file, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return {
    child,
    env,
    rpcUrl: `http://127.0.0.1:${env[rpcPortVariable]}`,
    output: () => output,
    exited,
    async stop() {
      const started = Date.now();
      if (child.exitCode === null && child.signalCode === null)
        child.kill(image.stopSignal as NodeJS.Signals);
      // Docker's SIGKILL after the grace, so that a hung stop fails the test rather than hanging it.
      const timer = setTimeout(() => child.kill("SIGKILL"), DOCKER_DEFAULT_STOP_TIMEOUT_MS);
      const code = await exited;
      clearTimeout(timer);
      return { code, ms: Date.now() - started };
    },
  };
}

/** The image's HEALTHCHECK command, run in the container's environment: its exit code and output. */
function healthcheck(container: Container): Promise<{ code: number; output: string }> {
  const [file, args] = hostCommand(
    image.healthcheck.command.slice(image.healthcheck.command[0] === "CMD" ? 1 : 0),
  );
  const timeoutMs = durationMs(image.healthcheck.options.timeout ?? "30s");
  return new Promise((resolve) => {
    execFile(file, args, { cwd: ROOT, env: container.env, timeout: timeoutMs }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1;
      resolve({ code, output: stdout + stderr });
    });
  });
}

/** Waits until the HEALTHCHECK passes, within the image's start period. */
async function waitHealthy(container: Container, name: string): Promise<void> {
  let last = "";
  const startPeriodMs = durationMs(image.healthcheck.options["start-period"] ?? "0s");
  await waitFor(
    `${name}'s HEALTHCHECK to pass within the start period`,
    async () => {
      if (container.child.exitCode !== null)
        throw new Error(`${name} exited with ${container.child.exitCode}:\n${container.output()}`);
      const result = await healthcheck(container);
      last = result.output.trim();
      if (result.code === 0) return true;
      await new Promise((resolve) => setTimeout(resolve, 250));
      return undefined;
    },
    startPeriodMs,
  ).catch((error: unknown) => {
    throw new Error(`${(error as Error).message}; last health check said: ${last}\n${container.output()}`);
  });
}

const portOf = async (): Promise<Record<string, string>> => ({
  [rpcPortVariable]: String(await freePort()),
  [p2pPortVariable]: String(await freePort()),
});

const loopbackHosts = (): Record<string, string> =>
  Object.fromEntries(listenHosts.map((k) => [k, "127.0.0.1"]));

function runCli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { cwd: ROOT }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1;
      resolve({ code, stdout, stderr });
    });
  });
}

describe("the container image (Dockerfile's runtime stage), run on this host", () => {
  // Made in `before`, so that a run that filters this suite's tests out leaves no directory behind.
  let scratch = "";
  before(() => {
    scratch = mkdtempSync(join(tmpdir(), "chain-node-container-"));
  });
  const running: Container[] = [];
  after(async () => {
    for (const container of running) await container.stop();
    if (scratch !== "") rmSync(scratch, { recursive: true, force: true });
  });

  it("runs Node 24 slim as a non-root user, with the home a volume, listeners and ports set by env", () => {
    assert.match(image.from, /^node:24-slim$/, "base image");
    assert.notEqual(image.user, "root");
    assert.notEqual(image.user, "0");
    assert.ok(
      homeVariable !== undefined,
      `an ENV names the VOLUME (${image.volumes.join(", ")}) as the home`,
    );
    for (const key of ["CHAIN_NODE_RPC_HOST", "CHAIN_NODE_P2P_HOST"]) {
      assert.equal(image.env[key], "0.0.0.0", `${key}: reachable from outside the container`);
    }
    for (const key of [rpcPortVariable, p2pPortVariable]) {
      assert.ok(image.exposed.includes(Number(image.env[key])), `${key}=${image.env[key]} is EXPOSEd`);
    }
    assert.equal(image.stopSignal, "SIGTERM");
    // Every script the image runs is copied into it and exists here.
    for (const argv of [image.entrypoint, image.healthcheck.command]) {
      for (const path of argv.filter((w) => w.startsWith(`${image.workdir}/`))) {
        assert.ok(existsSync(onHost(path)), `${path} exists in the checkout`);
        assert.ok(isCopied(path), `${path} is copied into the image`);
      }
    }
  });

  it("refuses a home without genesis.json in one line, and inits one only when asked", async (t) => {
    const empty = join(scratch, "empty");
    const refused = runImage({ [homeVariable ?? ""]: empty, ...(await portOf()), ...loopbackHosts() });
    running.push(refused);
    assert.notEqual(await refused.exited, 0);
    assert.match(refused.output(), /holds no genesis\.json/);
    assert.equal(refused.output().trim().split("\n").length, 1, refused.output());

    // CHAIN_NODE_INIT=1: a one-validator chain of its own. It serves, but it is never ready: a
    // network node without peers is not (src/node/health.ts), and the health check says so.
    const alone = runImage({
      [homeVariable ?? ""]: join(scratch, "alone"),
      CHAIN_NODE_INIT: "1",
      ...(await portOf()),
      ...loopbackHosts(),
    });
    running.push(alone);
    await waitFor(
      "the one-validator node to commit a block",
      async () =>
        (await rpc<number>(alone.rpcUrl, "chain_getRecentBlockNumber").catch(() => 0)) >= 1
          ? true
          : undefined,
      30_000,
    );
    const health = await healthcheck(alone);
    assert.equal(health.code, 1, health.output);
    assert.match(health.output, /no_peers/);
    const stopped = await alone.stop();
    assert.equal(stopped.code, 0, alone.output().slice(-2_000));
    t.diagnostic(`one-validator node stopped in ${stopped.ms} ms`);
  });

  it("two validators become healthy by the image's HEALTHCHECK, stop cleanly on SIGTERM and restart on their chain", async (t) => {
    // Two homes of one genesis (testnet writes them; inside Docker, compose's setup service would).
    const out = join(scratch, "net");
    const made = await runCli(["testnet", "--validators", "2", "--out", out, "--log-level", "warn"]);
    assert.equal(made.code, 0, made.stderr);
    const homes = [join(out, "node0"), join(out, "node1")];
    // Each node's peer id, from the bootstrap the other's config.toml holds.
    const peerIds = homes.map((_, i) => {
      const other = parseToml(readFileSync(join(homes[1 - i] ?? "", "config.toml"), "utf8")) as {
        p2p: { bootstrap: string[] };
      };
      const id = /\/p2p\/(\w+)$/.exec(other.p2p.bootstrap[0] ?? "")?.[1];
      assert.ok(id, `node${1 - i}'s config.toml names node${i}'s peer id`);
      return id;
    });
    const ports = [await portOf(), await portOf()];
    const envOf = (i: number): Record<string, string> => ({
      [homeVariable ?? ""]: homes[i] ?? "",
      ...(ports[i] ?? {}),
      ...loopbackHosts(),
      // The other node, at its port of this run: in Docker it would be a host name (docker-compose.yml).
      CHAIN_NODE_P2P_BOOTSTRAP: `/ip4/127.0.0.1/tcp/${ports[1 - i]?.[p2pPortVariable]}/p2p/${peerIds[1 - i]}`,
    });
    const nodes = [runImage(envOf(0)), runImage(envOf(1))];
    running.push(...nodes);
    for (const [i, node] of nodes.entries()) await waitHealthy(node, `node${i}`);

    const [first, second] = nodes as [Container, Container];
    // Ready means a peer and no sync, not blocks yet: wait for some, so that the restart has a chain to keep.
    await waitFor(
      "node0 at height 2",
      async () => ((await rpc<number>(first.rpcUrl, "chain_getRecentBlockNumber")) >= 2 ? true : undefined),
      30_000,
    );
    const block1 = await rpc<{ hash: string }>(first.rpcUrl, "chain_getBlockByNumber", { number: 1 });
    const stopped = await first.stop();
    assert.equal(stopped.code, 0, `SIGTERM exits with 0\n${first.output().slice(-2_000)}`);
    assert.ok(
      stopped.ms < DOCKER_DEFAULT_STOP_TIMEOUT_MS,
      `a clean stop (${stopped.ms} ms) fits in docker stop's default grace`,
    );
    t.diagnostic(`validator stopped cleanly in ${stopped.ms} ms`);
    const headAtStop = await rpc<number>(second.rpcUrl, "chain_getRecentBlockNumber");

    const again = runImage(envOf(0));
    running.push(again);
    await waitHealthy(again, "node0 after its restart");
    const block1Again = await rpc<{ hash: string }>(again.rpcUrl, "chain_getBlockByNumber", { number: 1 });
    assert.equal(block1Again.hash, block1.hash, "the restarted node kept its chain");
    await waitFor(
      `the restarted node past height ${headAtStop}`,
      async () =>
        (await rpc<number>(again.rpcUrl, "chain_getRecentBlockNumber")) > headAtStop ? true : undefined,
      30_000,
    );
    for (const node of [again, second])
      assert.equal((await node.stop()).code, 0, node.output().slice(-2_000));
  });
});

// --- the systemd unit -------------------------------------------------------------------------------

/** `[Section]` → key → values (a key may repeat). */
function parseUnit(text: string): Map<string, Map<string, string[]>> {
  const sections = new Map<string, Map<string, string[]>>();
  let current = new Map<string, string[]>();
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const section = /^\[(.+)\]$/.exec(line)?.[1];
    if (section !== undefined) {
      current = new Map();
      sections.set(section, current);
      continue;
    }
    const eq = line.indexOf("=");
    const key = line.slice(0, eq);
    current.set(key, [...(current.get(key) ?? []), line.slice(eq + 1)]);
  }
  return sections;
}

describe("the systemd unit (deploy/chain-node.service)", () => {
  const unitPath = join(ROOT, "deploy", "chain-node.service");
  const service = parseUnit(readFileSync(unitPath, "utf8")).get("Service") ?? new Map<string, string[]>();
  const value = (key: string): string => service.get(key)?.at(-1) ?? "";

  it("restarts on failure, waits longer than a clean stop, runs as its own user on /var/lib/chain-node", () => {
    assert.equal(value("Restart"), "on-failure");
    assert.ok(Number(value("LimitNOFILE")) >= 4096, `LimitNOFILE=${value("LimitNOFILE")}`);
    assert.ok(
      durationMs(
        /^\d+$/.test(value("TimeoutStopSec")) ? `${value("TimeoutStopSec")}s` : value("TimeoutStopSec"),
      ) > DOCKER_DEFAULT_STOP_TIMEOUT_MS,
      `TimeoutStopSec=${value("TimeoutStopSec")} leaves more room than the clean stop measured above`,
    );
    assert.equal(value("KillSignal") || "SIGTERM", "SIGTERM");
    assert.ok(!["", "root", "0"].includes(value("User")), `User=${value("User")}`);
    assert.match(value("ExecStart"), /\bstart --home \/var\/lib\/chain-node$/);
    assert.match(
      value("EnvironmentFile"),
      /^-?\//,
      "settings come from an EnvironmentFile of CHAIN_NODE_* lines",
    );
    // Hardening that keeps LMDB's memory map writable, and Node's JIT working.
    assert.equal(value("ProtectSystem"), "strict");
    assert.ok(
      value("ReadWritePaths").split(/\s+/).includes("/var/lib/chain-node"),
      "the home is writable under ProtectSystem=strict",
    );
    assert.equal(value("NoNewPrivileges"), "yes");
    assert.equal(value("PrivateTmp"), "yes");
    assert.equal(service.has("MemoryDenyWriteExecute"), false, "V8's JIT needs writable executable memory");
  });

  it("passes systemd-analyze verify", async (t) => {
    const result = await new Promise<{ missing: boolean; output: string }>((resolve) => {
      execFile("systemd-analyze", ["verify", unitPath], (error, stdout, stderr) => {
        const missing = (error as NodeJS.ErrnoException | null)?.code === "ENOENT";
        resolve({ missing, output: stdout + stderr });
      });
    });
    if (result.missing) {
      t.skip("systemd-analyze is not installed here");
      return;
    }
    // A host without Node at /usr/bin/node (or without the user) is not the unit's fault.
    const complaints = result.output
      .split("\n")
      .filter((line) => line.trim() !== "" && !/\/usr\/bin\/node|is not executable|No such file/.test(line));
    assert.deepEqual(complaints, []);
  });
});

// --- the compose network ------------------------------------------------------------------------

interface ComposeService {
  image?: string;
  entrypoint?: string[];
  depends_on?: Record<string, { condition: string }>;
  volumes?: string[];
  ports?: string[];
  restart?: string;
  init?: boolean;
  stop_grace_period?: string;
  healthcheck?: { test: string[] };
}

/**
 * Whether commander's help lists `name` as a command: a line of the Commands section that starts
 * with two spaces and the name (wrapped descriptions start further in, and may begin with a word
 * such as "genesis.json").
 */
function listsCommand(help: string, name: string): boolean {
  const section = help.split("Commands:")[1] ?? "";
  return section.split("\n").some((line) => line.startsWith(`  ${name} `) || line === `  ${name}`);
}

describe("docker-compose.yml", () => {
  const compose = parseYaml(readFileSync(join(ROOT, "docker-compose.yml"), "utf8"), { merge: true }) as {
    services: Record<string, ComposeService>;
    volumes: Record<string, unknown>;
  };
  const services = Object.entries(compose.services);
  const setup = services.filter(([, s]) => s.depends_on === undefined);
  const validators = services.filter(([, s]) => s.depends_on !== undefined);
  const setupScript = setup[0]?.[1].entrypoint?.[0] ?? "";

  it("four validators, each after the one-shot setup, with its own volume, health check and grace", () => {
    assert.equal(setup.length, 1, "one setup service");
    assert.equal(validators.length, 4);
    const ownVolumes = new Set<string>();
    for (const [name, service] of validators) {
      for (const [dependency, { condition }] of Object.entries(service.depends_on ?? {})) {
        assert.equal(dependency, setup[0]?.[0], `${name} waits for setup`);
        assert.equal(condition, "service_completed_successfully", name);
      }
      const home = service.volumes?.find((v) => v.endsWith(`:${image.env[homeVariable ?? ""]}`));
      assert.ok(home, `${name} mounts a volume at the image's home`);
      const volume = home.split(":")[0] ?? "";
      assert.ok(volume in compose.volumes, `${name}: ${volume} is a named volume`);
      assert.ok(!ownVolumes.has(volume), `${name}: ${volume} is its own`);
      ownVolumes.add(volume);
      assert.ok(
        service.ports?.some((p) => p.endsWith(`:${image.env[rpcPortVariable]}`)),
        `${name} publishes RPC`,
      );
      assert.ok(
        ["unless-stopped", "always", "on-failure"].includes(service.restart ?? "no"),
        `${name} restarts`,
      );
      assert.ok(
        durationMs(service.stop_grace_period ?? "10s") > DOCKER_DEFAULT_STOP_TIMEOUT_MS,
        `${name}: stop_grace_period beyond a clean stop`,
      );
      assert.deepEqual(
        service.healthcheck?.test.slice(1),
        image.healthcheck.command,
        `${name}: the image's check`,
      );
    }
    // The setup service writes every validator's volume.
    assert.deepEqual(
      new Set(setup[0]?.[1].volumes?.map((v) => v.split(":")[0])),
      ownVolumes,
      "setup writes every validator's home",
    );
    assert.ok(isCopied(setupScript) && existsSync(onHost(setupScript)), `${setupScript} is in the image`);
  });

  it("runs only chain-node commands and flags that exist", async (t) => {
    const script = readFileSync(onHost(setupScript), "utf8").replace(/\\\n/g, " ");
    // Each `chain_node <command…> [--flag …]` line of the script: the command words, then its flags.
    const calls = [...script.matchAll(/^\s*chain_node\s+(.+)$/gm)].map((m) => {
      const argv = words(m[1] ?? "");
      const command = argv.slice(
        0,
        argv.findIndex((w) => !/^[a-z][a-z-]*$/.test(w)),
      );
      return { command, flags: argv.filter((w) => w.startsWith("--")) };
    });
    assert.ok(calls.length >= 3, `the setup script runs chain-node (${calls.length} calls found)`);
    const helps = new Map<string, Promise<string>>();
    const helpOf = (command: string[]): Promise<string> => {
      const key = command.join(" ");
      if (!helps.has(key))
        helps.set(
          key,
          runCli([...command, "--help"]).then((r) => r.stdout),
        );
      return helps.get(key) as Promise<string>;
    };
    assert.ok(listsCommand(await helpOf([]), "start"), "the help parser finds a command that exists");
    const missing: string[] = [];
    for (const { command, flags } of calls) {
      // Each word must be listed by its parent's help before its own help is asked for (commander
      // answers an unknown command's --help with its parent's).
      let known = true;
      for (let depth = 0; depth < command.length && known; depth++) {
        const help = await helpOf(command.slice(0, depth));
        if (!listsCommand(help, command[depth] ?? "")) known = false;
      }
      if (!known) {
        missing.push(`chain-node ${command.join(" ")}`);
        continue;
      }
      const help = await helpOf(command);
      for (const flag of flags)
        if (!new RegExp(`${flag}\\b`).test(help)) missing.push(`chain-node ${command.join(" ")} ${flag}`);
    }
    // The genesis flow (issue 19, item 2) is being written on another branch: until `genesis` is a
    // command here, what it lacks is expected and skipped; once it is, anything missing fails.
    const pending = !listsCommand(await helpOf([]), "genesis");
    if (pending && missing.length > 0) {
      t.skip(`not on this branch yet (issue 19 item 2; checked after merge): ${missing.join(", ")}`);
      return;
    }
    assert.deepEqual(missing, [], "every chain-node command and flag the setup script runs exists");
  });
});
