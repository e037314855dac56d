import { Wallet } from "@ethereumjs/wallet";
import { isHex, isValidPrivateKey, privateKeyToAddress, toChecksumAddress } from "../crypto/index.ts";

/**
 * Web3 Secret Storage v3 keystores (the geth/ethereumjs format): a private key encrypted with
 * AES-128-CTR under a key derived from a password by scrypt (pbkdf2 is read too), authenticated by
 * keccak256(derivedKey[16..32] ‖ ciphertext). The cryptography is @ethereumjs/wallet's, on the
 * audited ethereum-cryptography primitives; this file only checks shapes, so a hostile or broken
 * file fails with a clear message, and gives each failure a stable code.
 */

export interface ScryptParams {
  /** CPU/memory cost, a power of two. */
  n: number;
  r: number;
  p: number;
}

/** geth's and ethereumjs's "standard" cost: 256 MiB and about 2 s per derivation here. */
export const STANDARD_SCRYPT: ScryptParams = { n: 262_144, r: 8, p: 1 };

/**
 * The most work a file may ask for (n·r·p, 8× the standard): a keystore from elsewhere with absurd
 * parameters would otherwise hang the command.
 */
const MAX_SCRYPT_WORK = 2 ** 24;
const MAX_PBKDF2_ROUNDS = 2 ** 24;

interface ScryptKdfParams {
  dklen: number;
  n: number;
  r: number;
  p: number;
  salt: string;
}

interface Pbkdf2KdfParams {
  dklen: number;
  c: number;
  prf: "hmac-sha256";
  salt: string;
}

/** A v3 keystore with its hex fields lowercased (ethereumjs compares the MAC as a string). */
export interface KeystoreV3 {
  version: 3;
  id: string;
  /** Lowercase hex without `0x`, as geth writes it. Optional in the spec; always written here. */
  address?: string;
  crypto: {
    cipher: "aes-128-ctr";
    cipherparams: { iv: string };
    ciphertext: string;
    kdf: "scrypt" | "pbkdf2";
    kdfparams: ScryptKdfParams | Pbkdf2KdfParams;
    mac: string;
  };
}

const KEYSTORE_ERROR_CODES = ["wrong_password", "invalid_keystore", "invalid_private_key"] as const;
export type KeystoreErrorCode = (typeof KEYSTORE_ERROR_CODES)[number];

export class KeystoreError extends Error {
  readonly code: KeystoreErrorCode;

  constructor(code: KeystoreErrorCode, message: string) {
    super(message);
    this.name = "KeystoreError";
    this.code = code;
  }
}

/** A private key as a keystore whose password is `password`; random salt, iv and id. */
export async function encryptKeystore(
  privateKey: Uint8Array,
  password: string,
  scrypt: ScryptParams = STANDARD_SCRYPT,
): Promise<KeystoreV3> {
  if (privateKey.length !== 32 || !isValidPrivateKey(privateKey)) {
    throw new KeystoreError("invalid_private_key", "not a valid secp256k1 private key");
  }
  checkScrypt(scrypt);
  const json = await Wallet.fromPrivateKey(privateKey).toV3(password, { kdf: "scrypt", ...scrypt });
  return parseKeystore(json);
}

/**
 * The private key inside a keystore. A wrong password and an altered file look the same (the MAC
 * does not match): both are `wrong_password`.
 */
export async function decryptKeystore(
  value: unknown,
  password: string,
): Promise<{ address: string; privateKey: Uint8Array }> {
  const keystore = parseKeystore(value);
  let wallet: Wallet;
  try {
    wallet = await Wallet.fromV3(JSON.stringify(keystore), password);
  } catch (error) {
    const message = (error as Error).message;
    // ethereumjs signals a MAC mismatch only by this message; anything else is a file it cannot use.
    if (/wrong passphrase/i.test(message)) {
      throw new KeystoreError("wrong_password", "wrong password (MAC mismatch)");
    }
    throw new KeystoreError("invalid_keystore", `cannot decrypt: ${message}`);
  }
  const privateKey = wallet.getPrivateKey();
  const address = privateKeyToAddress(privateKey);
  // `keys list` trusts the address field without a password, so it must be the key's.
  if (keystore.address !== undefined && `0x${keystore.address}` !== address.toLowerCase()) {
    throw new KeystoreError(
      "invalid_keystore",
      `its address field 0x${keystore.address} does not match its key (${address})`,
    );
  }
  return { address, privateKey };
}

