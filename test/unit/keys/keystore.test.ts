import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { bytesToHex, hexToBytes } from "../../../src/crypto/index.ts";
import {
  decryptKeystore,
  encryptKeystore,
  isKeystoreJson,
  KeystoreError,
  type KeystoreV3,
  keystoreAddress,
  parseKeystore,
} from "../../../src/node/index.ts";

/**
 * The test vectors of the Web3 Secret Storage Definition (ethereum.org, "Test vectors"; also
 * go-ethereum's accounts/keystore/testdata/v3_test_vector.json): password "testpassword".
 */
const VECTOR_PASSWORD = "testpassword";
const VECTOR_PRIVATE_KEY = "0x7a28b5ba57c53603b0b07b56bba752f7784bf506fa95edc395f5cf6c7514fe9d";
const VECTOR_ADDRESS = "0x008AeEda4D805471dF9b2A5B0f38A0C3bCBA786b";

const SCRYPT_VECTOR = {
  crypto: {
    cipher: "aes-128-ctr",
    cipherparams: { iv: "83dbcc02d8ccb40e466191a123791e0e" },
    ciphertext: "d172bf743a674da9cdad04534d56926ef8358534d458fffccd4e6ad2fbde479c",
    kdf: "scrypt",
    kdfparams: {
      dklen: 32,
      n: 262144,
      r: 1,
      p: 8,
      salt: "ab0c7876052600dd703518d6fc3fe8984592145b591fc8fb5c6d43190334ba19",
    },
    mac: "2103ac29920d71da29f15d75b4a16dbe95cfd7ff8faea1056c33131d846e3097",
  },
  id: "3198bc9c-6672-5ab3-d995-4942343ae5b6",
  version: 3,
};

const PBKDF2_VECTOR = {
  crypto: {
    cipher: "aes-128-ctr",
    cipherparams: { iv: "6087dab2f9fdbbfaddc31a909735c1e6" },
    ciphertext: "5318b4d5bcd28de64ee5559e671353e16f075ecae9f99c7a79a38af5f869aa46",
    kdf: "pbkdf2",
    kdfparams: {
      c: 262144,
      dklen: 32,
      prf: "hmac-sha256",
      salt: "ae3cd4e7013836a3df6bd7241b12db061dbe2c6785853cce422d148a624ce0bd",
    },
    mac: "517ead924a9d0dc3124507e3393d175ce3ff7c1e96529c6c555ce9e51205e9b2",
  },
  id: "3198bc9c-6672-5ab3-d995-4942343ae5b6",
  version: 3,
};

/** Cheap scrypt: these tests check the format, not the cost. */
const LIGHT = { n: 1024, r: 8, p: 1 };
const KEY = hexToBytes(VECTOR_PRIVATE_KEY);

async function rejectsWith(promise: Promise<unknown>, code: KeystoreError["code"], message?: RegExp) {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof KeystoreError, `a KeystoreError, got ${String(error)}`);
    assert.equal(error.code, code, error.message);
    if (message !== undefined) assert.match(error.message, message);
    return true;
  });
}

/** A deep copy with one field of `crypto` replaced. */
function withCrypto(keystore: KeystoreV3, crypto: Record<string, unknown>): unknown {
  const copy = structuredClone(keystore) as unknown as { crypto: Record<string, unknown> };
  Object.assign(copy.crypto, crypto);
  return copy;
}

/** Flips one hex digit at `index`. */
function flipHex(hex: string, index: number): string {
  const digit = hex[index] === "0" ? "1" : "0";
  return hex.slice(0, index) + digit + hex.slice(index + 1);
}

describe("keystore: spec test vectors", () => {
  it("decrypts the scrypt vector", async () => {
    const { privateKey, address } = await decryptKeystore(SCRYPT_VECTOR, VECTOR_PASSWORD);
    assert.equal(bytesToHex(privateKey), VECTOR_PRIVATE_KEY);
    assert.equal(address, VECTOR_ADDRESS);
  });

  it("decrypts the pbkdf2 vector", async () => {
    const { privateKey } = await decryptKeystore(PBKDF2_VECTOR, VECTOR_PASSWORD);
    assert.equal(bytesToHex(privateKey), VECTOR_PRIVATE_KEY);
  });

  it("rejects the pbkdf2 vector under another password", async () => {
    await rejectsWith(decryptKeystore(PBKDF2_VECTOR, "testpassword!"), "wrong_password", /MAC mismatch/);
  });

  it("reads upper-case hex the same", async () => {
    const upper = withCrypto(parseKeystore(PBKDF2_VECTOR), { mac: PBKDF2_VECTOR.crypto.mac.toUpperCase() });
    const { privateKey } = await decryptKeystore(upper, VECTOR_PASSWORD);
    assert.equal(bytesToHex(privateKey), VECTOR_PRIVATE_KEY);
  });
});

