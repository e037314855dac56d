import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { readNewPassword, readPassword } from "../../../src/cli/password.ts";

describe("password sources", () => {
  const dir = mkdtempSync(join(tmpdir(), "chain-node-password-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  function file(name: string, content: string): string {
    const path = join(dir, name);
    writeFileSync(path, content, { mode: 0o600 });
    return path;
  }

  it("--password-file gives the first line, without its line ending", async () => {
    assert.equal(await readPassword({ passwordFile: file("lf", "s3cret\n") }, "k"), "s3cret");
    assert.equal(await readPassword({ passwordFile: file("crlf", "s3cret\r\nignored\n") }, "k"), "s3cret");
    assert.equal(await readPassword({ passwordFile: file("bare", " spaced ") }, "k"), " spaced ");
  });

  it("--password-env reads the variable, and says when it is unset", async () => {
    process.env.CHAIN_NODE_TEST_PASSWORD = "from env";
    try {
      assert.equal(await readPassword({ passwordEnv: "CHAIN_NODE_TEST_PASSWORD" }, "k"), "from env");
    } finally {
      delete process.env.CHAIN_NODE_TEST_PASSWORD;
    }
    await assert.rejects(
      readPassword({ passwordEnv: "CHAIN_NODE_TEST_UNSET" }, "k"),
      /CHAIN_NODE_TEST_UNSET is not set/,
    );
  });

  it("a missing password file is a clear error", async () => {
    await assert.rejects(
      readPassword({ passwordFile: join(dir, "absent") }, "k"),
      /cannot read the password file/,
    );
  });

  it("a new key refuses an empty password", async () => {
    await assert.rejects(readNewPassword({ passwordFile: file("empty", "\n") }, 'key "x"'), /empty password/);
    assert.equal(await readNewPassword({ passwordFile: file("ok", "pw\n") }, 'key "x"'), "pw");
  });
});
