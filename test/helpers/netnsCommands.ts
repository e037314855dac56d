import { execFileSync, spawnSync } from "node:child_process";

/**
 * The `ip` commands that make and remove network namespaces, run synchronously on purpose: a
 * SIGINT or SIGTERM is handled only between them, never while one is in flight, so the record of
 * what exists (`HostNetwork`'s list of namespaces) is always complete when the cleanup runs.
 * Each call takes a few milliseconds.
 */

const IP_TIMEOUT_MS = 10_000;

/** Runs `ip args` (with `batch` on stdin for `-batch -`); throws with ip's own message on failure. */
export function runIp(args: string[], batch?: string): string {
  try {
    return execFileSync("ip", args, {
      input: batch ?? "",
      encoding: "utf8",
      stdio: ["pipe", "pipe", "pipe"],
      timeout: IP_TIMEOUT_MS,
    });
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr?.trim();
    throw new Error(`ip ${args.join(" ")} failed: ${stderr || String(error)}`);
  }
}

/** Every namespace name that `ip netns list` shows. */
export function listNamespaces(): string[] {
  return runIp(["netns", "list"])
    .split("\n")
    .map((line) => line.trim().split(" ")[0] ?? "")
    .filter((name) => name !== "");
}

/**
 * SIGKILLs every process inside `ns` (tracked or not: a process that a test forgot, or a child of
 * one), then deletes `ns`. A namespace already gone is not an error.
 */
export function killAndDeleteNamespace(ns: string): void {
  const pids = spawnSync("ip", ["netns", "pids", ns], { encoding: "utf8", timeout: IP_TIMEOUT_MS });
  for (const pid of (pids.stdout ?? "").split("\n").map(Number)) {
    if (!Number.isInteger(pid) || pid <= 0) continue;
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  const deleted = spawnSync("ip", ["netns", "del", ns], { encoding: "utf8", timeout: IP_TIMEOUT_MS });
  if (deleted.status !== 0 && listNamespaces().includes(ns)) {
    throw new Error(`ip netns del ${ns} failed: ${deleted.stderr?.trim()}`);
  }
}
