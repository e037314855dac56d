import { type ChildProcess, execFile, spawn } from "node:child_process";
import { type Agent, request } from "node:http";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** A free TCP port on 127.0.0.1 (bound and released; fine for tests on one machine). */
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

export interface NodeProcess {
  url: string;
  child: ChildProcess;
  /** stdout and stderr so far, for failure messages. */
  output(): string;
  /** SIGTERM and wait for exit (SIGKILL after `graceMs`). */
  stop(graceMs?: number): Promise<number | null>;
  /** SIGKILL and wait for exit. */
  kill(): Promise<void>;
}

/** A started `chain-node` process: the child, everything it printed so far, and its exit. */
export interface LaunchedNode {
  child: ChildProcess;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Starts `chain-node <args>` as a real process (the pinned Node via process.execPath, through tsx)
 * with `env` added to this process's environment, collecting its stdout and stderr.
 */
export function launchNode(args: string[], env: Record<string, string> = {}): LaunchedNode {
  const child = spawn(process.execPath, ["--import", "tsx", "src/cli/main.ts", ...args], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env },
  });
  let output = "";
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  return { child, output: () => output, exited };
}

/**
 * Runs `chain-node <args>` as a real process (the pinned Node via process.execPath, through tsx)
 * and waits until its RPC answers. Register `stop` as teardown on the next line.
 */
export async function spawnNode(
  args: string[],
  rpcPort: number,
  timeoutMs = 20_000,
  /** Added to this process's environment (e.g. a test-only knob such as CHAIN_NODE_TEST_CLOCK_SKEW_MS). */
  env: Record<string, string> = {},
): Promise<NodeProcess> {
  const launched = launchNode(args, env);
  const { child } = launched;
  const exited = launched.exited.then(({ code }) => code);
  const url = `http://127.0.0.1:${rpcPort}`;
  const handle: NodeProcess = {
    url,
    child,
    output: launched.output,
    async stop(graceMs = 10_000) {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGKILL");
      await exited;
    },
  };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`node exited with ${child.exitCode} before serving:\n${launched.output()}`);
    try {
      const response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: '{"jsonrpc":"2.0","id":1,"method":"chain_getRecentBlockNumber"}',
      });
      if (response.ok) return handle;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await handle.kill();
      throw new Error(`node did not serve RPC on ${url} within ${timeoutMs} ms:\n${launched.output()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** How long `rpc` waits for an answer: a node that stopped answering fails the call, not the suite's timeout. */
const RPC_TIMEOUT_MS = 30_000;

/** One JSON-RPC call to a URL; throws on an error reply, or when no answer came in RPC_TIMEOUT_MS. */
export async function rpc<T>(url: string, method: string, params?: unknown): Promise<T> {
  const body: Record<string, unknown> = { jsonrpc: "2.0", id: 1, method };
  if (params !== undefined) body.params = params;
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(RPC_TIMEOUT_MS),
  });
  const reply = (await response.json()) as { result?: T; error?: unknown };
  if (reply.error !== undefined) throw new Error(`${method}: ${JSON.stringify(reply.error)}`);
  return reply.result as T;
}

export interface HttpReply {
  status: number;
  body: string;
}

/**
 * One JSON POST to 127.0.0.1:`port` through `agent` (its keep-alive connections), with node:http
 * rather than fetch so that the caller controls the connections. Rejects when no reply comes
 * within `timeoutMs` (if given).
 */
export function httpPost(agent: Agent, port: number, body: string, timeoutMs?: number): Promise<HttpReply> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        method: "POST",
        path: "/",
        agent,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }),
        );
        res.on("error", reject);
      },
    );
    if (timeoutMs !== undefined) {
      req.setTimeout(timeoutMs, () => req.destroy(new Error(`no reply within ${timeoutMs} ms`)));
    }
    req.on("error", reject);
    req.end(body);
  });
}

/** What one `chain-node` command printed and how it exited. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs one `chain-node` command (bin/chain-node.js, this Node) to its end, as an operator types
 * it; `env` is added to this process's environment. Killed after `timeoutMs`.
 */
export function runCli(
  args: string[],
  env: Record<string, string> = {},
  timeoutMs = 60_000,
): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["bin/chain-node.js", ...args],
      { cwd: ROOT, env: { ...process.env, ...env }, timeout: timeoutMs },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/**
 * Resolves with the match when `child` prints (on stdout) output matching `pattern`; rejects
 * after `timeoutMs` or when it exits first, with what it printed. For helper processes that say
 * "listening" when they are ready.
 */
export function outputLine(
  child: ChildProcess,
  pattern: RegExp,
  what: string,
  timeoutMs = 20_000,
): Promise<RegExpExecArray> {
  let output = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${what}: no ${pattern} within ${timeoutMs} ms:\n${output}`)),
      timeoutMs,
    );
    child.stderr?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      const match = pattern.exec(output);
      if (match === null) return;
      clearTimeout(timer);
      resolve(match);
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${what}: exited with ${code}:\n${output}`));
    });
  });
}
