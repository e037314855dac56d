import { canonicalJson, keccak256, utf8Bytes } from "../crypto/index.ts";
import { equalBytes, parseHexBytes } from "./bytes.ts";
import { ProofVerificationError } from "./errors.ts";
import { normalizeRef } from "./ref.ts";
import { walkTrieProof } from "./trieProof.ts";
import type { Hash, JsonValue, ProofLeaf, ProofResult } from "./types.ts";

/**
 * Checking a `chain_getProof` answer without trusting the node that gave it. The state is
 * Ethereum's secure Merkle-Patricia trie (docs/decisions/008-state-commitment.md): the key of a
 * path is keccak256(utf8(path)) and its value utf8(canonical JSON), so a proof of one path is an
 * eth_getProof-style list of trie nodes, walked by trieProof.ts.
 */

/**
 * The value `result` proves to be at `result.ref` in the state whose root is `stateRoot` (take it
 * from a block header you trust: see getVerifiedValue): the JSON value, or null for a proven
 * absence. Checks that `result.value` is that value; for a subtree (`leaves` present), that `ref`
 * itself is proven not to be a leaf, that every leaf's proof verifies with its ref under `ref/`,
 * that leaves are sorted and unique, and that `value` is the object they rebuild. It cannot show
 * that a subtree lists all its leaves: keys are hashed, so leaves left out leave no trace.
 *
 * Synchronous: src/crypto's keccak256 answers at once, in WebAssembly once that is compiled and
 * in @noble/hashes before (or where WebAssembly is not allowed). Throws ProofVerificationError,
 * whose `reason` says what failed, for anything that does not check.
 */
export function verifyProof(stateRoot: Hash, result: ProofResult): JsonValue {
  const root = parseHexBytes(stateRoot);
  if (root?.length !== 32) throw new TypeError(`stateRoot must be 0x and 64 hex digits, not ${stateRoot}`);
  checkResultShape(result);
  if (result.state_root.toLowerCase() !== stateRoot.toLowerCase()) {
    throw new ProofVerificationError(
      "root_mismatch",
      `the result is of state root ${result.state_root}, not of ${stateRoot}`,
      result.ref,
    );
  }
  if (normalizeRef(result.ref) !== result.ref) {
    throw new ProofVerificationError(
      "malformed_result",
      "the result's ref is not a normalised path",
      result.ref,
    );
  }
  const proven = provenValue(root, result.ref, result.proof);
  if (result.leaves === undefined) {
    expectSameValue(result.value, proven, result.ref);
    return proven;
  }
  if (proven !== null) {
    throw new ProofVerificationError(
      "value_mismatch",
      "the proof shows a leaf here, yet the result lists leaves below it",
      result.ref,
    );
  }
  const rebuilt = verifyLeaves(root, result.ref, result.leaves);
  expectSameValue(result.value, rebuilt, result.ref);
  return rebuilt;
}

/** The value the proof shows at `ref`: the leaf's JSON, or null. */
function provenValue(root: Uint8Array, ref: string, proof: readonly string[]): JsonValue {
  const nodes = proof.map((hex, i) => {
    const bytes = parseHexBytes(hex);
    if (bytes === undefined || bytes.length === 0) {
      throw new ProofVerificationError(
        "malformed_result",
        `proof node ${i} is not 0x-prefixed hex bytes`,
        ref,
      );
    }
    return bytes;
  });
  let leaf: Uint8Array | null;
  try {
    leaf = walkTrieProof(root, keccak256(utf8Bytes(ref)), nodes);
  } catch (error) {
    // Name the path: in a subtree's result, which of the proofs failed.
    if (error instanceof ProofVerificationError && error.ref === undefined) {
      throw new ProofVerificationError(error.reason, error.message, ref);
    }
    throw error;
  }
  return leaf === null ? null : decodeLeafValue(leaf, ref);
}

/** Keeps a byte-order mark as a character, so JSON.parse refuses it instead of TextDecoder dropping it. */
const utf8Decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** A leaf's JSON. The node writes utf8(canonicalJson(value)): any other bytes are refused. */
function decodeLeafValue(bytes: Uint8Array, ref: string): JsonValue {
  let value: JsonValue;
  try {
    value = JSON.parse(utf8Decoder.decode(bytes)) as JsonValue;
  } catch {
    throw new ProofVerificationError("malformed_node", "the leaf's value is not UTF-8 JSON", ref);
  }
  if (!equalBytes(utf8Bytes(canonicalJson(value)), bytes)) {
    throw new ProofVerificationError("malformed_node", "the leaf's value is not in canonical JSON", ref);
  }
  return value;
}

/**
 * Verifies each leaf of a subtree and rebuilds the object they spread from (the state keeps
 * objects as leaves: `/u/a/x = 1` and `/u/a/y = "s"` are `{"x":1,"y":"s"}` at `/u/a`).
 */
