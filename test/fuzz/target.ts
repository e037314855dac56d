import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** A dev node (test/helpers/testNode.ts) in its own process, for fuzzing. */
export interface FuzzTarget {
  url: string;
  pid: number;
  addresses: string[];
  privateKeys: string[];
  /** Resident memory of the node process (VmRSS), bytes. */
  rssBytes(): number;
  /** Whether the process is still running (it must never crash). */
  alive(): boolean;
  /** What the process printed, for failure messages. */
  output(): string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when it has exited. */
  stop(graceMs?: number): Promise<void>;
}

/** Starts test/fuzz/targetMain.ts and waits (bounded) until it serves RPC. Register `stop` right after. */
export async function startFuzzTarget(
  options: { pool?: Record<string, number>; timeoutMs?: number } = {},
): Promise<FuzzTarget> {
  const env = { ...process.env };
  if (options.pool !== undefined) env.FUZZ_TARGET_POOL = JSON.stringify(options.pool);
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", "test/fuzz/targetMain.ts"], {
    cwd: ROOT,
    env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let output = "";
  let exitCode: number | null | undefined;
  const exited = new Promise<void>((resolve) =>
    child.once("exit", (code, signal) => {
      exitCode = code ?? (signal === null ? null : -1);
      resolve();
    }),
  );
  child.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  const stop = async (graceMs = 10_000): Promise<void> => {
    if (exitCode !== undefined) return;
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
    await exited;
    clearTimeout(timer);
  };
  const timeoutMs = options.timeoutMs ?? 30_000;
  const ready = await new Promise<{ url: string; addresses: string[]; privateKeys: string[] }>(
    (resolve, reject) => {
      let line = "";
      const timer = setTimeout(
        () => reject(new Error(`fuzz target did not serve within ${timeoutMs} ms:\n${output}`)),
        timeoutMs,
      );
      child.stdout?.on("data", (chunk: Buffer) => {
        output += chunk.toString();
        line += chunk.toString();
        const end = line.indexOf("\n");
        if (end >= 0) {
          clearTimeout(timer);
          resolve(JSON.parse(line.slice(0, end)));
        }
      });
      void exited.then(() => {
        clearTimeout(timer);
        reject(new Error(`fuzz target exited with ${String(exitCode)} before serving:\n${output}`));
      });
    },
  ).catch(async (error: unknown) => {
    await stop();
    throw error;
  });
  const pid = child.pid as number;
  return {
    ...ready,
    pid,
    rssBytes() {
      const status = readFileSync(`/proc/${pid}/status`, "utf8");
      const kib = /^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1];
      if (kib === undefined) throw new Error(`no VmRSS for process ${pid}`);
      return Number(kib) * 1024;
    },
    alive: () => exitCode === undefined,
    output: () => output,
    stop,
  };
}
