import { type ChildProcess, type SpawnOptions, spawn } from "node:child_process";
import { randomBytes, randomInt } from "node:crypto";
import { DEFAULT_PREFIX, namespaceName, trackAlive, untrackAlive } from "./netnsCleanup.ts";
import { killAndDeleteNamespace, runIp } from "./netnsCommands.ts";

/**
 * Hosts for multi-host tests, made of Linux network namespaces (needs root; skip with
 * `canMakeNamespaces()`). Each host is a namespace with `lo` up and one veth, `veth0`, whose other
 * end (`h<i>`) sits in a bridge namespace of its own, on the bridge `br0`. The hosts share one /24
 * of 10/8 picked at random per run, with no gateway: nothing routes anywhere but between them.
 *
 * Nothing is added to the root namespace: each veth pair is made inside a host namespace with its
 * peer put straight into the bridge namespace. Interface names (`veth0`, `h0`, `br0`) need not be
 * unique per run (and stay far below Linux's 15 characters) because they exist only inside the
 * run's own namespaces; the namespace names are unique per run (`<prefix>-<pid>-<tag>-<role>`).
 *
 * `destroy()` removes every namespace the network made, with every process inside; so do the
 * exit and signal handlers, and `removeLeftoverNamespaces` after a crash (netnsCleanup.ts).
 */

export interface Host {
  index: number;
  /** The namespace's name, for `ip netns exec` / `ip -n`. */
  ns: string;
  /** The host's address on the shared /24. */
  ip: string;
}

export interface HostNetworkOptions {
  /** The first part of every namespace name (default `cn`); letters and digits. */
  prefix?: string;
  /** The run's part of the names (default: 4 random hex digits); letters and digits. */
  tag?: string;
}

export interface ExecOptions {
  cwd?: string;
  /** SIGKILL after this long (default 30 s). */
  timeoutMs?: number;
}

export interface ExecResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

const MAX_HOSTS = 200;
const NAME_PART = /^[a-z0-9]{1,12}$/;
const HOST_VETH = "veth0";
const BRIDGE = "br0";
/** How long `destroy` waits for a SIGKILLed process to be reaped before deleting its namespace anyway. */
const REAP_WAIT_MS = 5_000;

const bridgePort = (index: number): string => `h${index}`;

export class HostNetwork {
  readonly hosts: readonly Host[];
  readonly bridgeNs: string;
  /** The /24 the hosts share, e.g. `10.23.161.0/24`. */
  readonly subnet: string;
  /** Namespaces that exist because of this network, in the order they were made. */
  private readonly made: string[] = [];
  private readonly children = new Set<ChildProcess>();
  private destroyed: Promise<void> | undefined;

  private constructor(count: number, prefix: string, tag: string) {
    const base = `10.${randomInt(256)}.${randomInt(256)}`;
    this.subnet = `${base}.0/24`;
    this.bridgeNs = namespaceName(prefix, process.pid, tag, "br");
    this.hosts = Array.from({ length: count }, (_, index) => ({
      index,
      ns: namespaceName(prefix, process.pid, tag, `h${index}`),
      ip: `${base}.${index + 1}`,
    }));
  }

  /**
   * Makes `count` hosts. If any step fails, what was made is removed before the error is thrown.
   * Register `destroy()` as teardown on the next line.
   */
  static async create(count: number, options: HostNetworkOptions = {}): Promise<HostNetwork> {
    const prefix = options.prefix ?? DEFAULT_PREFIX;
    const tag = options.tag ?? randomBytes(2).toString("hex");
    if (!Number.isInteger(count) || count < 1 || count > MAX_HOSTS) {
      throw new Error(`host count must be 1..${MAX_HOSTS}, got ${count}`);
    }
    for (const part of [prefix, tag]) {
      if (!NAME_PART.test(part)) throw new Error(`name part ${JSON.stringify(part)} must match ${NAME_PART}`);
    }
    const network = new HostNetwork(count, prefix, tag);
    trackAlive(network);
    try {
      network.build();
    } catch (error) {
      await network.destroy();
      throw error;
    }
    return network;
  }

