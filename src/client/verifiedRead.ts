import { hashBlockHeader } from "./blockHash.ts";
import { ProofVerificationError } from "./errors.ts";
import type { NodeMethods } from "./methods.ts";
import { verifyProof } from "./proof.ts";
import { normalizeRef } from "./ref.ts";
import type { Block, Hash, JsonValue } from "./types.ts";

export interface VerifiedReadOptions {
  /** The height to read at; omitted: the head (or the trusted block's height). */
  block_number?: number;
  /**
   * A block hash you trust (from your own node, a friend, an explorer): the answer is then proven
   * to be in that block's state, whatever the node you ask. Without it, the header is only checked
   * against itself, which a node lying consistently passes: compare `block_hash` elsewhere.
   */
  trusted_block_hash?: Hash;
}

/** A value proven to be at `ref` in the state of block `block_hash`. */
export interface VerifiedValue {
  /** The path, normalised (account segments in checksum form). */
  ref: string;
  /** The JSON value at `ref`, or null where the state holds nothing (a proven absence). */
  value: JsonValue;
  block_number: number;
  block_hash: Hash;
  state_root: Hash;
}

/**
 * Reads `ref` with its proof and checks it against a block header: the header must hash to its
 * own `hash` (and to `trusted_block_hash`, when given, in which case that block is fetched by
 * hash and sets the height), the proof must be of that block, its state root and the normalised
 * `ref`, and it must verify (verifyProof). Throws ProofVerificationError otherwise, and the
 * node's RpcError for a refused request (pruned or future height, a malformed path).
 */
export async function getVerifiedValue(
  methods: Pick<NodeMethods, "getProof" | "getBlockByNumber" | "getBlockByHash">,
  ref: string,
  options: VerifiedReadOptions = {},
): Promise<VerifiedValue> {
  const trusted = options.trusted_block_hash?.toLowerCase();
  let height = options.block_number;
  let header: Block | undefined;
  if (trusted !== undefined) {
    header = checkedHeader(await methods.getBlockByHash({ hash: trusted }), trusted, `block ${trusted}`);
    if (height !== undefined && header.number !== height) {
      throw mismatch(`the trusted block is block ${header.number}, not block ${height}`);
    }
    height = header.number;
  }
  const proof = await methods.getProof(height === undefined ? { ref } : { ref, block_number: height });
  if (height !== undefined && proof.block_number !== height) {
    throw mismatch(`the proof is of block ${proof.block_number}, not block ${height}`);
  }
  header ??= checkedHeader(
    await methods.getBlockByNumber({ number: proof.block_number }),
    undefined,
    `block ${proof.block_number}`,
  );
  if (header.number !== proof.block_number) {
    throw mismatch(`the header is of block ${header.number}, the proof of block ${proof.block_number}`);
  }
  if (!sameHash(proof.block_hash, header.hash)) {
    throw mismatch(`the proof names block ${proof.block_hash}, the header hashes to ${header.hash}`);
  }
  if (!sameHash(proof.state_root, header.state_root)) {
    throw mismatch(`the proof is of state root ${proof.state_root}, the header names ${header.state_root}`);
  }
  const expectedRef = normalizeRef(ref);
  if (proof.ref !== expectedRef) {
    throw new ProofVerificationError(
      "ref_mismatch",
      `the node answered for ${proof.ref}`,
      expectedRef ?? ref,
    );
  }
  const value = verifyProof(header.state_root, proof);
  return {
    ref: proof.ref,
    value,
    block_number: header.number,
    block_hash: header.hash.toLowerCase(),
    state_root: header.state_root.toLowerCase(),
  };
}

/** The header, once it hashes to its own `hash` and, if given, to the trusted hash. */
function checkedHeader(header: Block | null, trusted: string | undefined, what: string): Block {
  if (header === null) throw mismatch(`the node does not know ${what}`);
  const computed = hashBlockHeader(header);
  if (!sameHash(header.hash, computed)) {
    throw mismatch(`the header of ${what} hashes to ${computed}, not to its hash ${header.hash}`);
  }
  if (trusted !== undefined && computed !== trusted) {
    throw mismatch(`the header of ${what} hashes to ${computed}, not to the trusted ${trusted}`);
  }
  return header;
}

/** Hashes compare in any case; anything but a string (from a node that breaks the protocol) never matches. */
const sameHash = (a: unknown, b: unknown): boolean =>
  typeof a === "string" && typeof b === "string" && a.toLowerCase() === b.toLowerCase();

const mismatch = (message: string): ProofVerificationError =>
  new ProofVerificationError("header_mismatch", message);
