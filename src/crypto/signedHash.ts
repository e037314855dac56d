import { bytesToHex } from "./hex.ts";
import { hashCanonical, recoverSigner, type SignatureCheck } from "./signature.ts";

/** One signed body to check: its canonical JSON, the 97-byte signature and the chain id it must carry. */
export interface SignedHashJob {
  canonical: string;
  signature: string;
  chainId: number;
}

/** The body's hash (0x hex) and the signature check against it. */
export type SignedHashResult = SignatureCheck & { hash: string };

/** Hashes a canonical body and recovers its signer: the expensive, stateless half of admission. */
export function checkSignedHash(job: SignedHashJob): SignedHashResult {
  const hash = hashCanonical(job.canonical);
  return { ...recoverSigner(job.signature, hash, job.chainId), hash: bytesToHex(hash) };
}

/**
 * Who waits for a check: `interactive` (the default), a caller that answers someone now, as
 * admission answers a submission; `bulk`, work that comes in thousands and only needs throughput,
 * as a block sync's ranges. A verifier may run interactive jobs ahead of queued bulk ones.
 */
export type VerifyLane = "interactive" | "bulk";

/** Something that runs checkSignedHash over jobs, in order, possibly off the calling thread. */
export interface SignatureVerifier {
  verify(jobs: readonly SignedHashJob[], lane?: VerifyLane): Promise<SignedHashResult[]>;
  close(): Promise<void>;
}

/** Runs the checks on the calling thread (tests, tools, and machines with a single core). */
export const inlineVerifier: SignatureVerifier = {
  verify: async (jobs) => jobs.map(checkSignedHash),
  close: async () => undefined,
};
