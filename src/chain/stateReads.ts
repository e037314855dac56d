import { keccakText } from "../crypto/index.ts";
import { EMPTY_ROOT } from "./stateTrie.ts";
import { lookupTrie, type TrieRecordSource } from "./trieRead.ts";
import type { JsonValue, StoredBlock } from "./types.ts";
import {
  boundedLeavesBelow,
  type LeafReader,
  readValue,
  rebuildObject,
  TooManyLeavesError,
} from "./valueRead.ts";

const utf8 = new TextDecoder();
const parseLeaf = (bytes: Uint8Array): JsonValue => JSON.parse(utf8.decode(bytes)) as JsonValue;

/** What reads at past heights need from the store. */
export interface StateHistoryStore extends TrieRecordSource, LeafReader {
  headNumber(): number | undefined;
  getBlock(number: number): StoredBlock | undefined;
  getTrieRoot(rootHex: string): number | undefined;
  /** Lowest height whose state trie is whole. */
  statesFrom(): number;
  /** Lowest block above 0 still stored. */
  blocksFrom(): number;
  /** First height whose deleted leaves deletedPathsBelow lists. */
  deletionsFrom(): number;
  /** Leaf paths of the head strictly below `path`, in order. */
  leafPathsBelow(path: string): Iterable<string>;
  /** Paths strictly below `path` a block from deletionsFrom() on deleted, in order. */
  deletedPathsBelow(path: string): Iterable<string>;
}

export interface StateReadLimits {
  /** Leaves one value may be rebuilt from. */
  maxValueLeaves: number;
  /** Leaves one proof may carry a proof for. */
  maxProofLeaves: number;
}

/** A height whose state the node cannot answer for: above the head, or no longer kept. */
export class StateUnavailableError extends Error {
  readonly reason: "future" | "pruned";
  /** For "pruned": the lowest height that can be read. For "future": the head. */
  readonly height: number;

  constructor(reason: "future" | "pruned", message: string, height: number) {
    super(message);
    this.name = "StateUnavailableError";
    this.reason = reason;
    this.height = height;
  }
}

/** One leaf with the trie nodes that prove it. */
export interface LeafProof {
  ref: string;
  value: JsonValue;
  proof: Uint8Array[];
}

/** A value at one block, with what proves it against that block's state root. */
export interface ValueProof {
  blockNumber: number;
  blockHash: string;
  stateRoot: string;
  ref: string;
  value: JsonValue;
  /** The nodes that prove `ref`'s leaf, or its absence, root first. */
  proof: Uint8Array[];
  /** For a subtree: each leaf below `ref`, in path order, with its own proof. */
  leaves?: LeafProof[];
}

/**
 * Reads of the data tree at the head or at any height the node keeps, and their Merkle proofs
 * (chain_getValue, chain_getProof). The head reads its flat leaves; a past height reads the trie
 * under that block's state root, which pruning keeps whole from statesFrom() on. Everything is
 * read synchronously, so no commit or pruning step runs in between.
 */
export class StateReads {
  private readonly store: StateHistoryStore;
  private readonly limits: StateReadLimits;

  constructor(store: StateHistoryStore, limits: StateReadLimits) {
    this.store = store;
    this.limits = limits;
  }

  /** The value at normalised `path` at `height` (the head when undefined). */
  value(path: string, height?: number): JsonValue {
    const at = this.blockAt(height);
    const reader = at.isHead ? this.store : this.pastReader(at.block, at.rootId);
    return readValue(reader, path, this.limits.maxValueLeaves);
  }

  /** The value at `path` with its proof against the state root of block `height` (default: the head). */
  prove(path: string, height?: number): ValueProof {
    const at = this.blockAt(height);
    const { header, hash } = at.block;
    const base = { blockNumber: header.number, blockHash: hash, stateRoot: header.state_root, ref: path };
    if (at.rootId === undefined) return { ...base, value: null, proof: [] }; // the empty trie proves every absence
    const own = this.proveLeaf(at.rootId, path);
    if (own.value !== undefined) return { ...base, value: own.value, proof: own.proof };
    const reader = at.isHead ? this.store : this.pastReader(at.block, at.rootId);
    // In JavaScript's string order, as clients check it (LMDB's UTF-8 byte order differs only
    // where characters above U+FFFF meet U+E000–U+FFFF).
    const below = boundedLeavesBelow(reader, path, this.limits.maxProofLeaves).sort(([a], [b]) =>
      a < b ? -1 : a > b ? 1 : 0,
    );
    if (below.length === 0) return { ...base, value: null, proof: own.proof };
    const leaves = below.map(([ref]): LeafProof => {
      const leaf = this.proveLeaf(at.rootId as number, ref);
      if (leaf.value === undefined)
        throw new Error(`state: leaf ${ref} is not in the trie of ${header.state_root}`);
      return { ref, value: leaf.value, proof: leaf.proof };
    });
    const value = rebuildObject(
      path,
      leaves.map((leaf) => [leaf.ref, leaf.value] as const),
    );
    return { ...base, value, proof: own.proof, leaves };
  }