/** Whether a parsed JSON file claims to be a v3 keystore (then `parseKeystore` checks it). */
export function isKeystoreJson(value: unknown): boolean {
  return isObject(value) && value.version === 3 && ("crypto" in value || "Crypto" in value);
}

/** The EIP-55 address a keystore records, if it records one. */
export function keystoreAddress(keystore: KeystoreV3): string | undefined {
  return keystore.address === undefined ? undefined : toChecksumAddress(`0x${keystore.address}`);
}

/** Checks every field a decryption reads; throws `invalid_keystore` naming the first bad one. */
export function parseKeystore(value: unknown): KeystoreV3 {
  if (!isObject(value) || value.version !== 3) invalid("not a version 3 keystore");
  // geth reads "Crypto" too (files written by its early versions).
  const crypto = value.crypto ?? value.Crypto;
  if (!isObject(crypto)) invalid("no crypto section");
  if (typeof value.id !== "string") invalid("no id");
  if (crypto.cipher !== "aes-128-ctr") invalid(`unsupported cipher ${String(crypto.cipher)}`);
  const cipherparams = crypto.cipherparams;
  if (!isObject(cipherparams)) invalid("no cipherparams");
  const address = value.address === undefined ? undefined : hexField("address", value.address, 20);
  return {
    version: 3,
    id: value.id,
    ...(address === undefined ? {} : { address }),
    crypto: {
      cipher: "aes-128-ctr",
      cipherparams: { iv: hexField("cipherparams.iv", cipherparams.iv, 16) },
      ciphertext: hexField("ciphertext", crypto.ciphertext, 32),
      kdf: crypto.kdf === "pbkdf2" ? "pbkdf2" : "scrypt",
      kdfparams: parseKdfParams(crypto.kdf, crypto.kdfparams),
      mac: hexField("mac", crypto.mac, 32),
    },
  };
}

function parseKdfParams(kdf: unknown, params: unknown): ScryptKdfParams | Pbkdf2KdfParams {
  if (!isObject(params)) invalid("no kdfparams");
  // 32 bytes: 16 for the AES key, 16 for the MAC.
  if (params.dklen !== 32) invalid("kdfparams.dklen must be 32");
  const salt = hexField("kdfparams.salt", params.salt);
  if (kdf === "scrypt") {
    const { n, r, p } = params;
    if (!isPositiveInteger(n) || !isPositiveInteger(r) || !isPositiveInteger(p)) {
      invalid("kdfparams n, r and p must be positive integers");
    }
    checkScrypt({ n, r, p });
    return { dklen: 32, n, r, p, salt };
  }
  if (kdf === "pbkdf2") {
    if (params.prf !== "hmac-sha256") invalid(`unsupported pbkdf2 prf ${String(params.prf)}`);
    const c = params.c;
    if (!isPositiveInteger(c) || c > MAX_PBKDF2_ROUNDS) {
      invalid(`kdfparams.c must be an integer from 1 to ${MAX_PBKDF2_ROUNDS}`);
    }
    return { dklen: 32, c, prf: "hmac-sha256", salt };
  }
  return invalid(`unsupported kdf ${String(kdf)}`);
}

function checkScrypt({ n, r, p }: ScryptParams): void {
  if (!Number.isInteger(n) || n < 2 || (n & (n - 1)) !== 0) invalid("scrypt n must be a power of two");
  if (!Number.isInteger(r) || r < 1 || !Number.isInteger(p) || p < 1) invalid("scrypt r and p must be ≥ 1");
  if (n * r * p > MAX_SCRYPT_WORK) invalid(`scrypt n·r·p exceeds ${MAX_SCRYPT_WORK}`);
}

function hexField(name: string, value: unknown, byteLength?: number): string {
  const hex = typeof value === "string" ? (value.startsWith("0x") ? value : `0x${value}`) : "";
  if (!isHex(hex, byteLength) || hex.length === 2) {
    invalid(`${name} must be ${byteLength === undefined ? "" : `${byteLength} bytes of `}hex`);
  }
  return hex.slice(2).toLowerCase();
}

function invalid(detail: string): never {
  throw new KeystoreError("invalid_keystore", detail);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isPositiveInteger(value: unknown): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= 1;
}
