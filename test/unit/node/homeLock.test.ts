import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { HomeInUseError, HomeLock, LOCK_FILE } from "../../../src/node/homeLock.ts";
import { withTempDir } from "../../helpers/tempDir.ts";

/** Field 22 of /proc/<pid>/stat: what the lock records as the owner's start time. */
const startOf = (pid: number): string =>
  readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ")[19] as string;

/** Runs `body` with a live process that is not this one (a sleeping child, killed afterwards). */
async function withOtherProcess(body: (pid: number) => Promise<void> | void): Promise<void> {
  const child = spawn("sleep", ["30"], { stdio: "ignore" });
  try {
    await new Promise((resolve) => child.once("spawn", resolve));
    await body(child.pid as number);
  } finally {
    child.kill("SIGKILL");
  }
}

const lockOf = (data: string) => join(data, LOCK_FILE);
const owner = (pid: number, start?: string) => `${JSON.stringify({ pid, start })}\n`;

describe("HomeLock (src/node/homeLock.ts)", () => {
  it("takes data/LOCK with this process's pid and start time; release removes it", async () => {
    await withTempDir("home-lock", async (data) => {
      const lock = HomeLock.acquire(data);
      assert.deepEqual(JSON.parse(readFileSync(lockOf(data), "utf8")), {
        pid: process.pid,
        start: startOf(process.pid),
      });
      lock.release();
      assert.equal(existsSync(lockOf(data)), false);
      HomeLock.acquire(data).release(); // and again after a clean stop
    });
  });

  it("refuses a home whose lock names a running process, saying which and what to do", async () => {
    await withTempDir("home-lock", async (data) => {
      await withOtherProcess((pid) => {
        writeFileSync(lockOf(data), owner(pid, startOf(pid)));
        assert.throws(
          () => HomeLock.acquire(data),
          (error: unknown) =>
            error instanceof HomeInUseError &&
            error.message.includes(`(pid ${pid})`) &&
            error.message.includes(`remove ${lockOf(data)}`),
        );
        assert.equal(readFileSync(lockOf(data), "utf8"), owner(pid, startOf(pid)), "left as it was");
      });
    });
  });

  it("takes over a stale lock: its process is gone, its pid now runs another process, it is torn, or it is this process's", async () => {
    const exited = spawn("true");
    await new Promise((resolve) => exited.once("exit", resolve));
    await withOtherProcess(async (running) => {
      const stale: [string, string][] = [
        ["a process that exited", owner(exited.pid as number)],
        ["a reused pid (another start time)", owner(running, "1")],
        ["a torn write", '{"pid": 4'],
        ["an empty file (killed between create and write)", ""],
        ["this process's own (a restart that got the same pid)", owner(process.pid, "1")],
      ];
      for (const [why, content] of stale) {
        await withTempDir("home-lock", async (data) => {
          writeFileSync(lockOf(data), content);
          const lock = HomeLock.acquire(data);
          assert.equal(JSON.parse(readFileSync(lockOf(data), "utf8")).pid, process.pid, why);
          lock.release();
        });
      }
    });
  });

  it("release leaves a lock that is no longer this process's", async () => {
    await withTempDir("home-lock", async (data) => {
      const lock = HomeLock.acquire(data);
      writeFileSync(lockOf(data), owner(1, "1"));
      lock.release();
      assert.equal(readFileSync(lockOf(data), "utf8"), owner(1, "1"));
    });
  });
});
