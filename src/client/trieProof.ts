import { keccak256 } from "../crypto/index.ts";
import { bytesToHex, equalBytes } from "./bytes.ts";
import { ProofVerificationError } from "./errors.ts";
import { decodeRlp, isRlpList, type RlpItem, type RlpList } from "./rlp.ts";

/**
 * The walk of an Ethereum Merkle-Patricia proof (the `accountProof` of eth_getProof), in the
 * manner of go-ethereum's trie/proof.go: from the root, each node must hash to the reference its
 * parent holds, and the key's nibbles choose the way down until a leaf (the value, or another
 * key's leaf: absence) or an empty slot (absence). Knows nothing of JSON or paths.
 *
 * Node shapes (yellow paper, appendix D): a branch is a 17-item list (16 children and a value), a
 * leaf or an extension a 2-item list whose first item is its path in hex-prefix encoding. A child
 * is a 32-byte hash, or, for a node whose encoding is under 32 bytes, that node itself, inline.
 */

/** keccak256(rlp("")): the root of a trie with no keys. */
const EMPTY_TRIE_ROOT = "0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421";

/** The trie's keys are keccak256 digests: 64 nibbles, so every leaf ends exactly there. */
const KEY_NIBBLES = 64;
const HASH_BYTES = 32;

/**
 * The value stored under `key` (a 32-byte hashed key) in the trie whose root hash is `root`, or
 * null where the proof shows there is none. Every node of `proof` must be used, in order; a node
 * embedded in its parent may also appear as an element of its own (@ethereumjs/mpt lists them,
 * go-ethereum does not), and is then checked byte for byte against the embedded copy.
 * Throws ProofVerificationError for anything else.
 */
export function walkTrieProof(
  root: Uint8Array,
  key: Uint8Array,
  proof: readonly Uint8Array[],
): Uint8Array | null {
  if (key.length !== HASH_BYTES) throw new TypeError(`a trie key is ${HASH_BYTES} bytes, not ${key.length}`);
  const nibbles = toNibbles(key);
  if (proof.length === 0) {
    if (bytesToHex(root) === EMPTY_TRIE_ROOT) return null;
    throw new ProofVerificationError("incomplete_proof", "the proof has no nodes, and the trie is not empty");
  }
  const first = proof[0] as Uint8Array;
  if (!equalBytes(keccak256(first), root)) {
    throw new ProofVerificationError(
      "root_mismatch",
      `the first node hashes to ${bytesToHex(keccak256(first))}, not to the state root ${bytesToHex(root)}`,
    );
  }
  let used = 1;
  let node = decodeRlp(first);
  // The root of an empty trie is the empty string; anywhere else it is malformed.
  if (!isRlpList(node) && node.length === 0) return finish(null, used, proof);
  let depth = 0;
  for (;;) {
    const { items } = asList(node, depth);
    let child: RlpItem;
    if (items.length === 17) {
      if (depth === KEY_NIBBLES) throw malformedAt(depth, "a branch below the last nibble of the key");
      if (!isEmpty(items[16] as RlpItem))
        throw malformedAt(depth, "a branch holding a value (keys are all 32 bytes)");
      child = items[nibbles[depth] as number] as RlpItem;
      depth += 1;
      if (isEmpty(child)) return finish(null, used, proof); // the key's slot is empty
    } else if (items.length === 2) {
      const { isLeaf, path } = decodeHexPrefix(items[0] as RlpItem, depth);
      if (isLeaf) {
        if (depth + path.length !== KEY_NIBBLES)
          throw malformedAt(depth, "a leaf whose key is not 64 nibbles long");
        const value = items[1] as RlpItem;
        if (isRlpList(value) || value.length === 0)
          throw malformedAt(depth, "a leaf without a byte-string value");
        // A leaf holds the only key under its position: another key's leaf proves ours absent.
        return finish(startsWithAt(nibbles, depth, path) ? value : null, used, proof);
      }
      if (path.length === 0 || depth + path.length >= KEY_NIBBLES) {
        throw malformedAt(depth, `an extension of ${path.length} nibbles`);
      }
      if (!startsWithAt(nibbles, depth, path)) return finish(null, used, proof); // the key leaves the shared path
      depth += path.length;
      child = items[1] as RlpItem;
      if (isEmpty(child)) throw malformedAt(depth, "an extension without a child");
    } else {
      throw malformedAt(depth, `a list of ${items.length} items is no trie node`);
    }

    if (isRlpList(child)) {
      if (child.encoded.length >= HASH_BYTES)
        throw malformedAt(depth, "an embedded node of 32 bytes or more");
      const repeated = proof[used];
      if (repeated !== undefined && equalBytes(repeated, child.encoded)) used += 1;
      node = child;
      continue;
    }
    if (child.length !== HASH_BYTES) throw malformedAt(depth, `a child reference of ${child.length} bytes`);
    const next = proof[used];
    if (next === undefined) {
      throw new ProofVerificationError(
        "incomplete_proof",
        `the proof ends after ${used} nodes, at nibble ${depth} of the key, before the node ${bytesToHex(child)}`,
      );
    }
    if (!equalBytes(keccak256(next), child)) {
      throw new ProofVerificationError(
        "hash_mismatch",
        `node ${used} hashes to ${bytesToHex(keccak256(next))}, but its parent refers to ${bytesToHex(child)}`,
      );
    }
    used += 1;
    node = decodeRlp(next);
  }
}

