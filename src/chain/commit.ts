import { hashCanonical, canonicalJson, recoverSigner, signObject } from "../crypto/index.ts";
import type { Commit, Validator, Vote } from "./types.ts";

export function precommitVote(chainId: number, height: number, round: number, blockHash: string): Vote {
  return { type: "precommit", chain_id: chainId, height, round, block_hash: blockHash };
}

/** Signs a vote in the transaction signature format (chain-id-bound v). */
export function signVote(vote: Vote, privateKey: Uint8Array): string {
  return signObject(vote, privateKey, vote.chain_id);
}

export type CommitCheck = { ok: true; signers: string[] } | { ok: false; message: string };

/**
 * A commit certificate is valid when its signatures are distinct validators of the set, each
 * signing this precommit, and their stake is more than 2/3 of the set's total stake.
 * Returns the signers, sorted: they are the block's `validators`.
 */
export function verifyCommit(commit: Commit, chainId: number, validators: readonly Validator[]): CommitCheck {
  const vote = precommitVote(chainId, commit.height, commit.round, commit.block_hash);
  const hash = hashCanonical(canonicalJson(vote));
  const stakeOf = new Map(validators.map((v) => [v.address, v.stake]));
  const total = validators.reduce((sum, v) => sum + v.stake, 0);
  const signers = new Set<string>();
  let signed = 0;
  for (const signature of commit.signatures) {
    const check = recoverSigner(signature, hash, chainId);
    if (!check.ok) return { ok: false, message: `bad vote signature: ${check.reason}` };
    const stake = stakeOf.get(check.signer);
    if (stake === undefined) return { ok: false, message: `${check.signer} is not a validator` };
    if (signers.has(check.signer)) return { ok: false, message: `${check.signer} voted twice` };
    signers.add(check.signer);
    signed += stake;
  }
  if (signed * 3 <= total * 2) return { ok: false, message: `commit holds ${signed} of ${total} stake` };
  return { ok: true, signers: [...signers].sort() };
}
