/**
 * consensus: how blocks are agreed and finalized. Tendermint among validators (tendermint.ts: the
 * rules of Algorithm 1, with its clock, signer and signature check injected; chainHost.ts connects
 * it to the chain and pool) and single-validator production for the dev chain (its own precommit
 * is the certificate). Owns: when a block is made, votes and their double-sign guard (signer.ts),
 * proposer rotation and the commit certificate. Does not own: what a block does (chain) or how
 * messages travel (p2p).
 */
export {
  type ProducerChain,
  type ProducerEvents,
  type ProducerPool,
  type SingleValidatorOptions,
  SingleValidatorProducer,
  type ValidatorKey,
} from "./singleValidator.ts";
export {
  ChainConsensusHost,
  MAX_CLOCK_DRIFT_MS,
  type ChainHostEvents,
  type HostChain,
  type HostNetwork,
  type HostPool,
} from "./chainHost.ts";
export {
  isSignedProposal,
  SignedProposalSchema,
  isSignedVote,
  type ProposalBody,
  recoverBodySigner,
  type SignedProposal,
  type SignedVote,
  signBody,
  type VoteBody,
  type VoteType,
} from "./messages.ts";
export { ProposerSchedule } from "./proposer.ts";
export { realScheduler, type Scheduler } from "./scheduler.ts";
export {
  ConsensusSigner,
  DoubleSignError,
  readSigningLog,
  type SignedRecord,
  type VoteSigner,
} from "./signer.ts";
export type { ConsensusHost, ConsensusMessage, ConsensusStep, ConsensusTimeouts } from "./host.ts";
export { TendermintEngine } from "./tendermint.ts";
export { type AddResult, type Evidence, HeightVotes } from "./voteSet.ts";
