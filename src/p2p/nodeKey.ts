import { generateKeyPairSync } from "node:crypto";
import { privateKeyFromProtobuf, privateKeyFromRaw, privateKeyToProtobuf } from "@libp2p/crypto/keys";
import type { PrivateKey } from "@libp2p/interface";
import { peerIdFromPrivateKey } from "@libp2p/peer-id";
import { P2pError } from "./errors.ts";

/**
 * A new node identity: an Ed25519 key in libp2p's protobuf encoding (the format IPFS and other
 * libp2p nodes store), so the bytes say which key type they hold. The caller persists them.
 * Synchronous: node:crypto generates the key (libp2p's own generator is async).
 */
export function generateNodeKey(): Uint8Array {
  const { privateKey } = generateKeyPairSync("ed25519");
  const jwk = privateKey.export({ format: "jwk" });
  if (jwk.d === undefined || jwk.x === undefined) {
    throw new P2pError("invalid_argument", "node:crypto returned an Ed25519 key without d/x");
  }
  // libp2p's raw Ed25519 private key is seed ‖ public key (64 bytes).
  const raw = new Uint8Array(64);
  raw.set(Buffer.from(jwk.d, "base64url"), 0);
  raw.set(Buffer.from(jwk.x, "base64url"), 32);
  return privateKeyToProtobuf(privateKeyFromRaw(raw));
}

/** Decodes node key bytes; throws `P2pError("invalid_argument")` when they are not a key. */
export function decodeNodeKey(nodeKey: Uint8Array): PrivateKey {
  try {
    return privateKeyFromProtobuf(nodeKey);
  } catch (err) {
    throw new P2pError("invalid_argument", "node key is not a libp2p protobuf private key", { cause: err });
  }
}

/** The peer id string (base58 multihash, `12D3KooW…` for Ed25519) of a node key. */
export function peerIdOf(nodeKey: Uint8Array): string {
  return peerIdFromPrivateKey(decodeNodeKey(nodeKey)).toString();
}
