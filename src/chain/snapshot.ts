import { type Static, Type } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { bytesToHex, canonicalJson, keccak256, utf8Bytes } from "../crypto/index.ts";
import { hashHeader } from "./block.ts";
import { verifyCommit } from "./commit.ts";
import { type Genesis, genesisBlock } from "./genesis.ts";
import type { ConfirmedTx, JsonValue, StoredBlock, Validator } from "./types.ts";
import { VALIDATOR_SET_DELAY, type ValidatorSetChange } from "./validatorSet.ts";

/**
 * State snapshots (docs/decisions/010-snapshots.md): the flat state leaves of one block, cut into
 * chunks of bounded size, and a manifest naming the chain, the block (with its header and commit
 * certificate), the validator sets, and each chunk's keccak256 and length. Each chunk is checked
 * alone against the manifest, so chunks may arrive one by one from different peers; the whole
 * state is then checked against the block's state root. Pure: the container file and the store
 * are node/'s and storage/'s.
 */

export const SNAPSHOT_FORMAT = "chain-node-snapshot";
export const SNAPSHOT_VERSION = 1;
/**
 * A chunk closes before an entry would take it past this many bytes (an entry alone may be
 * larger: a leaf is at most a transaction's size, max_tx_bytes). Part of the format, so that two
 * nodes cut the same state into the same chunks and a syncing node may take chunks from both.
 */
const SNAPSHOT_CHUNK_TARGET_BYTES = 1024 * 1024;
/** Largest chunk a reader accepts, bytes. */
const SNAPSHOT_MAX_CHUNK_BYTES = 16 * 1024 * 1024;
/** Largest manifest a reader accepts, bytes. */
const SNAPSHOT_MAX_MANIFEST_BYTES = 16 * 1024 * 1024;

const SNAPSHOT_ERROR_CODES = [
  "not_a_snapshot",
  "unsupported_version",
  "wrong_chain",
  "bad_manifest",
  "chunk_mismatch",
  "bad_chunk",
  "state_root_mismatch",
] as const;
export type SnapshotErrorCode = (typeof SNAPSHOT_ERROR_CODES)[number];

/** Why a snapshot (or one of its chunks) is refused; state sync maps it to a peer penalty. */
export class SnapshotError extends Error {
  readonly code: SnapshotErrorCode;

  constructor(code: SnapshotErrorCode, message: string) {
    super(message);
    this.name = "SnapshotError";
    this.code = code;
  }
}

const Hash = Type.String({ pattern: "^0x[0-9a-f]{64}$" });
const Height = Type.Integer({ minimum: 0, maximum: 0xffffffff });
const ValidatorSchema = Type.Object({ address: Type.String(), stake: Type.Integer({ minimum: 0 }) });

const ManifestSchema = Type.Object(
  {
    format: Type.Literal(SNAPSHOT_FORMAT),
    version: Type.Literal(SNAPSHOT_VERSION),
    chain_id: Type.Integer({ minimum: 0 }),
    /** Block 0's hash; the genesis itself is in the `genesis` chunks (a large one is megabytes). */
    genesis_hash: Hash,
    height: Height,
    block_hash: Hash,
    state_root: Hash,
    /** The block at `height` as stored: header, transaction hashes, signers, commit certificate. */
    block: Type.Unknown(),
    /** Every validator set change up to height + VALIDATOR_SET_DELAY, oldest first. */
    validator_sets: Type.Array(
      Type.Object({ from_height: Height, validators: Type.Array(ValidatorSchema, { minItems: 1 }) }),
      { minItems: 1 },
    ),
    leaf_count: Type.Integer({ minimum: 0 }),
    chunks: Type.Array(
      Type.Object({
        kind: Type.Union([Type.Literal("genesis"), Type.Literal("state"), Type.Literal("txs")]),
        hash: Hash,
        bytes: Type.Integer({ minimum: 2, maximum: SNAPSHOT_MAX_CHUNK_BYTES }),
        items: Type.Integer({ minimum: 1 }),
      }),
    ),
  },
  { additionalProperties: false },
);
const manifestCheck = TypeCompiler.Compile(ManifestSchema);

export type SnapshotChunkInfo = Static<typeof ManifestSchema>["chunks"][number];

export interface SnapshotManifest extends Omit<Static<typeof ManifestSchema>, "block"> {
  block: StoredBlock;
}

/**
 * One item of a chunk: a leaf (path, value) of a `state` chunk, a committed transaction of a
 * `txs` chunk, or, in `genesis` chunks, the genesis without its accounts then one funded account
 * per item (a genesis of a million accounts is 70 MB: cut like the rest, not one manifest field).
 */
export type ChunkItem = readonly [string, JsonValue] | ConfirmedTx | { [key: string]: JsonValue };

/** The items of the `genesis` chunks: the genesis without its accounts, then each account. */
export function genesisItems(genesis: Genesis): ChunkItem[] {
  const head = { ...genesis, accounts: [] } as unknown as { [key: string]: JsonValue };
  return [head, ...(genesis.accounts as unknown as { [key: string]: JsonValue }[])];
}

