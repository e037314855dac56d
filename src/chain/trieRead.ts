import { decodeRecord, rlpLength } from "./trieCodec.ts";
import {
  BRANCH,
  type Child,
  childAt,
  EXTENSION,
  idOfRef,
  isNode,
  LEAF,
  nibblesOf,
  type TrieNode,
} from "./trieNode.ts";

/** Stored trie records by id (the store's trie table); see trieCodec.recordOf. */
export interface TrieRecordSource {
  getTrieNode(id: number): Uint8Array | undefined;
}

/** What a key holds under one committed root, and the nodes that show it. */
export interface TrieLookup {
  /** The leaf's value bytes, or undefined when the key is absent. */
  value: Uint8Array | undefined;
  /**
   * The RLP encodings of the hashed nodes on the key's path, root first: an Ethereum Merkle proof
   * (eth_getProof's `accountProof` shape) of the value or of its absence. Nodes under 32 bytes
   * are embedded in their parent's encoding, so they are not listed on their own. Empty unless
   * the lookup was asked for a proof.
   */
  proof: Uint8Array[];
}

/** Records carry no hash (nodes are stored by id); a walk only needs the decoded structure. */
const UNUSED_HASH = new Uint8Array(32);

/**
 * Looks `key` (32 bytes: keccak256 of the path) up under the committed root stored as node
 * `rootId`, reading only the nodes on its path: reads at any height the store still keeps, from
 * the same records block execution wrote. Throws when a node it needs is missing (a pruned or
 * damaged state), so a caller can never mistake a lost node for an absent key.
 */
export function lookupTrie(
  source: TrieRecordSource,
  rootId: number,
  key: Uint8Array,
  withProof: boolean,
): TrieLookup {
  const nibbles = nibblesOf(key);
  const proof: Uint8Array[] = [];
  let node = loadNode(source, rootId, withProof ? proof : undefined);
  let depth = 0;
  for (;;) {
    let next: Child;
    if (node.type === LEAF) {
      const found = sameNibbles(node.path, nibbles, depth) && depth + node.path.length === nibbles.length;
      return { value: found ? node.value : undefined, proof };
    }
    if (node.type === EXTENSION) {
      if (!sameNibbles(node.path, nibbles, depth)) return { value: undefined, proof };
      depth += node.path.length;
      next = node.child;
    } else if (node.type === BRANCH) {
      // A secure trie's keys all have 64 nibbles, so a branch never holds a value of its own.
      if (depth >= nibbles.length) return { value: undefined, proof };
      next = childAt(node, nibbles[depth] as number);
      depth++;
    } else {
      throw new Error("trie: unknown node type");
    }
    if (next === null) return { value: undefined, proof };
    node = isNode(next) ? next : loadNode(source, idOfRef(next), withProof ? proof : undefined);
  }
}

function loadNode(source: TrieRecordSource, id: number, proof: Uint8Array[] | undefined): TrieNode {
  const record = source.getTrieNode(id);
  if (record === undefined) throw new MissingTrieNodeError(id);
  if (proof !== undefined) proof.push(record.slice(0, rlpLength(record)));
  return decodeRecord(record, UNUSED_HASH, id);
}

/** True when `path` matches `nibbles` from `at` on (and fits in them). */
function sameNibbles(path: Uint8Array, nibbles: Uint8Array, at: number): boolean {
  if (at + path.length > nibbles.length) return false;
  for (let i = 0; i < path.length; i++) if (path[i] !== nibbles[at + i]) return false;
  return true;
}

/** A node a kept state reaches is not in the store: the state was pruned meanwhile, or the store is damaged. */
class MissingTrieNodeError extends Error {
  constructor(id: number) {
    super(`trie node ${id} is not in the store`);
    this.name = "MissingTrieNodeError";
  }
}
