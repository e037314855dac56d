import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, it } from "node:test";
import { FAILPOINT_ENV, FAILPOINTS, failpoint, parseFailpoint } from "../../../src/chain/index.ts";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

/** Runs `code` (an ES module that may import src/) in a child process with `env` added. */
function runChild(code: string, env: Record<string, string>) {
  return spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    encoding: "utf8",
  });
}

describe("failpoints (src/chain/failpoint.ts)", () => {
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

  it("does nothing when the environment arms none (this process)", () => {
    assert.equal(process.env[FAILPOINT_ENV], undefined);
    for (const point of FAILPOINTS) failpoint(point.name);
  });

  it("kills the process with SIGKILL the n-th time the armed point is reached, and at no other point", () => {
    const child = runChild(
      `import { failpoint } from "./src/chain/index.ts";
       failpoint("commit.beforeWrite");
       failpoint("commit.afterHeadWrite");
       failpoint("commit.beforeWrite");
       process.stdout.write("survived 2\\n");
       failpoint("commit.beforeWrite");
       process.stdout.write("survived 3\\n");`,
      { [FAILPOINT_ENV]: "commit.beforeWrite:3" },
    );
    assert.equal(child.signal, "SIGKILL", child.stderr);
    assert.equal(child.stdout, "survived 2\n", "it died at the third reach, not before");
    assert.match(child.stderr, /failpoint commit\.beforeWrite reached \(3\)/);
  });

  it("refuses to start with an unknown name in the environment", () => {
    const child = runChild(`import "./src/chain/index.ts";`, { [FAILPOINT_ENV]: "commit.typo" });
    assert.notEqual(child.status, 0);
    assert.match(child.stderr, /names no failpoint/);
  });
});
