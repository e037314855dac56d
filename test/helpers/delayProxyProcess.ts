import type { ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { DelayProxyOptions, LinkChange } from "./delayProxy.ts";

/**
 * Starts delayProxyMain.ts as a process through `launch` (plain `spawn`, or `HostNetwork.spawn` to
 * run it inside a host) and waits for its `listening` line. Launch it with stdin a pipe to
 * `reshape` it later.
 */

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const MAIN = fileURLToPath(new URL("./delayProxyMain.ts", import.meta.url));

export interface DelayProxyProcess {
  child: ChildProcess;
  port: number;
  /** SIGTERM and wait for the exit. */
  stop(): Promise<void>;
  /** Changes the link's shape on the running proxy; resolves when it confirmed. */
  reshape(change: LinkChange, timeoutMs?: number): Promise<void>;
}

/** What to launch: the pinned Node through tsx, from the repository root (where tsx resolves). */
export const delayProxyCommand = (options: DelayProxyOptions) => ({
  command: process.execPath,
  args: ["--import", "tsx", MAIN, "--config", JSON.stringify(options)],
  cwd: ROOT,
});

export function startDelayProxyProcess(child: ChildProcess, timeoutMs = 20_000): Promise<DelayProxyProcess> {
  let output = "";
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
  };
  return new Promise((resolve, reject) => {
    const fail = (why: string) => {
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(new Error(`delay proxy ${why}:\n${output}`));
    };
    const timer = setTimeout(() => fail(`printed no "listening" within ${timeoutMs} ms`), timeoutMs);
    const onEarlyExit = (code: number | null) => fail(`exited with ${code} before listening`);
    child.once("exit", onEarlyExit);
    child.stderr?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    const onStdout = (chunk: Buffer) => {
      output += chunk.toString();
      const port = /listening \S+:(\d+)/.exec(output)?.[1];
      if (port === undefined) return;
      clearTimeout(timer);
      child.removeListener("exit", onEarlyExit);
      child.stdout?.removeListener("data", onStdout);
      child.stdout?.resume(); // keep draining what it prints later
      resolve({ child, port: Number(port), stop, reshape: (change, ms) => reshape(child, change, ms) });
    };
    child.stdout?.on("data", onStdout);
  });
}

/** Writes one change to the proxy's stdin and waits for its `shaped` (or `reshape failed`) line. */
function reshape(child: ChildProcess, change: LinkChange, timeoutMs = 5_000): Promise<void> {
  const line = JSON.stringify(change);
  const stdin = child.stdin;
  const stdout = child.stdout;
  if (stdin === null || stdout === null) return Promise.reject(new Error("delay proxy: stdin is not a pipe"));
  return new Promise((resolve, reject) => {
    let seen = "";
    const done = (error?: Error) => {
      clearTimeout(timer);
      stdout.removeListener("data", onData);
      if (error === undefined) resolve();
      else reject(error);
    };
    const timer = setTimeout(() => done(new Error(`delay proxy: no answer to ${line}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes(`shaped ${line}\n`)) done();
      const failed = /reshape failed: (.*)\n/.exec(seen)?.[1];
      if (failed !== undefined) done(new Error(`delay proxy: ${failed}`));
    };
    stdout.on("data", onData);
    stdin.write(`${line}\n`);
  });
}
