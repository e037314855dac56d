import { canonicalJson } from "./canonicalJson.ts";
import { bytesToHex } from "./hex.ts";
import { keccak256, keccakText } from "./keccak.ts";
import { publicKeyToAddress } from "./address.ts";
import { isLowS, recoverPublicKey, signHashRecoverable } from "./secp256k1.ts";

/**
 * The AIN signature format (compatible with @ainblockchain/ain-util's ecSignTransaction):
 * 97 bytes = hash(32) ‖ r(32) ‖ s(32) ‖ v(1), with v = 27 + recid on chain 0 and
 * 35 + 2·chainId + recid otherwise. v is one byte, so chain ids run 0..109.
 */
const SIGNATURE_BYTES = 97;
export const MAX_CHAIN_ID = 109;

/** keccak256(keccak256(utf8(canonical JSON))): the hash of a transaction body or a vote. */
export function hashCanonical(canonical: string): Uint8Array {
  return keccak256(keccakText(canonical));
}

export function hashObject(body: unknown): string {
  return bytesToHex(hashCanonical(canonicalJson(body)));
}

export function encodeV(chainId: number, recid: number): number {
  return chainId === 0 ? 27 + recid : 35 + 2 * chainId + recid;
}

/** The chain id and recovery id a v byte encodes, or undefined for a v no chain uses. */
export function decodeV(v: number): { chainId: number; recid: number } | undefined {
  if (v === 27 || v === 28) return { chainId: 0, recid: v - 27 };
  if (v >= 35 && v <= 255) return { chainId: (v - 35) >> 1, recid: (v - 35) & 1 };
  return undefined;
}

export function signHash(hash32: Uint8Array, privateKey: Uint8Array, chainId: number): string {
  const { compact, recid } = signHashRecoverable(hash32, privateKey);
  const out = new Uint8Array(SIGNATURE_BYTES);
  out.set(hash32, 0);
  out.set(compact, 32);
  out[96] = encodeV(chainId, recid);
  return bytesToHex(out);
}

/** Signs the canonical form of `body` (a transaction body or a consensus message). */
export function signObject(body: unknown, privateKey: Uint8Array, chainId: number): string {
  return signHash(hashCanonical(canonicalJson(body)), privateKey, chainId);
}

/**
 * The 97 bytes of a `0x`-prefixed hex signature, or undefined if it is not exactly that. Node's
 * hex decoder stops at the first pair that is not hex, so a full-length result proves every pair
 * was: one pass instead of a pattern test and a decode (and no copy), on every signature checked.
 */
function signatureBytes(signature: string): Uint8Array | undefined {
  if (signature.length !== 2 + 2 * SIGNATURE_BYTES || signature[0] !== "0" || signature[1] !== "x")
    return undefined;
  const bytes = Buffer.from(signature.slice(2), "hex");
  return bytes.length === SIGNATURE_BYTES ? bytes : undefined;
}

export type SignatureCheck =
  | { ok: true; signer: string }
  | { ok: false; reason: "invalid_signature" | "hash_mismatch" | "wrong_chain_id" };

/**
 * Verifies a 97-byte signature against the expected hash and chain id and recovers the signer.
 * Order of checks: layout, embedded hash, chain id, low-s, recovery.
 */
export function recoverSigner(signature: string, expectedHash: Uint8Array, chainId: number): SignatureCheck {
  const bytes = signatureBytes(signature);
  if (bytes === undefined) return { ok: false, reason: "invalid_signature" };
  if (Buffer.compare(bytes.subarray(0, 32), expectedHash) !== 0)
    return { ok: false, reason: "hash_mismatch" };
  const decoded = decodeV(bytes[96] as number);
  if (decoded === undefined) return { ok: false, reason: "invalid_signature" };
  if (decoded.chainId !== chainId) return { ok: false, reason: "wrong_chain_id" };
  const compact = bytes.subarray(32, 96);
  if (!isLowS(compact)) return { ok: false, reason: "invalid_signature" };
  const publicKey = recoverPublicKey(expectedHash, compact, decoded.recid);
  if (publicKey === undefined) return { ok: false, reason: "invalid_signature" };
  return { ok: true, signer: publicKeyToAddress(publicKey) };
}