function verifyLeaves(root: Uint8Array, ref: string, leaves: readonly ProofLeaf[]): JsonValue {
  const prefix = `${ref}/`;
  // Built without prototypes, so that a key such as `__proto__` is an ordinary member.
  const rebuilt: JsonRecord = Object.create(null) as JsonRecord;
  let previous: string | undefined;
  for (const leaf of leaves) {
    if (!leaf.ref.startsWith(prefix)) {
      throw new ProofVerificationError("ref_mismatch", `the leaf is not below ${ref}`, leaf.ref);
    }
    // Sorted as Array.prototype.sort sorts strings (UTF-16 code units), each ref once.
    if (previous !== undefined && !(previous < leaf.ref)) {
      throw new ProofVerificationError(
        "malformed_result",
        `the leaves are not sorted, or repeat one, after ${previous}`,
        leaf.ref,
      );
    }
    previous = leaf.ref;
    const segments = leaf.ref.slice(prefix.length).split("/");
    if (segments.includes(""))
      throw new ProofVerificationError("malformed_result", "a leaf path with an empty segment", leaf.ref);
    if (leaf.value === null || isJsonObject(leaf.value)) {
      throw new ProofVerificationError(
        "malformed_result",
        "a leaf is never null or an object (objects are spread into leaves)",
        leaf.ref,
      );
    }
    const proven = provenValue(root, leaf.ref, leaf.proof);
    if (proven === null)
      throw new ProofVerificationError("value_mismatch", "the proof shows no leaf here", leaf.ref);
    expectSameValue(leaf.value, proven, leaf.ref);
    placeLeaf(rebuilt, segments, proven, leaf.ref);
  }
  // Back to ordinary objects, as JSON.parse makes them (it keeps `__proto__` as an own member).
  return JSON.parse(canonicalJson(rebuilt)) as JsonValue;
}

type JsonRecord = Record<string, JsonValue>;

function placeLeaf(rebuilt: JsonRecord, segments: readonly string[], value: JsonValue, ref: string): void {
  let at = rebuilt;
  for (const [i, segment] of segments.entries()) {
    const existing = at[segment];
    if (i === segments.length - 1) {
      if (existing !== undefined) throw leafConflict(ref);
      at[segment] = value;
      return;
    }
    if (existing === undefined) {
      const made: JsonRecord = Object.create(null) as JsonRecord;
      at[segment] = made;
      at = made;
    } else if (isJsonObject(existing)) {
      at = existing;
    } else {
      throw leafConflict(ref);
    }
  }
}

/** The state never holds both a leaf and leaves below it (a write replaces the whole subtree). */
const leafConflict = (ref: string): ProofVerificationError =>
  new ProofVerificationError("malformed_result", "a leaf lies below another leaf of the result", ref);

const isJsonObject = (value: JsonValue): value is JsonRecord =>
  value !== null && typeof value === "object" && !Array.isArray(value);

function expectSameValue(stated: JsonValue, proven: JsonValue, ref: string): void {
  const statedJson = canonicalJson(stated);
  const provenJson = canonicalJson(proven);
  if (statedJson !== provenJson) {
    throw new ProofVerificationError(
      "value_mismatch",
      `the result states ${excerpt(statedJson)}, the proof shows ${excerpt(provenJson)}`,
      ref,
    );
  }
}

const EXCERPT_CHARS = 80;
const excerpt = (json: string): string =>
  json.length <= EXCERPT_CHARS ? json : `${json.slice(0, EXCERPT_CHARS)}… (${json.length} chars)`;

/** The members verification reads, checked before any is used: the result comes from an untrusted node. */
function checkResultShape(result: ProofResult): void {
  const bad = (what: string): ProofVerificationError =>
    new ProofVerificationError("malformed_result", `the result ${what}`);
  const record = result as unknown;
  if (record === null || typeof record !== "object") throw bad("is not an object");
  if (!Number.isSafeInteger(result.block_number) || result.block_number < 0) throw bad("has no block_number");
  if (!isHash(result.block_hash)) throw bad("has no block_hash of 32 bytes");
  if (!isHash(result.state_root)) throw bad("has no state_root of 32 bytes");
  if (typeof result.ref !== "string") throw bad("has no ref");
  if (!("value" in result)) throw bad("has no value");
  if (!isStringArray(result.proof)) throw bad("has no proof (an array of hex strings)");
  const leaves = result.leaves as unknown;
  if (leaves === undefined) return;
  if (!Array.isArray(leaves) || leaves.length === 0) throw bad("has leaves that are not a non-empty array");
  for (const [i, leaf] of (leaves as unknown[]).entries()) {
    const entry = leaf as Partial<ProofLeaf> | null;
    if (entry === null || typeof entry !== "object" || typeof entry.ref !== "string" || !("value" in entry)) {
      throw bad(`has a leaf ${i} without ref and value`);
    }
    if (!isStringArray(entry.proof)) throw bad(`has a leaf ${i} without a proof`);
  }
}

const isHash = (value: unknown): value is string =>
  typeof value === "string" && parseHexBytes(value)?.length === 32;

const isStringArray = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((item) => typeof item === "string");
