import { type FailpointSpec, parseFailpoint } from "./failpoints.ts";

/**
 * faults: the knobs that let tests break a node on purpose, and nothing else. Each is read from a
 * `CHAIN_NODE_TEST_*` variable (never the `CHAIN_NODE_<SECTION>_<KEY>` prefix of real settings),
 * defaults to "no fault", is parsed and checked here once, and is injected by node/: failpoints
 * are armed before the chain opens, the clock skew becomes the clock that consensus and admission
 * read, the partition file becomes p2p's peer filter, and the keystore cost applies to new key
 * files. Operators leave them unset (docs/configuration.md, "Testing knobs"). This layer imports
 * nothing of src/, so every layer with a durable step may call `failpoint()`.
 */
export {
  armFailpoint,
  FAILPOINTS,
  type FailpointName,
  type FailpointPath,
  type FailpointSpec,
  failpoint,
  failpointDue,
  failpointLine,
  parseFailpoint,
} from "./failpoints.ts";

export const TEST_FAULT_VARIABLES = {
  /** `<name>` or `<name>:<n>`: die (SIGKILL) the n-th time that failpoint is reached. */
  failpoint: "CHAIN_NODE_TEST_FAILPOINT",
  /** Integer ms, may be negative: this node's clock runs that far off (consensus and admission). */
  clockSkewMs: "CHAIN_NODE_TEST_CLOCK_SKEW_MS",
  /** A file holding a JSON array of libp2p peer ids this node must not talk to, polled. */
  partitionFile: "CHAIN_NODE_TEST_PARTITION_FILE",
  /** A power of two: the scrypt cost of new keystores (cheap to make, as cheap to brute-force). */
  keystoreScryptN: "CHAIN_NODE_TEST_KEYSTORE_SCRYPT_N",
  /** `1`: every snapshot chunk this node serves to peers has one byte flipped (a hostile server). */
  corruptSnapshotChunks: "CHAIN_NODE_TEST_CORRUPT_SNAPSHOT_CHUNKS",
  /**
   * Bytes: this node cuts its snapshots' chunks at this size instead of the format's 1 MiB, so a
   * test chain's small state makes many chunks (every node of a test network sets the same).
   */
  snapshotChunkBytes: "CHAIN_NODE_TEST_SNAPSHOT_CHUNK_BYTES",
  /**
   * `1`: a dev node makes no block; it admits and journals as always. The admission benchmark's
   * node: without it the dev producer commits a pool's backlog back to back (docs/decisions/017),
   * and the bench measured admission competing with execution for the event loop.
   */
  holdBlocks: "CHAIN_NODE_TEST_HOLD_BLOCKS",
} as const;

export interface TestFaults {
  failpoint: FailpointSpec | undefined;
  clockSkewMs: number;
  partitionFile: string | undefined;
  keystoreScryptN: number | undefined;
  corruptSnapshotChunks: boolean;
  snapshotChunkBytes: number | undefined;
  holdBlocks: boolean;
}

/** No fault: what a node runs with when no CHAIN_NODE_TEST_* variable is set. */
export const NO_TEST_FAULTS: TestFaults = Object.freeze({
  failpoint: undefined,
  clockSkewMs: 0,
  partitionFile: undefined,
  keystoreScryptN: undefined,
  corruptSnapshotChunks: false,
  snapshotChunkBytes: undefined,
  holdBlocks: false,
});

/** Reads the CHAIN_NODE_TEST_* variables of `env`; throws, naming the variable, on a malformed one. */
export function readTestFaults(env: Readonly<Record<string, string | undefined>>): TestFaults {
  const V = TEST_FAULT_VARIABLES;
  const text = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value === undefined || value === "" ? undefined : value;
  };
  const failpointText = text(V.failpoint);
  const skewText = text(V.clockSkewMs);
  const scryptText = text(V.keystoreScryptN);
  const skew = Number(skewText ?? "0");
  if (!/^-?\d+$/.test(skewText ?? "0") || !Number.isSafeInteger(skew)) {
    throw new Error(
      `${V.clockSkewMs} must be an integer number of milliseconds, got ${JSON.stringify(skewText)}`,
    );
  }
  const scryptN = scryptText === undefined ? undefined : Number(scryptText);
  // No more than the standard cost, which node/keystore.ts defines and node/ checks.
  if (
    scryptN !== undefined &&
    (!Number.isInteger(scryptN) || scryptN < 2 || (scryptN & (scryptN - 1)) !== 0)
  ) {
    throw new Error(`${V.keystoreScryptN} must be a power of two, at least 2`);
  }
  const flag = (name: string): boolean => {
    const value = text(name);
    if (value !== undefined && value !== "1" && value !== "0") throw new Error(`${name} must be 1 or 0`);
    return value === "1";
  };
  const chunkText = text(V.snapshotChunkBytes);
  const chunkBytes = chunkText === undefined ? undefined : Number(chunkText);
  if (chunkBytes !== undefined && (!Number.isSafeInteger(chunkBytes) || chunkBytes < 64)) {
    throw new Error(`${V.snapshotChunkBytes} must be an integer of at least 64 bytes`);
  }
  let failpoint: FailpointSpec | undefined;
  try {
    failpoint = failpointText === undefined ? undefined : parseFailpoint(failpointText);
  } catch (error) {
    throw new Error(`${V.failpoint}: ${(error as Error).message}`);
  }
  return {
    failpoint,
    clockSkewMs: skew,
    partitionFile: text(V.partitionFile),
    keystoreScryptN: scryptN,
    corruptSnapshotChunks: flag(V.corruptSnapshotChunks),
    snapshotChunkBytes: chunkBytes,
    holdBlocks: flag(V.holdBlocks),
  };
}

/** `Date.now`, or a clock `skewMs` off it. */
export function skewedClock(skewMs: number): () => number {
  return skewMs === 0 ? Date.now : () => Date.now() + skewMs;
}
