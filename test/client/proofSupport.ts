import { createMerkleProof, createMPT, type MerklePatriciaTrie } from "@ethereumjs/mpt";
import { bytesToHex, canonicalJson, utf8Bytes } from "../../src/crypto/index.ts";
import type { JsonValue, ProofLeaf, ProofResult } from "../../src/client/index.ts";

/**
 * States for the verifier's tests, built with @ethereumjs/mpt (`useKeyHashing: true`), the
 * reference implementation of the node's state trie (docs/decisions/008): independent of both
 * the node's trie code and the verifier under test. Proof results are made as the node makes
 * them (/work/issue18-api.md shape): a leaf, a subtree with its leaves, or an absence.
 */

export interface TestState {
  trie: MerklePatriciaTrie;
  /** Leaf path → value, as the state keeps them (objects spread into leaves). */
  leaves: Map<string, JsonValue>;
  /** `0x` root hash. */
  root: string;
}

/** Stores each leaf as the node does: key keccak256(utf8(path)), value utf8(canonicalJson(value)). */
export async function buildState(leaves: Iterable<readonly [string, JsonValue]>): Promise<TestState> {
  const trie = await createMPT({ useKeyHashing: true });
  const stored = new Map<string, JsonValue>();
  for (const [path, value] of leaves) {
    await trie.put(utf8Bytes(path), utf8Bytes(canonicalJson(value)));
    stored.set(path, value);
  }
  return { trie, leaves: stored, root: bytesToHex(trie.root()) };
}

/** Spreads `value` into leaves below `path`, as the state does: objects become their members' leaves. */
export function spreadLeaves(
  path: string,
  value: JsonValue,
  into: Map<string, JsonValue> = new Map(),
): Map<string, JsonValue> {
  if (value !== null && typeof value === "object" && !Array.isArray(value)) {
    for (const [key, member] of Object.entries(value)) spreadLeaves(`${path}/${key}`, member, into);
  } else if (value !== null) {
    into.set(path, value);
  }
  return into;
}

export async function proofNodes(state: TestState, path: string): Promise<string[]> {
  return (await createMerkleProof(state.trie, utf8Bytes(path))).map(bytesToHex);
}

/** A stand-in block hash: the verifier checks it only against a header, never on its own. */
export const BLOCK_HASH = `0x${"ab".repeat(32)}`;

/** What chain_getProof answers for `ref` (already normalised) in `state`. */
export async function proofResult(state: TestState, ref: string): Promise<ProofResult> {
  const base = { block_number: 7, block_hash: BLOCK_HASH, state_root: state.root, ref };
  const proof = await proofNodes(state, ref);
  const leaf = state.leaves.get(ref);
  if (leaf !== undefined) return { ...base, value: leaf, proof };
  const below = [...state.leaves.keys()].filter((path) => path.startsWith(`${ref}/`)).sort();
  if (below.length === 0) return { ...base, value: null, proof };
  const leaves: ProofLeaf[] = [];
  for (const path of below) {
    leaves.push({
      ref: path,
      value: state.leaves.get(path) as JsonValue,
      proof: await proofNodes(state, path),
    });
  }
  return { ...base, value: rebuild(ref, leaves), proof, leaves };
}

/**
 * The object a subtree's leaves spread from. Built from prototype-less objects (a `__proto__`
 * segment stays a member) and returned as JSON.parse makes it; a leaf below another leaf throws.
 */
export function rebuild(ref: string, leaves: readonly { ref: string; value: JsonValue }[]): JsonValue {
  const record = (): Record<string, JsonValue> => Object.create(null) as Record<string, JsonValue>;
  const root = record();
  for (const leaf of leaves) {
    const segments = leaf.ref.slice(ref.length + 1).split("/");
    let at = root;
    for (const segment of segments.slice(0, -1)) {
      if (!Object.hasOwn(at, segment)) at[segment] = record();
      const next = at[segment];
      if (next === null || typeof next !== "object" || Array.isArray(next))
        throw new Error(`${leaf.ref} is below a leaf`);
      at = next;
    }
    at[segments[segments.length - 1] as string] = leaf.value;
  }
  return JSON.parse(JSON.stringify(root)) as JsonValue;
}

/** A small deterministic generator (mulberry32), for tries too big for fast-check's shrinking. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A deep copy of a proof result, to tamper with one member. */
export const copyResult = (result: ProofResult): ProofResult => structuredClone(result);
