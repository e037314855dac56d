import { randomBytes } from "node:crypto";
import {
  chmodSync,
  closeSync,
  existsSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { isValidPrivateKey } from "../crypto/index.ts";
import {
  decryptKeystore,
  encryptKeystore,
  isKeystoreJson,
  KeystoreError,
  type KeystoreV3,
  keystoreAddress,
  parseKeystore,
  STANDARD_SCRYPT,
  type ScryptParams,
} from "./keystore.ts";
import { homePaths, loadKey } from "./home.ts";

/**
 * The named keys of a home, one file each: `<home>/keys/<name>.json`. `keys new`/`keys import` write
 * Web3 Secret Storage v3 keystores; the plain `{address, private_key}` files that `init`, `testnet`
 * and `dev` write for validators are listed and exported too, flagged as unencrypted. Reading an
 * address never needs a password: it comes from the file's `address` field.
 */

const KEY_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
/** The libp2p identity of the node lives beside the keys but is not an account key. */
const NODE_KEY_NAME = "node_key";

const KEYRING_ERROR_CODES = [
  "invalid_name",
  "key_exists",
  "key_not_found",
  "invalid_key_file",
  "wrong_password",
] as const;
export type KeyringErrorCode = (typeof KEYRING_ERROR_CODES)[number];

export class KeyringError extends Error {
  readonly code: KeyringErrorCode;

  constructor(code: KeyringErrorCode, message: string) {
    super(message);
    this.name = "KeyringError";
    this.code = code;
  }
}

export interface KeyInfo {
  name: string;
  /** EIP-55. */
  address: string;
  /** False for a plain key file (validator keys written by `init`, `testnet`, `dev`). */
  encrypted: boolean;
}

export interface UnlockedKey {
  address: string;
  privateKey: Uint8Array;
}

/** Asked only when the key is encrypted. */
export type PasswordSource = () => Promise<string>;

function keyFilePath(home: string, name: string): string {
  return join(homePaths(home).keys, `${name}.json`);
}

/** Throws `invalid_name` unless `name` can name a key file. */
function validateKeyName(name: string): void {
  if (!KEY_NAME_PATTERN.test(name)) {
    throw new KeyringError("invalid_name", `invalid key name "${name}": use 1 to 64 of A-Z a-z 0-9 _ -`);
  }
  if (name === NODE_KEY_NAME) {
    throw new KeyringError(
      "invalid_name",
      `"${NODE_KEY_NAME}" is reserved: it is the node's libp2p identity`,
    );
  }
}

/** Throws unless `name` is valid and free: called before asking for a password. */
export function assertKeyNameFree(home: string, name: string): void {
  validateKeyName(name);
  const path = keyFilePath(home, name);
  if (existsSync(path)) {
    throw new KeyringError(
      "key_exists",
      `a key named "${name}" already exists (${path}); choose another name`,
    );
  }
}

/** The first of key1, key2, … with no file yet. */
export function nextFreeKeyName(home: string): string {
  for (let i = 1; ; i++) {
    if (!existsSync(keyFilePath(home, `key${i}`))) return `key${i}`;
  }
}

/** Every key of a home, by name; files that cannot be read are reported beside them, not thrown. */
export function listKeys(home: string): { keys: KeyInfo[]; unreadable: { name: string; reason: string }[] } {
  const dir = homePaths(home).keys;
  const names = existsSync(dir)
    ? readdirSync(dir)
        .filter((file) => file.endsWith(".json"))
        .map((file) => file.slice(0, -".json".length))
        .filter((name) => KEY_NAME_PATTERN.test(name) && name !== NODE_KEY_NAME)
        .sort()
    : [];
  const keys: KeyInfo[] = [];
  const unreadable: { name: string; reason: string }[] = [];
  for (const name of names) {
    try {
      keys.push(showKey(home, name));
    } catch (error) {
      unreadable.push({ name, reason: (error as Error).message });
    }
  }
  return { keys, unreadable };
}

/** A key's address from its file, without a password. */
export function showKey(home: string, name: string): KeyInfo {
  validateKeyName(name);
  const path = keyFilePath(home, name);
  const file = readKeyFile(path, `key "${name}"`);
  if (file.kind === "plain") return { name, address: file.key.address, encrypted: false };
  const address = keystoreAddress(file.keystore);
  if (address === undefined) {
    throw new KeyringError("invalid_key_file", `${path} records no address (keys export shows its key)`);
  }
  return { name, address, encrypted: true };
}

/** Encrypts `privateKey` under `password` as the new key `name`. */
export async function createKey(
  home: string,
  name: string,
  privateKey: Uint8Array,
  password: string,
  scrypt: ScryptParams = STANDARD_SCRYPT,
): Promise<KeyInfo> {
  assertKeyNameFree(home, name);
  const keystore = await encryptKeystore(privateKey, password, scrypt);
  const { address } = saveKeystoreFile(keyFilePath(home, name), keystore);
  return { name, address, encrypted: true };
}

/** The private key of a named key, asking `password` if the file is encrypted. */
export function unlockKey(home: string, name: string, password: PasswordSource): Promise<UnlockedKey> {
  validateKeyName(name);
  return unlockKeyFile(keyFilePath(home, name), `key "${name}"`, password);
}

/**
 * The validator key of a home for `start`: a v3 keystore (asking `password`) or a plain key file;
 * undefined when there is none (a full node).
 */
export async function loadValidatorKey(
  path: string,
  password: PasswordSource,
): Promise<UnlockedKey | undefined> {
  if (!existsSync(path)) return undefined;
  return unlockKeyFile(path, path, password);
}

/** Writes a keystore as a new key file; `key_exists` if the name is taken, even by a racing writer. */
export function saveKeystoreFile(path: string, keystore: KeystoreV3): { address: string } {
  const address = keystoreAddress(keystore);
  if (address === undefined)
    throw new KeyringError("invalid_key_file", "a keystore to save must record its address");
  writeNewFile(path, `${JSON.stringify(keystore, null, 2)}\n`);
  return { address };
}

/** A random valid secp256k1 private key. */
export function randomPrivateKey(): Uint8Array {
  for (;;) {
    const key = new Uint8Array(randomBytes(32));
    if (isValidPrivateKey(key)) return key;
  }
}

/**
 * The scrypt cost for new keystores: the standard one unless a test lowers `n`
 * (CHAIN_NODE_TEST_KEYSTORE_SCRYPT_N, src/faults; docs/keys.md): a cheap keystore is as cheap to
 * brute-force.
 */
export function keystoreScryptFor(testN: number | undefined): ScryptParams {
  if (testN === undefined) return STANDARD_SCRYPT;
  if (testN > STANDARD_SCRYPT.n) {
    throw new Error(`the test keystore cost n=${testN} is above the standard ${STANDARD_SCRYPT.n}`);
  }
  return { ...STANDARD_SCRYPT, n: testN };
}

type KeyFileContent =
  | { kind: "keystore"; keystore: KeystoreV3 }
  | { kind: "plain"; key: { address: string; privateKey: Uint8Array } };

function readKeyFile(path: string, label: string): KeyFileContent {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") {
      throw new KeyringError("key_not_found", `no ${label}: ${path} does not exist`);
    }
    throw new KeyringError("invalid_key_file", `cannot read ${path}: ${(error as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new KeyringError("invalid_key_file", `${path} is not JSON (corrupt key file?)`);
  }
  if (isKeystoreJson(json)) {
    try {
      return { kind: "keystore", keystore: parseKeystore(json) };
    } catch (error) {
      throw new KeyringError(
        "invalid_key_file",
        `${path} is not a valid keystore: ${(error as Error).message}`,
      );
    }
  }
  if (typeof json === "object" && json !== null && "private_key" in json) {
    try {
      const key = loadKey(path);
      if (key !== undefined) return { kind: "plain", key };
    } catch (error) {
      throw new KeyringError("invalid_key_file", (error as Error).message);
    }
  }
  throw new KeyringError("invalid_key_file", `${path} is neither a v3 keystore nor a plain key file`);
}

async function unlockKeyFile(path: string, label: string, password: PasswordSource): Promise<UnlockedKey> {
  const file = readKeyFile(path, label);
  if (file.kind === "plain") return file.key;
  try {
    return await decryptKeystore(file.keystore, await password());
  } catch (error) {
    if (!(error instanceof KeystoreError)) throw error;
    if (error.code === "wrong_password") {
      throw new KeyringError("wrong_password", `wrong password for ${label} (MAC mismatch)`);
    }
    throw new KeyringError("invalid_key_file", `${path}: ${error.message}`);
  }
}

/**
 * Creates `path` with `content`, mode 0600 in a 0700 directory, never replacing a file: the content
 * is written and fsynced under a temporary name, then hard-linked to `path`, which fails if `path`
 * exists. A crash leaves either no key file or a complete one.
 */
function writeNewFile(path: string, content: string): void {
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const temp = join(dir, `.${basename(path)}.${randomBytes(6).toString("hex")}.tmp`);
  const fd = openSync(temp, "wx", 0o600);
  try {
    writeSync(fd, content);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(temp, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") {
      throw new KeyringError("key_exists", `${path} already exists; a key file is never overwritten`);
    }
    throw error;
  } finally {
    unlinkSync(temp);
  }
  const dirFd = openSync(dir, "r");
  try {
    fsyncSync(dirFd);
  } finally {
    closeSync(dirFd);
  }
}
