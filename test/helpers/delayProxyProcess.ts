import type { ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { DelayProxyOptions } from "./delayProxy.ts";

/**
 * Starts delayProxyMain.ts as a process through `launch` (plain `spawn`, or `HostNetwork.spawn` to
 * run it inside a host) and waits for its `listening` line.
 */

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const MAIN = fileURLToPath(new URL("./delayProxyMain.ts", import.meta.url));

export interface DelayProxyProcess {
  child: ChildProcess;
  port: number;
  /** SIGTERM and wait for the exit. */
  stop(): Promise<void>;
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
      resolve({ child, port: Number(port), stop });
    };
    child.stdout?.on("data", onStdout);
  });
}