describe("keystore: encrypt and decrypt", () => {
  it("round-trips a key and records its address and scrypt parameters", async () => {
    const keystore = await encryptKeystore(KEY, "correct horse", LIGHT);
    assert.equal(keystore.version, 3);
    assert.equal(keystore.crypto.kdf, "scrypt");
    assert.deepEqual(
      { ...keystore.crypto.kdfparams, salt: undefined },
      { dklen: 32, ...LIGHT, salt: undefined },
    );
    assert.equal(keystoreAddress(keystore), VECTOR_ADDRESS);
    assert.ok(!JSON.stringify(keystore).includes(VECTOR_PRIVATE_KEY.slice(2)), "the key is not in clear");
    const { privateKey, address } = await decryptKeystore(
      JSON.parse(JSON.stringify(keystore)),
      "correct horse",
    );
    assert.equal(bytesToHex(privateKey), VECTOR_PRIVATE_KEY);
    assert.equal(address, VECTOR_ADDRESS);
  });

  it("uses a fresh salt, iv and id each time", async () => {
    const [a, b] = await Promise.all([encryptKeystore(KEY, "pw", LIGHT), encryptKeystore(KEY, "pw", LIGHT)]);
    assert.notEqual(a.id, b.id);
    assert.notEqual(a.crypto.kdfparams.salt, b.crypto.kdfparams.salt);
    assert.notEqual(a.crypto.cipherparams.iv, b.crypto.cipherparams.iv);
    assert.notEqual(a.crypto.ciphertext, b.crypto.ciphertext);
  });

  it("defaults to the standard scrypt cost", async () => {
    const keystore = await encryptKeystore(KEY, "pw");
    assert.deepEqual(
      { ...keystore.crypto.kdfparams, salt: "" },
      { dklen: 32, n: 262144, r: 8, p: 1, salt: "" },
    );
  });

  it("rejects a wrong password", async () => {
    const keystore = await encryptKeystore(KEY, "right", LIGHT);
    await rejectsWith(
      decryptKeystore(keystore, "wrong"),
      "wrong_password",
      /^wrong password \(MAC mismatch\)$/,
    );
    await rejectsWith(decryptKeystore(keystore, ""), "wrong_password");
  });

  it("rejects a tampered ciphertext, MAC or salt (the MAC cannot tell them from a wrong password)", async () => {
    const keystore = await encryptKeystore(KEY, "pw", LIGHT);
    const { ciphertext, mac, kdfparams } = keystore.crypto;
    for (const [field, tampered] of [
      ["ciphertext", withCrypto(keystore, { ciphertext: flipHex(ciphertext, 10) })],
      ["mac", withCrypto(keystore, { mac: flipHex(mac, 0) })],
      ["salt", withCrypto(keystore, { kdfparams: { ...kdfparams, salt: flipHex(kdfparams.salt, 5) } })],
    ] as const) {
      await assert.rejects(decryptKeystore(tampered, "pw"), /MAC mismatch/, `tampered ${field}`);
    }
  });

  it("rejects an address field that is not the key's", async () => {
    const keystore = await encryptKeystore(KEY, "pw", LIGHT);
    const forged = { ...keystore, address: "00".repeat(20) };
    await rejectsWith(decryptKeystore(forged, "pw"), "invalid_keystore", /does not match its key/);
  });

  it("refuses to encrypt an invalid private key", async () => {
    await rejectsWith(encryptKeystore(new Uint8Array(32), "pw", LIGHT), "invalid_private_key");
    await rejectsWith(encryptKeystore(new Uint8Array(31).fill(1), "pw", LIGHT), "invalid_private_key");
  });
});

describe("keystore: shape checks", () => {
  const base = parseKeystore(SCRYPT_VECTOR);
  const cases: [string, unknown, RegExp][] = [
    ["not an object", "x", /version 3/],
    ["version 1", { ...base, version: 1 }, /version 3/],
    ["no crypto", { version: 3, id: "x" }, /crypto/],
    ["cbc cipher", withCrypto(base, { cipher: "aes-128-cbc" }), /unsupported cipher/],
    ["unknown kdf", withCrypto(base, { kdf: "argon2" }), /unsupported kdf/],
    ["short iv", withCrypto(base, { cipherparams: { iv: "00" } }), /iv must be 16 bytes/],
    ["non-hex ciphertext", withCrypto(base, { ciphertext: "zz".repeat(32) }), /ciphertext/],
    ["dklen 16", withCrypto(base, { kdfparams: { ...base.crypto.kdfparams, dklen: 16 } }), /dklen/],
    ["n not a power of two", withCrypto(base, { kdfparams: { ...base.crypto.kdfparams, n: 1000 } }), /power/],
    ["absurd n", withCrypto(base, { kdfparams: { ...base.crypto.kdfparams, n: 2 ** 30 } }), /exceeds/],
    ["r missing", withCrypto(base, { kdfparams: { ...base.crypto.kdfparams, r: undefined } }), /positive/],
    [
      "pbkdf2 with sha1",
      withCrypto(parseKeystore(PBKDF2_VECTOR), {
        kdfparams: { c: 1, dklen: 32, prf: "hmac-sha1", salt: "00" },
      }),
      /prf/,
    ],
  ];
  for (const [name, value, message] of cases) {
    it(`rejects ${name} before any key derivation`, async () => {
      assert.throws(() => parseKeystore(value), message);
      await rejectsWith(decryptKeystore(value, VECTOR_PASSWORD), "invalid_keystore", message);
    });
  }

  it("tells a keystore from a plain key file", () => {
    assert.equal(isKeystoreJson(SCRYPT_VECTOR), true);
    assert.equal(isKeystoreJson({ address: VECTOR_ADDRESS, private_key: VECTOR_PRIVATE_KEY }), false);
    assert.equal(isKeystoreJson(null), false);
  });
});
