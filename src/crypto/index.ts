/**
 * crypto: pure primitives — hex, keccak256, canonical JSON, secp256k1 sign/recover,
 * EIP-55 addresses, the AIN 97-byte signature format, mnemonic derivation.
 * Owns no state and imports nothing else from src/.
 */
export { isAddress, privateKeyToAddress, toChecksumAddress } from "./address.ts";
export { canonicalJson } from "./canonicalJson.ts";
export { bytesToHex, hexToBytes, isHex } from "./hex.ts";
export { keccak256, keccakBackend, keccakHex, keccakReady, keccakText, utf8Bytes } from "./keccak.ts";
export { type DerivedAccount, deriveAccounts } from "./mnemonic.ts";
export {
  isLowS,
  isValidPrivateKey,
  recoverPublicKey,
  SECP256K1_BACKEND,
} from "./secp256k1.ts";
export {
  checkSignedHash,
  inlineVerifier,
  type SignatureVerifier,
  type SignedHashJob,
  type SignedHashResult,
  type VerifyLane,
} from "./signedHash.ts";
export {
  decodeV,
  encodeV,
  hashCanonical,
  hashObject,
  MAX_CHAIN_ID,
  recoverSigner,
  type SignatureCheck,
  signHash,
  signObject,
} from "./signature.ts";