/**
 * Cuts `items` into chunks: each chunk's bytes are the UTF-8 of a JSON array of the items'
 * canonical JSON, closed before an item would take it past `targetBytes`.
 */
export function* chunkItems(
  items: Iterable<ChunkItem>,
  targetBytes = SNAPSHOT_CHUNK_TARGET_BYTES,
): Generator<{ bytes: Uint8Array; items: number }> {
  let parts: string[] = [];
  let size = 2; // "[" and "]"
  for (const item of items) {
    const text = canonicalJson(item);
    const length = Buffer.byteLength(text, "utf8");
    if (parts.length > 0 && size + 1 + length > targetBytes) {
      yield { bytes: utf8Bytes(`[${parts.join(",")}]`), items: parts.length };
      parts = [];
      size = 2;
    }
    size += (parts.length > 0 ? 1 : 0) + length; // with the comma before it
    parts.push(text);
  }
  if (parts.length > 0) yield { bytes: utf8Bytes(`[${parts.join(",")}]`), items: parts.length };
}

/** The manifest entry of a chunk's bytes. */
export function chunkInfo(
  kind: SnapshotChunkInfo["kind"],
  chunk: { bytes: Uint8Array; items: number },
): SnapshotChunkInfo {
  return { kind, hash: bytesToHex(keccak256(chunk.bytes)), bytes: chunk.bytes.length, items: chunk.items };
}

/** A manifest's bytes: its canonical JSON. */
export function encodeManifest(manifest: SnapshotManifest): Uint8Array {
  return utf8Bytes(canonicalJson(manifest));
}

/** keccak256 of the manifest's bytes: what a peer offering a snapshot names it by. */
export function manifestHash(manifest: SnapshotManifest): string {
  return bytesToHex(keccak256(encodeManifest(manifest)));
}

/**
 * Parses and checks a manifest on its own: format and version first (each refused with its own
 * line), then its shape and that its parts agree (genesis hash, block hash, height, state root,
 * the commit certificate against the set in force at the height, chunk counts).
 */
