import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { bytesToHex, hexToBytes } from "../../../src/crypto/index.ts";
import {
  createKey,
  homePaths,
  KeyringError,
  keystoreScryptFor,
  readTestFaults,
  TEST_FAULT_VARIABLES,
  listKeys,
  loadValidatorKey,
  nextFreeKeyName,
  randomPrivateKey,
  saveKey,
  STANDARD_SCRYPT,
  showKey,
  unlockKey,
} from "../../../src/node/index.ts";

const LIGHT = { n: 1024, r: 8, p: 1 };
const PRIVATE_KEY = "0x7a28b5ba57c53603b0b07b56bba752f7784bf506fa95edc395f5cf6c7514fe9d";
const ADDRESS = "0x008AeEda4D805471dF9b2A5B0f38A0C3bCBA786b";

const homes: string[] = [];
after(() => {
  for (const home of homes) rmSync(home, { recursive: true, force: true });
});

function newHome(): string {
  const home = mkdtempSync(join(tmpdir(), "chain-node-keyring-"));
  homes.push(home);
  return home;
}

const password = (value: string) => () => Promise.resolve(value);
const noPassword = () => Promise.reject(new Error("no password should be asked"));

function assertKeyringError(code: KeyringError["code"], message?: RegExp) {
  return (error: unknown) => {
    assert.ok(error instanceof KeyringError, `a KeyringError, got ${String(error)}`);
    assert.equal(error.code, code, error.message);
    if (message !== undefined) assert.match(error.message, message);
    return true;
  };
}

describe("keyring", () => {
  it("creates keys/<name>.json, 0600 in a 0700 directory, leaving no temporary file", async () => {
    const home = newHome();
    const key = await createKey(home, "alice", hexToBytes(PRIVATE_KEY), "pw", LIGHT);
    assert.deepEqual(key, { name: "alice", address: ADDRESS, encrypted: true });
    const path = join(home, "keys", "alice.json");
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.equal(statSync(join(home, "keys")).mode & 0o777, 0o700);
    assert.deepEqual(readdirSync(join(home, "keys")), ["alice.json"]);
    assert.equal((JSON.parse(readFileSync(path, "utf8")) as { version: number }).version, 3);
  });

  it("lists and shows names and addresses without a password", async () => {
    const home = newHome();
    const bob = await createKey(home, "bob", randomPrivateKey(), "pw", LIGHT);
    await createKey(home, "alice", hexToBytes(PRIVATE_KEY), "pw", LIGHT);
    saveKey(homePaths(home).validatorKey, bytesToHex(randomPrivateKey()));
    writeFileSync(homePaths(home).nodeKey, '{"private_key":"0x01"}');
    const { keys, unreadable } = listKeys(home);
    assert.deepEqual(
      keys.map((k) => [k.name, k.encrypted]),
      [
        ["alice", true],
        ["bob", true],
        ["validator", false],
      ],
      "sorted by name; the plain validator key flagged; node_key.json is not an account key",
    );
    assert.deepEqual(unreadable, []);
    assert.deepEqual(showKey(home, "bob"), bob);
    assert.equal(showKey(home, "alice").address, ADDRESS);
  });

  it("never overwrites a key", async () => {
    const home = newHome();
    await createKey(home, "alice", hexToBytes(PRIVATE_KEY), "pw", LIGHT);
    const before = readFileSync(join(home, "keys", "alice.json"), "utf8");
    await assert.rejects(
      createKey(home, "alice", randomPrivateKey(), "pw", LIGHT),
      assertKeyringError("key_exists", /already exists/),
    );
    assert.equal(readFileSync(join(home, "keys", "alice.json"), "utf8"), before);
  });

  it("refuses names outside [A-Za-z0-9_-]{1,64} and the node key's", async () => {
    const home = newHome();
    for (const name of ["", "a b", "../x", "x.json", "é", "a".repeat(65), "node_key"]) {
      await assert.rejects(
        createKey(home, name, randomPrivateKey(), "pw", LIGHT),
        assertKeyringError("invalid_name"),
        JSON.stringify(name),
      );
      assert.throws(() => showKey(home, name), assertKeyringError("invalid_name"), JSON.stringify(name));
    }
    await createKey(home, `A-z_0${"9".repeat(59)}`, randomPrivateKey(), "pw", LIGHT);
  });

  it("unlocks with the right password and names the key on a wrong one", async () => {
    const home = newHome();
    await createKey(home, "alice", hexToBytes(PRIVATE_KEY), "right", LIGHT);
    const key = await unlockKey(home, "alice", password("right"));
    assert.equal(bytesToHex(key.privateKey), PRIVATE_KEY);
    await assert.rejects(
      unlockKey(home, "alice", password("wrong")),
      assertKeyringError("wrong_password", /^wrong password for key "alice" \(MAC mismatch\)$/),
    );
  });

  it("reports missing and corrupt files clearly", async () => {
    const home = newHome();
    await assert.rejects(unlockKey(home, "ghost", noPassword), assertKeyringError("key_not_found", /ghost/));
    assert.throws(() => showKey(home, "ghost"), assertKeyringError("key_not_found"));
    await createKey(home, "good", randomPrivateKey(), "pw", LIGHT);
    writeFileSync(join(home, "keys", "truncated.json"), '{"version":3,"crypto":');
    writeFileSync(join(home, "keys", "tampered.json"), '{"version":3,"id":"x","crypto":{"cipher":"rot13"}}');
    writeFileSync(join(home, "keys", "other.json"), '{"hello":"world"}');
    assert.throws(() => showKey(home, "truncated"), assertKeyringError("invalid_key_file", /not JSON/));
    assert.throws(
      () => showKey(home, "tampered"),
      assertKeyringError("invalid_key_file", /unsupported cipher/),
    );
    await assert.rejects(
      unlockKey(home, "other", noPassword),
      assertKeyringError("invalid_key_file", /neither/),
    );
    const { keys, unreadable } = listKeys(home);
    assert.deepEqual(
      keys.map((k) => k.name),
      ["good"],
    );
    assert.deepEqual(
      unreadable.map((u) => u.name),
      ["other", "tampered", "truncated"],
    );
  });

  it("names the next free key", async () => {
    const home = newHome();
    assert.equal(nextFreeKeyName(home), "key1");
    await createKey(home, "key1", randomPrivateKey(), "pw", LIGHT);
    assert.equal(nextFreeKeyName(home), "key2");
  });
});

