import { writeSync } from "node:fs";

/**
 * Failpoints: named places on the durability paths (block commit, pool journal, vote signing) where
 * a test can make the process die at once, with SIGKILL semantics: no `finally`, no exit handler,
 * no flush, no clean LMDB close. Nothing is armed unless node/ arms a point (from
 * `CHAIN_NODE_TEST_FAILPOINT=<name>` or `<name>:<n>`, see index.ts); unarmed, `failpoint()` is one
 * comparison. test/e2e/failpoints.test.ts iterates over FAILPOINTS.
 */
export const FAILPOINTS = [
  // ---- a block commit, in order (dev producer and network host alike) ----
  {
    name: "commit.beforeWrite",
    path: "commit",
    at: "Chain.commit: block executed and signed, before the store's write transaction",
  },
  {
    name: "commit.afterBlockWrites",
    path: "commit",
    at: "inside the LMDB write transaction: block, hash index, transactions and their history index entries written",
  },
  {
    name: "commit.afterStateWrites",
    path: "commit",
    at: "inside the write transaction: state leaves, trie nodes, stakes and validator sets written too",
  },
  {
    name: "commit.afterHeadWrite",
    path: "commit",
    at: "inside the write transaction: head pointer written, the transaction not yet committed",
  },
  {
    name: "commit.afterTxnCommit",
    path: "commit",
    at: "LmdbStore.commitBlock: write transaction committed, before its promise resolves",
  },
  {
    name: "commit.beforeHeadUpdate",
    path: "commit",
    at: "Chain.commit: the store resolved, before the in-memory head and trie move",
  },
  {
    name: "commit.afterHeadUpdate",
    path: "commit",
    at: "Chain.commit: in-memory head moved, before the committed listeners (RPC subscriptions, metrics)",
  },
  {
    name: "commit.beforePoolPrune",
    path: "commit",
    at: "block producer: commit returned, before the block's transactions leave the in-memory pool",
  },
  {
    name: "commit.afterPoolPrune",
    path: "commit",
    at: "block producer: pool pruned, before the block events (logs) run",
  },
  // ---- pruning, inside a block's write transaction (storage/pruning.ts) ----
  {
    name: "prune.afterNodeDeletes",
    path: "prune",
    at: "Pruner: states_from moved and a retired batch of trie nodes deleted, the block's transaction not yet committed",
  },
  {
    name: "prune.afterBlockDelete",
    path: "prune",
    at: "Pruner: an old block, its transactions and hash index deleted, the block's transaction not yet committed",
  },
  // ---- opening a data directory of an older schema (storage/historyUpgrade.ts) ----
  {
    name: "upgrade.afterHistoryBatch",
    path: "upgrade",
    at: "LmdbStore open, schema 6 upgrade: a batch of blocks indexed by address and its marker committed, the rest not",
  },
  // ---- the pool journal (a transaction is acknowledged only after its journal write) ----
  {
    name: "journal.inWrite",
    path: "journal",
    at: "LmdbStore.savePending: inside the journal's write transaction, entries put, not committed",
  },
  {
    name: "journal.afterWrite",
    path: "journal",
    at: "LmdbStore.savePending: journal transaction committed, before the hash is returned to the client",
  },
  // ---- consensus signing (network validators) ----
  {
    name: "sign.beforeLog",
    path: "sign",
    at: "ConsensusSigner.sign: signature made, before the signing-log write",
  },
  {
    name: "sign.afterLogWrite",
    path: "sign",
    at: "ConsensusSigner.sign: log line written, before fsync",
  },
  {
    name: "sign.afterFsync",
    path: "sign",
    at: "ConsensusSigner.sign: log fsynced, before the signature is returned and sent",
  },
  {
    name: "sign.afterSend",
    path: "sign",
    at: "TendermintEngine: the signed vote or proposal handed to the network",
  },
  // ---- state snapshots (docs/decisions/010-snapshots.md) ----
  {
    name: "snapshot.afterFirstChunk",
    path: "snapshot",
    at: "writing a snapshot file (CLI or periodic): the first chunk written to the .partial file, the rest not",
  },
  {
    name: "snapshot.restoreInWrite",
    path: "snapshot",
    at: "LmdbStore.restoreSnapshot: inside the write transaction, blocks and state leaves put, not committed",
  },
  {
    name: "snapshot.restoreBeforeGenesis",
    path: "snapshot",
    at: "snapshot restore: the store's write committed, genesis.json not yet written",
  },
] as const;

export type FailpointName = (typeof FAILPOINTS)[number]["name"];
export type FailpointPath = (typeof FAILPOINTS)[number]["path"];

/** A point to die at, the `at`-th time it is reached (1-based). */
export interface FailpointSpec {
  name: FailpointName;
  at: number;
}

/** Parses `<name>` or `<name>:<n>`; throws on an unknown name, so a typo cannot arm nothing. */
export function parseFailpoint(spec: string): FailpointSpec {
  const colon = spec.lastIndexOf(":");
  const name = colon === -1 ? spec : spec.slice(0, colon);
  const at = colon === -1 ? 1 : Number(spec.slice(colon + 1));
  const known = FAILPOINTS.find((point) => point.name === name);
  if (known === undefined) {
    throw new Error(`${spec} names no failpoint (known: ${FAILPOINTS.map((p) => p.name).join(", ")})`);
  }
  if (!Number.isSafeInteger(at) || at < 1) {
    throw new Error(`failpoint ${spec}: the count after ":" must be an integer ≥ 1`);
  }
  return { name: known.name, at };
}

let armed: (FailpointSpec & { reached: number }) | undefined;

/** Arms one point for this process (undefined disarms). node/ calls it once, before the chain opens. */
export function armFailpoint(spec: FailpointSpec | undefined): void {
  armed = spec === undefined ? undefined : { ...spec, reached: 0 };
}

/**
 * Counts one reaching of `name` and says whether the process must die there now (the armed
 * point, reached for the n-th time). For a point that another thread passes (the store's block
 * writer): this thread counts, and the writer kills where it is told to.
 */
export function failpointDue(name: FailpointName): boolean {
  if (armed === undefined || armed.name !== name) return false;
  armed.reached += 1;
  return armed.reached >= armed.at;
}

/** The line a failpoint writes to stderr before the kill. */
export function failpointLine(name: FailpointName): string {
  return `failpoint ${name} reached (${armed?.reached ?? 0}): killing the process\n`;
}

/**
 * Marks a point on a durability path. When this point is armed and reached for the n-th time,
 * writes one line to stderr (synchronously) and kills the process with SIGKILL: no `finally`, no
 * exit handler, no flush. (storage/blockWriterThread.mjs does the same where failpointDue says.)
 */
export function failpoint(name: FailpointName): void {
  if (!failpointDue(name)) return;
  writeSync(2, failpointLine(name));
  process.kill(process.pid, "SIGKILL");
}