  private addNamespace(ns: string): void {
    // Recorded before the command: a namespace that `ip` made but we did not note would leak.
    this.made.push(ns);
    try {
      runIp(["netns", "add", ns]);
    } catch (error) {
      this.made.pop(); // not ours (it may exist already, made by someone else): never delete it
      throw error;
    }
  }

  private build(): void {
    this.addNamespace(this.bridgeNs);
    runIp(
      ["-n", this.bridgeNs, "-batch", "-"],
      `link add ${BRIDGE} type bridge forward_delay 0\nlink set ${BRIDGE} up\n`,
    );
    for (const host of this.hosts) {
      this.addNamespace(host.ns);
      runIp(
        ["-n", host.ns, "-batch", "-"],
        [
          "link set lo up",
          `link add ${HOST_VETH} type veth peer name ${bridgePort(host.index)} netns ${this.bridgeNs}`,
          `addr add ${host.ip}/24 dev ${HOST_VETH}`,
          `link set ${HOST_VETH} up`,
          "",
        ].join("\n"),
      );
      runIp(
        ["-n", this.bridgeNs, "-batch", "-"],
        `link set ${bridgePort(host.index)} master ${BRIDGE}\nlink set ${bridgePort(host.index)} up\n`,
      );
    }
  }

  private host(index: number): Host {
    const host = this.hosts[index];
    if (host === undefined) throw new Error(`no host ${index} (have ${this.hosts.length})`);
    if (this.destroyed !== undefined) throw new Error("the host network was destroyed");
    return host;
  }

  /**
   * Starts `command args` inside host `index` (`ip netns exec`, which execs: the child's pid is the
   * command's). The process is killed by `destroy()` if it is still running then.
   */
  spawn(index: number, command: string, args: string[], options: SpawnOptions = {}): ChildProcess {
    const child = spawn("ip", ["netns", "exec", this.host(index).ns, command, ...args], {
      stdio: ["ignore", "pipe", "pipe"],
      ...options,
    });
    this.children.add(child);
    child.once("exit", () => this.children.delete(child));
    child.once("error", () => this.children.delete(child));
    return child;
  }

  /** Runs `command args` inside host `index` to its end (SIGKILL after `timeoutMs`); never throws on a non-zero exit. */
  exec(index: number, command: string, args: string[], options: ExecOptions = {}): Promise<ExecResult> {
    const { timeoutMs = 30_000, ...spawnOptions } = options;
    const child = this.spawn(index, command, args, spawnOptions);
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    return new Promise((resolve, reject) => {
      child.once("error", reject);
      child.once("close", (code) => {
        clearTimeout(timer);
        resolve({ code, stdout, stderr });
      });
    });
  }

  /** Cuts host `index` off: its port on the bridge goes down (the host's own veth loses carrier). */
  cut(index: number): void {
    runIp(["-n", this.bridgeNs, "link", "set", bridgePort(this.host(index).index), "down"]);
  }

  /** Undoes `cut`. */
  restore(index: number): void {
    runIp(["-n", this.bridgeNs, "link", "set", bridgePort(this.host(index).index), "up"]);
  }

  /** Kills the processes started in the hosts, then deletes every namespace made. Idempotent. */
  destroy(): Promise<void> {
    this.destroyed ??= (async () => {
      const children = [...this.children];
      for (const child of children) child.kill("SIGKILL");
      await Promise.all(children.map((child) => exitOf(child, REAP_WAIT_MS)));
      this.cleanupSync();
    })();
    return this.destroyed;
  }

  /** What exit and signal handlers run: SIGKILL, delete, no waiting. */
  cleanupSync(): void {
    for (const child of this.children) child.kill("SIGKILL");
    const errors: string[] = [];
    while (this.made.length > 0) {
      const ns = this.made.pop() as string;
      try {
        killAndDeleteNamespace(ns);
      } catch (error) {
        errors.push(String(error));
      }
    }
    untrackAlive(this);
    if (errors.length > 0) throw new Error(`could not remove every namespace: ${errors.join("; ")}`);
  }
}

function exitOf(child: ChildProcess, timeoutMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, timeoutMs);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