  private proveLeaf(rootId: number, path: string): { value: JsonValue | undefined; proof: Uint8Array[] } {
    const { value, proof } = lookupTrie(this.store, rootId, keccakText(path), true);
    return { value: value === undefined ? undefined : parseLeaf(value), proof };
  }

  /**
   * The block at `height` and its state's root node, or StateUnavailableError. A height is kept
   * when its block and its whole state are (block 0's block always is; its state may be pruned).
   */
  private blockAt(height: number | undefined): {
    block: StoredBlock;
    rootId: number | undefined;
    isHead: boolean;
  } {
    const head = this.store.headNumber();
    if (head === undefined) throw new StateUnavailableError("future", "the node holds no blocks yet", 0);
    const number = height ?? head;
    if (number > head) {
      throw new StateUnavailableError("future", `block ${number} is above the head (${head})`, head);
    }
    const firstKept = Math.max(this.store.statesFrom(), number > 0 ? this.store.blocksFrom() : 0);
    const block = number < firstKept ? undefined : this.store.getBlock(number);
    const root = block?.header.state_root;
    const rootId = root === undefined || root === EMPTY_ROOT ? undefined : this.store.getTrieRoot(root);
    if (block === undefined || (root !== EMPTY_ROOT && rootId === undefined)) {
      const first = Math.max(this.store.statesFrom(), this.store.blocksFrom());
      throw new StateUnavailableError("pruned", `the state of block ${number} is no longer kept`, first);
    }
    return { block, rootId, isHead: number === head };
  }

  private pastReader(block: StoredBlock, rootId: number | undefined): LeafReader {
    return new PastStateReader(this.store, block.header.number, rootId, this.scanLimit());
  }

  /** Candidate paths one past-height listing may look up (most may be absent at that height). */
  private scanLimit(): number {
    return 4 * Math.max(this.limits.maxValueLeaves, this.limits.maxProofLeaves);
  }
}

/**
 * The leaves of a past state, read from its trie. The trie's keys are hashes of paths, so it
 * cannot list a subtree by itself: the candidates are the paths the head holds below it plus those
 * deleted since, each looked up in the trie (a path the head holds may not exist yet at `height`).
 */
class PastStateReader implements LeafReader {
  private readonly store: StateHistoryStore;
  private readonly height: number;
  private readonly rootId: number | undefined;
  private readonly scanLimit: number;

  constructor(store: StateHistoryStore, height: number, rootId: number | undefined, scanLimit: number) {
    this.store = store;
    this.height = height;
    this.rootId = rootId;
    this.scanLimit = scanLimit;
  }

  getLeaf(path: string): JsonValue | undefined {
    if (this.rootId === undefined) return undefined;
    const { value } = lookupTrie(this.store, this.rootId, keccakText(path), false);
    return value === undefined ? undefined : parseLeaf(value);
  }

  *leavesBelow(path: string): Iterable<readonly [string, JsonValue]> {
    const deletionsFrom = this.store.deletionsFrom();
    // Deletions from deletionsFrom on are known; one in (height, deletionsFrom) would be missed.
    if (this.height + 1 < deletionsFrom) {
      throw new StateUnavailableError(
        "pruned",
        `subtrees can be listed from block ${deletionsFrom - 1} on (this store records deleted paths from then)`,
        deletionsFrom - 1,
      );
    }
    const candidates = new Set<string>();
    for (const source of [this.store.leafPathsBelow(path), this.store.deletedPathsBelow(path)]) {
      for (const candidate of source) {
        candidates.add(candidate);
        // Bounded before any lookup: most candidates may not exist yet at this height.
        if (candidates.size > this.scanLimit) throw new TooManyLeavesError(path, this.scanLimit);
      }
    }
    for (const candidate of [...candidates].sort()) {
      const value = this.getLeaf(candidate);
      if (value !== undefined) yield [candidate, value];
    }
  }
}
