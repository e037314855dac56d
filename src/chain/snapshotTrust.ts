import { commitHash, hashHeader } from "./block.ts";
import { verifyCommit } from "./commit.ts";
import { manifestValidatorsAt, type SnapshotManifest } from "./snapshot.ts";
import type { BlockHeader, Commit } from "./types.ts";
import { VALIDATOR_SET_DELAY } from "./validatorSet.ts";

/** What the operator trusts (`[sync] trust_height`, `trust_hash`), as in CometBFT's state sync. */
export interface TrustAnchor {
  height: number;
  /** `0x` + 64 hex: the hash of block `height`. */
  hash: string;
}

/** Of each block a peer served, what the trust check reads. */
export interface LinkedBlock {
  header: BlockHeader;
  /** The certificate of the block before, as this block carries it (hashed in its header). */
  last_commit: Commit | null;
}

export type TrustCheck = { ok: true } | { ok: false; message: string };

/**
 * The blocks a snapshot at height H must be checked with: anchor.height + 1 … H + VALIDATOR_SET_DELAY.
 * Those past H bind the certificates of blocks H … H + DELAY − 1 (each is hashed into the header
 * of the block after it), whose sets the restored state cannot vouch for.
 */
export function trustRange(manifest: SnapshotManifest, anchor: TrustAnchor): { from: number; to: number } {
  return { from: anchor.height + 1, to: manifest.height + VALIDATOR_SET_DELAY };
}

/**
 * Whether a snapshot's manifest is the trusted chain's, given the blocks of `trustRange` (from
 * any peer: nothing in them is believed that the hashes do not bind).
 *
 * - The headers link by `parent_hash` from the trusted hash, so every one of them, and the
 *   manifest's block at H, is the trusted chain's (keccak256 binds each header to the one before).
 * - The manifest's state root is then its block's (decodeManifest checked), and the restored
 *   state must have that root (SnapshotAssembler), and select the set of H + DELAY.
 * - The sets the state cannot vouch for, those of H … H + DELAY − 1, must each verify the
 *   certificate that the next header hashes: signatures of real validators of the trusted chain,
 *   more than 2/3 of the claimed set's stake. A forged set would have to be made of them.
 */
export function checkSnapshotTrust(
  manifest: SnapshotManifest,
  anchor: TrustAnchor,
  blocks: readonly LinkedBlock[],
): TrustCheck {
  const fail = (message: string): TrustCheck => ({ ok: false, message });
  if (manifest.height < anchor.height) {
    return fail(`snapshot height ${manifest.height} is below the trusted height ${anchor.height}`);
  }
  if (manifest.height === anchor.height && manifest.block_hash !== anchor.hash.toLowerCase()) {
    return fail(
      `block ${anchor.height} of the snapshot is ${manifest.block_hash}, not the trusted ${anchor.hash}`,
    );
  }
  const { from, to } = trustRange(manifest, anchor);
  if (blocks.length !== to - from + 1) return fail(`expected blocks ${from}..${to}, got ${blocks.length}`);
  const hashes = new Map<number, string>([[anchor.height, anchor.hash.toLowerCase()]]);
  for (const [i, block] of blocks.entries()) {
    const number = from + i;
    if (block.header.number !== number) return fail(`block ${from + i} is numbered ${block.header.number}`);
    if (block.header.parent_hash !== hashes.get(number - 1)) {
      return fail(`block ${number} does not link to the trusted chain (parent ${block.header.parent_hash})`);
    }
    hashes.set(number, hashHeader(block.header));
  }
  if (hashes.get(manifest.height) !== manifest.block_hash) {
    return fail(
      `the trusted chain's block ${manifest.height} is ${hashes.get(manifest.height)}, the snapshot's ${manifest.block_hash}`,
    );
  }
  for (let height = manifest.height; height < to; height++) {
    const next = blocks[height + 1 - from] as LinkedBlock;
    const certificate = next.last_commit;
    if (certificate === null || commitHash(certificate) !== next.header.last_commit_hash) {
      return fail(`block ${height + 1} carries a certificate its header does not hash`);
    }
    if (certificate.height !== height || certificate.block_hash !== hashes.get(height)) {
      return fail(`the certificate block ${height + 1} carries is not block ${height}'s`);
    }
    const check = verifyCommit(certificate, manifest.chain_id, manifestValidatorsAt(manifest, height));
    if (!check.ok) {
      return fail(
        `the snapshot's validator set of height ${height} does not verify its certificate: ${check.message}`,
      );
    }
  }
  return { ok: true };
}