function finish<T>(result: T, used: number, proof: readonly Uint8Array[]): T {
  if (used !== proof.length) {
    throw new ProofVerificationError(
      "extra_nodes",
      `the key's path ends at node ${used - 1}, but the proof has ${proof.length} nodes`,
    );
  }
  return result;
}

function toNibbles(bytes: Uint8Array): Uint8Array {
  const nibbles = new Uint8Array(bytes.length * 2);
  bytes.forEach((byte, i) => {
    nibbles[2 * i] = byte >> 4;
    nibbles[2 * i + 1] = byte & 15;
  });
  return nibbles;
}

const isEmpty = (item: RlpItem): boolean => !isRlpList(item) && item.length === 0;

function asList(node: RlpItem, depth: number): RlpList {
  if (!isRlpList(node)) throw malformedAt(depth, "a byte string where a trie node belongs");
  return node;
}

function malformedAt(depth: number, what: string): ProofVerificationError {
  return new ProofVerificationError("malformed_node", `${what}, at nibble ${depth} of the key`);
}

/** Whether `path` continues `nibbles` from `depth` on (it may be shorter than what is left). */
function startsWithAt(nibbles: Uint8Array, depth: number, path: Uint8Array): boolean {
  if (depth + path.length > nibbles.length) return false;
  for (let i = 0; i < path.length; i++) if (nibbles[depth + i] !== path[i]) return false;
  return true;
}

/**
 * Hex-prefix encoding (yellow paper, appendix C): the first nibble is 2 for a leaf, 0 for an
 * extension, plus 1 when the path has an odd number of nibbles, the second of which then starts
 * the path; an even path pads with a zero nibble, which must be zero.
 */
function decodeHexPrefix(item: RlpItem, depth: number): { isLeaf: boolean; path: Uint8Array } {
  if (isRlpList(item) || item.length === 0)
    throw malformedAt(depth, "a node path that is no hex-prefix string");
  const flag = (item[0] as number) >> 4;
  if (flag > 3) throw malformedAt(depth, `a hex-prefix flag of ${flag}`);
  const odd = (flag & 1) === 1;
  if (!odd && ((item[0] as number) & 15) !== 0)
    throw malformedAt(depth, "an even hex-prefix path with padding");
  const all = toNibbles(item);
  return { isLeaf: flag >= 2, path: all.subarray(odd ? 1 : 2) };
}
