import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";

/** The repository root (bench/..), the working directory of every child. */
export const ROOT = fileURLToPath(new URL("../", import.meta.url));

/** A free TCP port on 127.0.0.1 (bound, then released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export interface Child {
  name: string;
  child: ChildProcess;
  /** stdout so far. */
  stdout(): string;
  /** stderr so far (kept for failure messages). */
  stderr(): string;
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
  stop(graceMs?: number): Promise<void>;
}

const live = new Set<Child>();

/**
 * Runs `node <args>` with the same pinned Node binary as this process, in the repository root.
 * Every child is tracked until it exits, so `stopAll` can end whatever is still running.
 */
export function spawnNode(name: string, args: string[], env: Record<string, string> = {}): Child {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    // stdin stays an open pipe: the bench's own servers exit when it closes (the bench died).
    stdio: ["pipe", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    out += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    err += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => {
    child.once("exit", (code) => {
      live.delete(handle);
      resolve(code);
    });
  });
  const handle: Child = {
    name,
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    async stop(graceMs = 5_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
  live.add(handle);
  return handle;
}

/** Runs a TypeScript file of the repository: `node --import tsx <file> <args>`. */
export function spawnTs(name: string, args: string[]): Child {
  return spawnNode(name, ["--import", "tsx", ...args]);
}

/** Stops every child still running. */
export async function stopAll(): Promise<void> {
  await Promise.all([...live].map((c) => c.stop()));
}

/** Last resort on process exit: SIGKILL whatever is left (synchronous, no waiting). */
export function killAllSync(): void {
  for (const c of live) {
    if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill("SIGKILL");
  }
}

/**
 * CPU seconds (user + system, all threads) a process has used so far, from /proc (Linux; undefined
 * elsewhere or once the process is gone). Assumes the usual 100 clock ticks per second.
 */
export function cpuSeconds(pid: number | undefined): number | undefined {
  return pid === undefined ? undefined : statCpuSeconds(`/proc/${pid}/stat`);
}

/** `cpuSeconds` of the main thread alone (a Node process's event loop, without its workers). */
export function mainThreadCpuSeconds(pid: number | undefined): number | undefined {
  return pid === undefined ? undefined : statCpuSeconds(`/proc/${pid}/task/${pid}/stat`);
}

function statCpuSeconds(path: string): number | undefined {
  try {
    const stat = readFileSync(path, "utf8");
    // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

/** Machine-wide CPU seconds from /proc/stat: busy (everything but idle and iowait), idle, steal. */
export function machineCpu(): { busy: number; idle: number; steal: number } | undefined {
  try {
    const line = readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "";
    const [user, nice, system, idle, iowait, irq, softirq, steal] = line
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    const busy = (user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0);
    return { busy: busy / 100, idle: ((idle ?? 0) + (iowait ?? 0)) / 100, steal: (steal ?? 0) / 100 };
  } catch {
    return undefined;
  }
}

/**
 * Runs a child to completion and parses the JSON object on the last line of its stdout. `onLine`
 * sees every stdout line as it arrives (the load worker marks its measured phase that way).
 */
export async function runJson<T>(name: string, args: string[], onLine?: (line: string) => void): Promise<T> {
  const c = spawnTs(name, args);
  c.child.stdin?.end();
  if (onLine !== undefined) {
    let partial = "";
    c.child.stdout?.on("data", (chunk: Buffer) => {
      const lines = (partial + chunk.toString()).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) onLine(line);
    });
  }
  const code = await c.exited;
  if (code !== 0) throw new Error(`${name} exited with ${code}:\n${c.stderr()}\n${c.stdout()}`);
  const lines = c.stdout().trim().split("\n");
  return JSON.parse(lines[lines.length - 1] ?? "") as T;
}

/** POSTs a JSON-RPC body; returns the status, raw body text and header bytes on the wire (approx.). */
export async function post(
  url: string,
  body: string,
): Promise<{ status: number; text: string; headerBytes: number }> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
  });
  const text = await response.text();
  let headerBytes = `HTTP/1.1 ${response.status} ${response.statusText}\r\n`.length + 2;
  response.headers.forEach((value, key) => {
    headerBytes += key.length + 2 + value.length + 2;
  });
  return { status: response.status, text, headerBytes };
}

/** Polls `url` with a JSON-RPC call until it answers 200 (or the child dies, or time runs out). */
export async function waitForRpc(c: Child, url: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (c.child.exitCode !== null || c.child.signalCode !== null) {
      throw new Error(`${c.name} exited before serving:\n${c.stderr()}\n${c.stdout()}`);
    }
    try {
      const reply = await post(url, '{"jsonrpc":"2.0","id":1,"method":"chain_getRecentBlockNumber"}');
      if (reply.status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${c.name} did not serve ${url} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Starts `chain-node dev` (bin/chain-node.js) as its own process on a free 127.0.0.1 port. */
export async function startDevNode(
  name: string,
  home: string,
  blockTimeMs: number,
  startTimeoutMs = 30_000,
  env: Record<string, string> = {},
): Promise<{ url: string; pid: number | undefined }> {
  const port = await freePort();
  // BENCH_NODE_CPU_PROF_DIR: every dev node writes a CPU profile there when it stops.
  const profileDir = process.env.BENCH_NODE_CPU_PROF_DIR;
  const args = profileDir === undefined ? [] : ["--cpu-prof", "--cpu-prof-dir", profileDir];
  args.push("bin/chain-node.js", "dev", "--home", home, "--rpc-port", String(port));
  args.push("--block-time", String(blockTimeMs), "--log-level", "warn");
  const child = spawnNode(name, args, env);
  const url = `http://127.0.0.1:${port}`;
  await waitForRpc(child, url, startTimeoutMs);
  return { url, pid: child.child.pid };
}
