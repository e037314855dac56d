import { readFileSync } from "node:fs";
import type { PeerFilter } from "../p2p/index.ts";
import type { Logger } from "./logger.ts";

/**
 * Test-only network partitions without root: `CHAIN_NODE_TEST_PARTITION_FILE=<path>` (src/faults) makes the node poll
 * that file every 200 ms. It holds a JSON array of libp2p peer ids this node must not talk to
 * (absent or empty: no partition); each change is handed to `apply`, which the node points at a
 * `PartitionFilter` given to p2p as its `peerFilter` (p2p then closes their connections, refuses
 * dials both ways and drops their gossip). Used by test/e2e/networkFaults.test.ts to split a
 * testnet 2/2 and 1/3 and heal it; operators leave it unset (docs/configuration.md, "Testing knobs").
 */
const POLL_MS = 200;

/** The peer ids in the file's text; an unreadable or malformed file counts as no partition. */
export function parsePartition(text: string | undefined): string[] {
  if (text === undefined || text.trim() === "") return [];
  const value: unknown = JSON.parse(text);
  if (!Array.isArray(value) || !value.every((id) => typeof id === "string")) {
    throw new Error("a partition file holds a JSON array of peer id strings");
  }
  return value;
}

/** The peers of the partition file as a p2p `PeerFilter`: it allows every peer but those cut off. */
export class PartitionFilter implements PeerFilter {
  private cut: ReadonlySet<string> = new Set();
  private readonly listeners = new Set<() => void>();

  allows(peerId: string): boolean {
    return !this.cut.has(peerId);
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** Cuts this node off from `peerIds` (and from no one else); `[]` heals. */
  cutOff(peerIds: readonly string[]): void {
    this.cut = new Set(peerIds);
    for (const listener of [...this.listeners]) listener();
  }
}

/** Starts polling when a file is given; returns the stop function (a no-op otherwise). */
export function watchPartitionFile(
  path: string | undefined,
  apply: (peerIds: readonly string[]) => void,
  log: Logger,
): () => void {
  if (path === undefined || path === "") return () => undefined;
  log.warn({ path }, "test partition file watched: peers it lists are cut off");
  let last = "[]";
  const poll = () => {
    let text: string | undefined;
    try {
      text = readFileSync(path, "utf8");
    } catch {
      text = undefined; // absent: no partition
    }
    let ids: string[];
    try {
      ids = parsePartition(text);
    } catch (error) {
      log.warn({ path, err: String(error) }, "partition file ignored");
      return;
    }
    const key = JSON.stringify([...ids].sort());
    if (key === last) return;
    last = key;
    log.info({ peers: ids }, "test partition changed");
    apply(ids);
  };
  poll();
  const timer = setInterval(poll, POLL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
