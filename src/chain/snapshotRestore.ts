import { bytesToHex, keccak256 } from "../crypto/index.ts";
import { transactionsHash } from "./block.ts";
import { type Genesis, genesisBlock, parseGenesis } from "./genesis.ts";
import {
  type ChunkItem,
  checkManifestChain,
  manifestValidatorsAt,
  SnapshotError,
  type SnapshotManifest,
} from "./snapshot.ts";
import { buildStateTrie, type TrieWrite } from "./stateTrie.ts";
import type { ConfirmedTx, JsonValue, StoredBlock } from "./types.ts";
import {
  sameValidators,
  selectValidators,
  stakeChangesOf,
  VALIDATOR_SET_DELAY,
  type ValidatorSetChange,
} from "./validatorSet.ts";

/**
 * Restoring a snapshot (docs/decisions/010-snapshots.md): chunks checked one by one against the
 * manifest as they arrive, then the whole state rebuilt and checked against the block's root.
 * The format itself (manifest, chunks, their encoding) is snapshot.ts.
 */

/** Checks chunk `index`'s bytes against the manifest (length, keccak256) and parses it. */
function decodeChunk(manifest: SnapshotManifest, index: number, bytes: Uint8Array): ChunkItem[] {
  const info = manifest.chunks[index];
  if (info === undefined) throw new SnapshotError("bad_chunk", `the manifest has no chunk ${index}`);
  if (bytes.length !== info.bytes || bytesToHex(keccak256(bytes)) !== info.hash) {
    throw new SnapshotError(
      "chunk_mismatch",
      `chunk ${index}: ${bytes.length} bytes hashing to ${bytesToHex(keccak256(bytes))}; the manifest says ${info.bytes} bytes, ${info.hash}`,
    );
  }
  // The hash matched, so only a manifest written wrong can get past here with a bad chunk.
  let items: unknown;
  try {
    items = JSON.parse(Buffer.from(bytes).toString("utf8"));
  } catch {
    throw new SnapshotError("bad_chunk", `chunk ${index} is not JSON`);
  }
  if (!Array.isArray(items) || items.length !== info.items)
    throw new SnapshotError("bad_chunk", `chunk ${index} does not hold ${info.items} items`);
  for (const item of items) {
    const ok =
      info.kind === "state"
        ? Array.isArray(item) && item.length === 2 && typeof item[0] === "string"
        : info.kind === "txs"
          ? typeof item === "object" && item !== null && typeof (item as ConfirmedTx).tx?.hash === "string"
          : typeof item === "object" && item !== null && !Array.isArray(item);
    if (!ok)
      throw new SnapshotError("bad_chunk", `chunk ${index} holds an item that is not a ${info.kind} entry`);
  }
  return items as ChunkItem[];
}

/** Everything a restore writes, checked: the store puts it in one transaction. */
export interface SnapshotRestore {
  /** The chain's genesis: the one the restoring home had, or the one the genesis chunks hold. */
  genesis: Genesis;
  genesisBlock: StoredBlock;
  block: StoredBlock;
  leaves: Map<string, JsonValue>;
  trie: TrieWrite;
  /** Every account with a non-zero stake in the restored state. */
  stakers: Map<string, number>;
  validatorSets: ValidatorSetChange[];
  /** The block's own transactions, and recent unordered ones (see snapshotTxHashes). */
  txs: ConfirmedTx[];
}

const byUtf8 = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

/**
 * Collects a snapshot's chunks (in any order, each checked on arrival) and, once all are in,
 * rebuilds the trie of the whole state and checks its root against the manifest's block.
 */
export class SnapshotAssembler {
  readonly manifest: SnapshotManifest;
  /** The genesis the restoring home already has (checked against the manifest by the caller). */
  private readonly knownGenesis: Genesis | undefined;
  private readonly received = new Map<number, ChunkItem[]>();

  /**
   * With `knownGenesis` (a joining node, a home with genesis.json) the `genesis` chunks are not
   * needed; without it they are, and the genesis they hold must be the manifest's chain.
   */
  constructor(manifest: SnapshotManifest, knownGenesis?: Genesis) {
    this.manifest = manifest;
    this.knownGenesis = knownGenesis;
  }

  /** Checks and keeps chunk `index`; throws SnapshotError for a chunk the manifest does not name. */
  add(index: number, bytes: Uint8Array): void {
    this.received.set(index, decodeChunk(this.manifest, index, bytes));
  }

  /** The chunks still needed (not the genesis ones when the genesis is known). */
  missing(): number[] {
    return this.manifest.chunks
      .map((info, i) => ({ info, i }))
      .filter(({ info, i }) => !this.received.has(i) && !(info.kind === "genesis" && this.knownGenesis))
      .map(({ i }) => i);
  }

