import { type ChildProcess, spawn } from "node:child_process";
import { ENVIRONMENT_OPTIONS } from "../../src/storage/schema.ts";

/** A process that opens `path`, takes LMDB's write lock, prints "locked", and holds it for `ms`. */
export function holdWriteLock(path: string, ms: number): { child: ChildProcess; locked: Promise<void> } {
  const script = `
    import { open } from "lmdb";
    const root = open({ path: ${JSON.stringify(path)}, ...${JSON.stringify(ENVIRONMENT_OPTIONS)} });
    root.transactionSync(() => {
      root.put("holder", 1);
      process.stdout.write("locked\\n");
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ${ms});
    });
    await root.close();
  `;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
    cwd: process.cwd(),
    stdio: ["ignore", "pipe", "inherit"],
  });
  const locked = new Promise<void>((resolve, reject) => {
    child.stdout?.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("locked")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`the lock holder exited (${code}) before it locked`)));
  });
  return { child, locked };
}
