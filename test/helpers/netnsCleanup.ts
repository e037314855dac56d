import { spawnSync } from "node:child_process";
import { constants } from "node:os";
import { killAndDeleteNamespace, listNamespaces, runIp } from "./netnsCommands.ts";

/**
 * Names of the namespaces a test makes, and the three ways they are removed when the test does
 * not get to call `destroy()`: at process exit and on SIGINT/SIGTERM/SIGHUP (synchronously, for
 * every network still alive in this process), and, after a SIGKILL or a crash that skipped both,
 * by `removeLeftoverNamespaces` in a later run.
 *
 * A name is `<prefix>-<pid>-<tag>-<role>`: the creating process's pid is in it so that a later run
 * removes only namespaces whose creator is dead, never those of a run going on beside it.
 */

/** The prefix every test namespace carries unless a test picks another. */
export const DEFAULT_PREFIX = "cn";

export function namespaceName(prefix: string, pid: number, tag: string, role: string): string {
  return `${prefix}-${pid}-${tag}-${role}`;
}

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
};

/**
 * Deletes the namespaces named `<prefix>-<pid>-…` whose creating process no longer runs (after
 * killing what runs inside them), and returns their names. Safe beside concurrent runs.
 */
export function removeLeftoverNamespaces(prefix = DEFAULT_PREFIX): string[] {
  const pattern = new RegExp(`^${prefix}-(\\d+)-[0-9a-z]+-[0-9a-z]+$`);
  const removed: string[] = [];
  for (const ns of listNamespaces()) {
    const pid = Number(pattern.exec(ns)?.[1]);
    if (!Number.isInteger(pid) || isAlive(pid)) continue;
    killAndDeleteNamespace(ns);
    removed.push(ns);
  }
  return removed;
}

export type NamespaceSupport = { ok: true } | { ok: false; reason: string };
let support: NamespaceSupport | undefined;

/**
 * Whether this process can make the hosts `HostNetwork` makes: Linux, root, an `ip` command, and
 * a probe that makes a namespace with a veth pair and a bridge in it, then deletes it.
 */
export function canMakeNamespaces(): NamespaceSupport {
  support ??= probeNamespaces();
  return support;
}

function probeNamespaces(): NamespaceSupport {
  if (process.platform !== "linux")
    return { ok: false, reason: `network namespaces need Linux, not ${process.platform}` };
  const uid = process.getuid?.();
  if (uid !== 0) return { ok: false, reason: `making network namespaces needs root (uid is ${uid})` };
  if (spawnSync("ip", ["-V"], { timeout: 10_000 }).status !== 0)
    return { ok: false, reason: "no `ip` command (iproute2)" };
  const ns = namespaceName(DEFAULT_PREFIX, process.pid, "probe", "x");
  try {
    runIp(["netns", "add", ns]);
    runIp(["-n", ns, "-batch", "-"], "link add v0 type veth peer name v1\nlink add br0 type bridge\n");
    return { ok: true };
  } catch (error) {
    return { ok: false, reason: `cannot make a namespace with a veth pair and a bridge: ${String(error)}` };
  } finally {
    killAndDeleteNamespace(ns);
  }
}

/** What the exit and signal handlers clean: each network alive in this process. */
export interface SyncCleanable {
  cleanupSync(): void;
}

const alive = new Set<SyncCleanable>();
const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

const cleanupAll = (): void => {
  for (const network of [...alive]) {
    try {
      network.cleanupSync();
    } catch (error) {
      // Keep going: the other networks still need removing, and the process is on its way out.
      process.stderr.write(`netns cleanup: ${String(error)}\n`);
    }
  }
};
const onSignal = (signal: NodeJS.Signals): void => {
  cleanupAll();
  // Listening for a signal replaced its default action (exit): exit as the default would have.
  process.exit(128 + (constants.signals[signal] ?? 0));
};

/** Registers `network` for cleanup at exit and on signals; the handlers exist only while one is alive. */
export function trackAlive(network: SyncCleanable): void {
  if (alive.size === 0) {
    process.on("exit", cleanupAll);
    for (const signal of SIGNALS) process.on(signal, onSignal);
  }
  alive.add(network);
}

export function untrackAlive(network: SyncCleanable): void {
  if (!alive.delete(network) || alive.size > 0) return;
  process.removeListener("exit", cleanupAll);
  for (const signal of SIGNALS) process.removeListener(signal, onSignal);
}