describe("loadValidatorKey", () => {
  it("is undefined without a validator key (a full node)", async () => {
    assert.equal(await loadValidatorKey(homePaths(newHome()).validatorKey, noPassword), undefined);
  });

  it("reads a plain key file without asking a password", async () => {
    const home = newHome();
    saveKey(homePaths(home).validatorKey, PRIVATE_KEY);
    const key = await loadValidatorKey(homePaths(home).validatorKey, noPassword);
    assert.equal(key?.address, ADDRESS);
  });

  it("decrypts a keystore, naming the file on a wrong password", async () => {
    const home = newHome();
    await createKey(home, "validator", hexToBytes(PRIVATE_KEY), "pw", LIGHT);
    const path = homePaths(home).validatorKey;
    const key = await loadValidatorKey(path, password("pw"));
    assert.equal(key === undefined ? undefined : bytesToHex(key.privateKey), PRIVATE_KEY);
    await assert.rejects(
      loadValidatorKey(path, password("nope")),
      assertKeyringError("wrong_password", new RegExp(`wrong password for ${path.replaceAll(".", "\\.")}`)),
    );
  });
});

describe("keystoreScryptFor (CHAIN_NODE_TEST_KEYSTORE_SCRYPT_N)", () => {
  it("is the standard cost unless a test lowers n, and never above it", () => {
    assert.deepEqual(keystoreScryptFor(undefined), STANDARD_SCRYPT);
    assert.deepEqual(keystoreScryptFor(readTestFaults({}).keystoreScryptN), STANDARD_SCRYPT);
    const lowered = readTestFaults({ [TEST_FAULT_VARIABLES.keystoreScryptN]: "1024" }).keystoreScryptN;
    assert.deepEqual(keystoreScryptFor(lowered), { ...STANDARD_SCRYPT, n: 1024 });
    assert.throws(() => keystoreScryptFor(2 * STANDARD_SCRYPT.n), /above the standard/);
    for (const bad of ["1000", "1", "x"]) {
      assert.throws(
        () => readTestFaults({ [TEST_FAULT_VARIABLES.keystoreScryptN]: bad }),
        /power of two/,
        bad,
      );
    }
  });
});
