import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";

/**
 * One node process per home: `data/LOCK` names the process that runs on it. Two nodes on one home
 * would each write the store as if it were theirs alone, and two validators with one signing log
 * could each sign a different block at the same height (each keeps its last signature in memory).
 * Node has no `flock`, so the lock is a file made with O_EXCL that holds the owner's pid and, on
 * Linux, its start time (so that a pid reused after a crash or in a restarted container is not
 * taken for the owner). A lock whose owner is gone is stale and taken over; `release` removes it.
 *
 * What it cannot see: a node on another host or in another pid namespace sharing the directory
 * (its pid means nothing here). docs/operations.md says so.
 */
export class HomeLock {
  readonly path: string;
  private readonly content: string;

  private constructor(path: string, content: string) {
    this.path = path;
    this.content = content;
  }

  /** Takes `<data>/LOCK`, or throws HomeInUseError naming the process that holds it. */
  static acquire(data: string): HomeLock {
    const path = join(data, LOCK_FILE);
    const owner: Owner = { pid: process.pid, start: procStat(process.pid)?.start };
    const content = `${JSON.stringify(owner)}\n`;
    // A second pass only after a stale lock was removed; a third means another process is
    // racing for it: refuse rather than loop.
    for (let attempt = 0; attempt < 2; attempt++) {
      let fd: number;
      try {
        fd = openSync(path, "wx");
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
        const found = readLock(path);
        if (found === undefined) continue; // removed meanwhile: try again
        const holder = parseOwner(found);
        if (holder !== undefined && holder.pid !== process.pid && isRunning(holder)) {
          throw new HomeInUseError(data, path, holder.pid);
        }
        // Stale (its process is gone, or it is ours from before a restart): remove it if it is
        // still the file read above, and try again.
        if (readLock(path) === found) unlinkSync(path);
        continue;
      }
      try {
        writeSync(fd, content);
      } finally {
        closeSync(fd);
      }
      return new HomeLock(path, content);
    }
    throw new HomeInUseError(data, path, undefined);
  }

  /** Removes the lock if it is still this process's. */
  release(): void {
    if (readLock(this.path) === this.content) unlinkSync(this.path);
  }
}

export class HomeInUseError extends Error {
  override readonly name = "HomeInUseError";
  constructor(data: string, path: string, pid: number | undefined) {
    super(
      `${data} is in use by another chain-node process${pid === undefined ? "" : ` (pid ${pid})`}: ` +
        `stop it first. If no node runs there, remove ${path}.`,
    );
  }
}

export const LOCK_FILE = "LOCK";

interface Owner {
  pid: number;
  /** /proc/<pid>/stat's start time (clock ticks since boot); undefined where there is no /proc. */
  start: string | undefined;
}

function readLock(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/** The lock's owner, or undefined for a torn or foreign file (treated as stale). */
function parseOwner(text: string): Owner | undefined {
  try {
    const raw = JSON.parse(text) as { pid?: unknown; start?: unknown };
    if (!Number.isSafeInteger(raw.pid) || (raw.pid as number) <= 0) return undefined;
    return { pid: raw.pid as number, start: typeof raw.start === "string" ? raw.start : undefined };
  } catch {
    return undefined;
  }
}

/**
 * True when the lock's process still runs: the pid exists, is not a zombie (killed, not yet
 * reaped by its parent), and, where known, started when the lock's owner did.
 */
function isRunning(owner: Owner): boolean {
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    // EPERM: it exists but belongs to another user.
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  const stat = procStat(owner.pid);
  // Unreadable: gone since kill(), or no /proc here (then the pid is all there is to go by).
  if (stat === undefined) return procStat(process.pid) === undefined;
  return stat.state !== "Z" && (owner.start === undefined || stat.start === owner.start);
}

/**
 * Fields 3 (state) and 22 (start time) of /proc/<pid>/stat, read after the command name, which
 * may hold spaces and parentheses; undefined without /proc.
 */
function procStat(pid: number): { state: string | undefined; start: string | undefined } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { state: fields[0], start: fields[19] };
  } catch {
    return undefined;
  }
}