export function decodeManifest(bytes: Uint8Array): SnapshotManifest {
  if (bytes.length > SNAPSHOT_MAX_MANIFEST_BYTES) {
    throw new SnapshotError("bad_manifest", `manifest of ${bytes.length} bytes is over the limit`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(Buffer.from(bytes).toString("utf8"));
  } catch {
    throw new SnapshotError("not_a_snapshot", "the manifest is not JSON");
  }
  const head = raw as { format?: unknown; version?: unknown } | null;
  if (head === null || typeof head !== "object" || head.format !== SNAPSHOT_FORMAT) {
    throw new SnapshotError("not_a_snapshot", `not a ${SNAPSHOT_FORMAT} manifest`);
  }
  if (head.version !== SNAPSHOT_VERSION) {
    throw new SnapshotError(
      "unsupported_version",
      `snapshot format version ${String(head.version)}; this node reads version ${SNAPSHOT_VERSION}`,
    );
  }
  if (!manifestCheck.Check(raw)) {
    const first = manifestCheck.Errors(raw).First();
    throw new SnapshotError(
      "bad_manifest",
      `manifest: ${first?.path || "/"} ${first?.message ?? "is invalid"}`,
    );
  }
  const manifest: SnapshotManifest = { ...raw, block: raw.block as StoredBlock };
  checkManifest(manifest);
  return manifest;
}

function checkManifest(manifest: SnapshotManifest): void {
  const bad = (message: string): never => {
    throw new SnapshotError("bad_manifest", `manifest: ${message}`);
  };
  const { block, height } = manifest;
  if (typeof block !== "object" || block === null || typeof block.header !== "object") bad("no block");
  if (block.header.number !== height) bad(`block ${block.header.number} is not the height ${height}`);
  if (hashHeader(block.header) !== block.hash || block.hash !== manifest.block_hash)
    bad("block_hash is not its header's hash");
  if (block.header.state_root !== manifest.state_root) bad("state_root differs from its header's");
  const sets = manifest.validator_sets;
  sets.forEach((set, i) => {
    if (i > 0 && set.from_height <= (sets[i - 1]?.from_height ?? 0)) bad("validator_sets are not in order");
  });
  if ((sets[0]?.from_height ?? 0) > Math.max(height, 1)) bad(`no validator set for height ${height}`);
  if (height > 0) {
    if (block.commit === null) bad(`block ${height} carries no commit certificate`);
    const check = verifyCommit(
      block.commit as NonNullable<StoredBlock["commit"]>,
      manifest.chain_id,
      setAt(sets, height),
    );
    if (!check.ok) bad(`the commit certificate of block ${height} does not verify: ${check.message}`);
    if (block.commit?.block_hash !== block.hash) bad("the commit certificate is for another block");
  }
  const leaves = manifest.chunks.filter((c) => c.kind === "state").reduce((sum, c) => sum + c.items, 0);
  if (leaves !== manifest.leaf_count) bad(`leaf_count ${manifest.leaf_count}, chunks hold ${leaves}`);
  const order = { genesis: 0, state: 1, txs: 2 } as const;
  if (
    manifest.chunks.some(
      (c, i) => i > 0 && order[c.kind] < order[(manifest.chunks[i - 1] as SnapshotChunkInfo).kind],
    )
  )
    bad("chunks are not genesis, then state, then txs");
  if (!manifest.chunks.some((c) => c.kind === "genesis")) bad("no genesis chunk");
}

const setAt = (sets: SnapshotManifest["validator_sets"], height: number): Validator[] =>
  [...sets].reverse().find((set) => set.from_height <= height)?.validators ?? [];

/** The validator set the manifest says is in force at `height` (its latest change at or below). */
export const manifestValidatorsAt = (manifest: SnapshotManifest, height: number): Validator[] =>
  setAt(manifest.validator_sets, height);

/**
 * What two nodes' snapshots of one block share: the state root and the list of chunks (kind, hash,
 * size, items). Their manifests differ (each node stores the precommits it saw as the block's
 * certificate), so peers are grouped by this, not by the manifest hash, to fetch chunks from all.
 */
export function chunksHash(manifest: Pick<SnapshotManifest, "height" | "state_root" | "chunks">): string {
  return bytesToHex(
    keccak256(
      utf8Bytes(
        canonicalJson({ height: manifest.height, state_root: manifest.state_root, chunks: manifest.chunks }),
      ),
    ),
  );
}

/** Refuses a manifest of another chain than `genesis`, with a line saying which. */
export function checkManifestChain(manifest: SnapshotManifest, genesis: Genesis): void {
  if (manifest.chain_id !== genesis.chain_id) {
    throw new SnapshotError(
      "wrong_chain",
      `the snapshot is of chain id ${manifest.chain_id}; this home's genesis has chain id ${genesis.chain_id}`,
    );
  }
  const ours = genesisBlock(genesis).hash;
  if (manifest.genesis_hash !== ours) {
    throw new SnapshotError(
      "wrong_chain",
      `the snapshot's genesis is ${manifest.genesis_hash}; this home's genesis is ${ours}`,
    );
  }
}

/**
 * How far back, in block time, a snapshot keeps committed unordered transactions (nonce -1): a
 * new block may take one whose timestamp is within UNORDERED_TX_WINDOW_MS of its own time, and
 * what stops a replay is the committed-transaction index, which a restored node has only for what
 * the snapshot carries. A transaction a block at time b took has a timestamp ≥ b − window, so it is
 * replayable after the head (time h) only if b ≥ h − 2 × window.
 */
export function unorderedLookbackMs(windowMs: number): number {
  return 2 * windowMs;
}

/** What snapshotTxHashes reads. */
export interface SnapshotBlockReader {
  getBlock(number: number): StoredBlock | undefined;
  getConfirmedTx(hash: string): ConfirmedTx | undefined;
}

/**
 * The committed transactions a snapshot of `head` carries: the head block's own, then the
 * unordered ones of the blocks within `lookbackMs` of its time (newest first), walking back until
 * a block is older or missing (a node restored from a snapshot has no blocks below it). Yields
 * them block by block: the walk reads every transaction of up to two hours of blocks (hundreds of
 * thousands at load), so a running node's caller yields to the event loop between blocks.
 */
export function* snapshotTxs(
  reader: SnapshotBlockReader,
  head: StoredBlock,
  lookbackMs: number,
): Generator<ConfirmedTx[]> {
  const confirmed = (hash: string) => reader.getConfirmedTx(hash);
  yield head.tx_hashes.map(confirmed).filter((tx): tx is ConfirmedTx => tx !== undefined);
  for (let n = head.header.number - 1; n >= 1; n--) {
    const block = reader.getBlock(n);
    if (block === undefined || block.header.timestamp < head.header.timestamp - lookbackMs) return;
    yield block.tx_hashes.map(confirmed).filter((tx): tx is ConfirmedTx => tx?.tx.nonce === -1);
  }
}

/**
 * The validator set changes a snapshot of `height` carries: all of them up to height +
 * VALIDATOR_SET_DELAY, not only those in force from the height on, because the proposer rotation
 * (consensus/proposer.ts) replays the priorities from height 1 through every set, and the commit
 * certificate of block `height` is checked against the set in force at it.
 */
export function snapshotValidatorSets(
  changes: Iterable<ValidatorSetChange>,
  height: number,
): SnapshotManifest["validator_sets"] {
  const out: SnapshotManifest["validator_sets"] = [];
  for (const { fromHeight, validators } of changes) {
    if (fromHeight <= height + VALIDATOR_SET_DELAY) out.push({ from_height: fromHeight, validators });
  }
  return out;
}