  /** The checked restore: throws state_root_mismatch when the leaves do not make the block's root. */
  finish(nextTrieId = 0): SnapshotRestore {
    const missing = this.missing();
    if (missing.length > 0) throw new SnapshotError("bad_chunk", `chunks ${missing.join(", ")} are missing`);
    const { manifest } = this;
    const genesis = this.genesis();
    const leaves = new Map<string, JsonValue>();
    const txs: ConfirmedTx[] = [];
    let last: string | undefined;
    manifest.chunks.forEach((info, index) => {
      if (info.kind === "genesis") return;
      for (const item of this.received.get(index) ?? []) {
        if (info.kind === "txs") {
          txs.push(item as ConfirmedTx);
          continue;
        }
        const [path, value] = item as readonly [string, JsonValue];
        if (last !== undefined && byUtf8(last, path) >= 0)
          throw new SnapshotError("bad_chunk", `chunk ${index}: leaf ${path} is out of key order`);
        leaves.set(path, value);
        last = path;
      }
    });
    const trie = buildStateTrie(leaves, nextTrieId);
    if (trie.rootHex !== manifest.state_root || trie.rootHex !== manifest.block.header.state_root) {
      throw new SnapshotError(
        "state_root_mismatch",
        `the restored state's root is ${trie.rootHex}; block ${manifest.height}'s state_root is ${manifest.block.header.state_root}`,
      );
    }
    const own = new Set(manifest.block.tx_hashes);
    const blockTxs = txs.filter((c) => own.has(c.tx.hash) && c.block_hash === manifest.block_hash);
    if (
      blockTxs.length !== own.size ||
      transactionsHash(manifest.block.tx_hashes) !== manifest.block.header.transactions_hash
    ) {
      throw new SnapshotError(
        "bad_chunk",
        `the txs chunks do not hold block ${manifest.height}'s transactions`,
      );
    }
    const stakers = new Map([...stakeChangesOf(leaves)].filter(([, stake]) => stake > 0));
    checkSetFromState(manifest, genesis, stakers);
    return {
      genesis,
      genesisBlock: genesisBlock(genesis),
      block: manifest.block,
      leaves,
      trie: trie.write,
      stakers,
      validatorSets: manifest.validator_sets.map((s) => ({
        fromHeight: s.from_height,
        validators: s.validators,
      })),
      txs,
    };
  }

  /**
   * The chain's genesis: the known one, or the one the `genesis` chunks hold (once those are in),
   * checked to be the manifest's chain.
   */
  genesis(): Genesis {
    if (this.knownGenesis !== undefined) return this.knownGenesis;
    const absent = this.manifest.chunks.filter((info, i) => info.kind === "genesis" && !this.received.has(i));
    if (absent.length > 0) throw new SnapshotError("bad_chunk", "the genesis chunks are missing");
    const items = this.manifest.chunks.flatMap((info, i) =>
      info.kind === "genesis" ? (this.received.get(i) ?? []) : [],
    ) as { [key: string]: JsonValue }[];
    const [head, ...accounts] = items;
    let genesis: Genesis;
    try {
      genesis = parseGenesis({ ...head, accounts });
    } catch (error) {
      throw new SnapshotError("bad_chunk", `the genesis chunks: ${(error as Error).message}`);
    }
    checkManifestChain(this.manifest, genesis);
    return genesis;
  }
}

/**
 * The set in force at height + VALIDATOR_SET_DELAY is what the stakes of the restored state select
 * (every stake change up to the block takes effect by then): checked, so that this part of the
 * manifest's validator sets is bound to the state root and not merely carried. The sets of the
 * heights before it are checked by state sync against certificates (chain/snapshotTrust.ts).
 */
function checkSetFromState(
  manifest: SnapshotManifest,
  genesis: Genesis,
  stakers: ReadonlyMap<string, number>,
): void {
  const { min_validator_stake, max_validators } = genesis.consensus;
  const selected = selectValidators(
    [...stakers].map(([address, stake]) => ({ address, stake })),
    min_validator_stake,
    max_validators,
  );
  const claimed = manifestValidatorsAt(manifest, manifest.height + VALIDATOR_SET_DELAY);
  // A selection that would leave no validator is never applied (the chain keeps its signers).
  if (selected.length > 0 && !sameValidators(selected, claimed)) {
    throw new SnapshotError(
      "bad_manifest",
      `the validator set for height ${manifest.height + VALIDATOR_SET_DELAY} is not the one the restored stakes select`,
    );
  }
}
