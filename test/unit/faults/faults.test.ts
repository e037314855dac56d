import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, it } from "node:test";
import {
  armFailpoint,
  FAILPOINTS,
  failpoint,
  NO_TEST_FAULTS,
  parseFailpoint,
  readTestFaults,
  skewedClock,
  TEST_FAULT_VARIABLES as V,
} from "../../../src/faults/index.ts";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

/** Runs `code` (an ES module that may import src/) in a child process. */
function runChild(code: string) {
  return spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code], {
    cwd: ROOT,
    encoding: "utf8",
  });
}

describe("test faults (src/faults)", () => {
  it("reads no fault from an environment without CHAIN_NODE_TEST_* variables", () => {
    assert.deepEqual(readTestFaults({}), NO_TEST_FAULTS);
    assert.deepEqual(readTestFaults({ [V.clockSkewMs]: "", [V.failpoint]: " " }), NO_TEST_FAULTS);
    // The prefix of real settings arms nothing: only CHAIN_NODE_TEST_* count.
    assert.deepEqual(
      readTestFaults({ CHAIN_NODE_FAILPOINT: "commit.beforeWrite", CHAIN_NODE_CLOCK_SKEW_MS: "5" }),
      NO_TEST_FAULTS,
    );
  });

  it("reads each variable as its type", () => {
    assert.deepEqual(
      readTestFaults({
        [V.failpoint]: "sign.afterFsync:7",
        [V.clockSkewMs]: "-30000",
        [V.partitionFile]: "/tmp/partition.json",
        [V.keystoreScryptN]: "1024",
        [V.corruptSnapshotChunks]: "1",
        [V.snapshotChunkBytes]: "1500",
        [V.holdBlocks]: "1",
      }),
      {
        failpoint: { name: "sign.afterFsync", at: 7 },
        clockSkewMs: -30_000,
        partitionFile: "/tmp/partition.json",
        keystoreScryptN: 1024,
        corruptSnapshotChunks: true,
        snapshotChunkBytes: 1500,
        holdBlocks: true,
      },
    );
    assert.equal(readTestFaults({ [V.holdBlocks]: "0" }).holdBlocks, false);
    assert.throws(() => readTestFaults({ [V.holdBlocks]: "true" }), /CHAIN_NODE_TEST_HOLD_BLOCKS/);
    assert.throws(
      () => readTestFaults({ [V.corruptSnapshotChunks]: "yes" }),
      /CHAIN_NODE_TEST_CORRUPT_SNAPSHOT_CHUNKS/,
    );
    assert.throws(
      () => readTestFaults({ [V.snapshotChunkBytes]: "10" }),
      /CHAIN_NODE_TEST_SNAPSHOT_CHUNK_BYTES/,
    );
  });

  it("refuses a malformed value, naming the variable", () => {
    for (const raw of ["1.5", "abc", "10s", "1e3", "99999999999999999999"]) {
      assert.throws(() => readTestFaults({ [V.clockSkewMs]: raw }), new RegExp(V.clockSkewMs), raw);
    }
    for (const raw of ["0", "1", "3", "1000", "x"]) {
      assert.throws(() => readTestFaults({ [V.keystoreScryptN]: raw }), new RegExp(V.keystoreScryptN), raw);
    }
    assert.throws(
      () => readTestFaults({ [V.failpoint]: "commit.typo" }),
      /CHAIN_NODE_TEST_FAILPOINT.*names no failpoint/,
    );
  });

  it("skews the clock by a positive or negative amount, and is Date.now unskewed", () => {
    assert.equal(skewedClock(0), Date.now);
    for (const skew of [30_000, -30_000]) {
      const before = Date.now();
      const now = skewedClock(skew)();
      assert.ok(now >= before + skew && now <= Date.now() + skew, `skew ${skew}`);
    }
  });
});

describe("failpoints (src/faults/failpoints.ts)", () => {
  it("lists each point once, named after its path", () => {
    const names = FAILPOINTS.map((point) => point.name);
    assert.equal(new Set(names).size, names.length, "no name twice");
    for (const point of FAILPOINTS) {
      assert.ok(point.name.startsWith(`${point.path}.`), `${point.name} starts with its path ${point.path}`);
    }
  });

  it("parses <name> and <name>:<n>, and refuses unknown names and bad counts", () => {
    assert.deepEqual(parseFailpoint("commit.beforeWrite"), { name: "commit.beforeWrite", at: 1 });
    assert.deepEqual(parseFailpoint("sign.afterFsync:7"), { name: "sign.afterFsync", at: 7 });
    assert.throws(() => parseFailpoint("commit.nowhere"), /names no failpoint.*commit\.beforeWrite/);
    for (const bad of [
      "commit.beforeWrite:0",
      "commit.beforeWrite:x",
      "commit.beforeWrite:1.5",
      "commit.beforeWrite:",
    ]) {
      assert.throws(() => parseFailpoint(bad), /integer ≥ 1/, bad);
    }
  });

  it("does nothing while no point is armed (this process)", () => {
    armFailpoint(undefined);
    for (const point of FAILPOINTS) failpoint(point.name);
  });

  it("kills the process with SIGKILL the n-th time the armed point is reached, and at no other point", () => {
    const child = runChild(
      `import { armFailpoint, failpoint, parseFailpoint } from "./src/faults/index.ts";
       armFailpoint(parseFailpoint("commit.beforeWrite:3"));
       failpoint("commit.beforeWrite");
       failpoint("commit.afterHeadWrite");
       failpoint("commit.beforeWrite");
       process.stdout.write("survived 2\\n");
       failpoint("commit.beforeWrite");
       process.stdout.write("survived 3\\n");`,
    );
    assert.equal(child.signal, "SIGKILL", child.stderr);
    assert.equal(child.stdout, "survived 2\n", "it died at the third reach, not before");
    assert.match(child.stderr, /failpoint commit\.beforeWrite reached \(3\)/);
  });
});
