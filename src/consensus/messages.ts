import { type Static, Type } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import type { ProposedBlock } from "../chain/index.ts";
import { canonicalJson, hashCanonical, recoverSigner, signObject } from "../crypto/index.ts";

/**
 * Consensus messages and their signatures. Votes and proposals are signed like transactions
 * (DESIGN §3: keccak of canonical JSON, 97-byte signature, chain-id-bound v), so a precommit here
 * is byte for byte the vote a commit certificate holds (chain/commit.ts).
 */

export type VoteType = "prevote" | "precommit";

/** `block_hash` "" is a vote for nil (no block this round). */
export interface VoteBody {
  type: VoteType;
  chain_id: number;
  height: number;
  round: number;
  block_hash: string;
}

export interface ProposalBody {
  type: "proposal";
  chain_id: number;
  height: number;
  round: number;
  /** The round in which the block got +2/3 prevotes (a re-proposal), or -1. */
  pol_round: number;
  block_hash: string;
}

export interface SignedVote {
  vote: VoteBody;
  signature: string;
}

export interface SignedProposal {
  proposal: ProposalBody;
  signature: string;
  block: ProposedBlock;
}

/** A vote or proposal whose signer has been recovered. */
export interface Verified<T> {
  message: T;
  signer: string;
}

export function signBody(body: VoteBody | ProposalBody, privateKey: Uint8Array): string {
  return signObject(body, privateKey, body.chain_id);
}

/** The signer of a consensus message, or undefined when the signature does not verify. */
export function recoverBodySigner(body: VoteBody | ProposalBody, signature: string): string | undefined {
  const check = recoverSigner(signature, hashCanonical(canonicalJson(body)), body.chain_id);
  return check.ok ? check.signer : undefined;
}

// ---- wire schemas: what a peer sends is checked against these before anything reads it ----

const Hash = Type.String({ pattern: "^0x[0-9a-f]{64}$" });
const Signature = Type.String({ pattern: "^0x[0-9a-fA-F]{194}$" });
const Height = Type.Integer({ minimum: 1, maximum: 0xffffffff });
const Round = Type.Integer({ minimum: 0, maximum: 10_000 });
const ChainId = Type.Integer({ minimum: 0 });
const Address = Type.String({ pattern: "^0x[0-9a-fA-F]{40}$" });
const strict = { additionalProperties: false } as const;

const VoteBodySchema = Type.Object(
  {
    type: Type.Union([Type.Literal("prevote"), Type.Literal("precommit")]),
    chain_id: ChainId,
    height: Height,
    round: Round,
    block_hash: Type.Union([Hash, Type.Literal("")]),
  },
  strict,
);

const CommitSchema = Type.Object(
  { height: Height, round: Round, block_hash: Hash, signatures: Type.Array(Signature, { maxItems: 10_000 }) },
  strict,
);

const TxSchema = Type.Object(
  {
    hash: Hash,
    address: Address,
    signature: Signature,
    timestamp: Type.Integer({ minimum: 0 }),
    nonce: Type.Integer({ minimum: -1 }),
    parent_tx_hash: Type.Optional(Type.String({ maxLength: 256 })),
    operation: Type.Object(
      { type: Type.Literal("SET_VALUE"), ref: Type.String({ maxLength: 1024 }), value: Type.Unknown() },
      strict,
    ),
  },
  strict,
);

const HeaderSchema = Type.Object(
  {
    parent_hash: Hash,
    number: Height,
    timestamp: Type.Integer({ minimum: 0 }),
    proposer: Address,
    transactions_hash: Hash,
    state_root: Hash,
    last_commit_hash: Type.Union([Hash, Type.Literal("")]),
    size: Type.Integer({ minimum: 0 }),
  },
  strict,
);

/**
 * `at`: the sender's clock when it (re)sent the message. Not signed and not trusted; it only makes
 * a re-broadcast differ from the first send, which gossip would otherwise drop as already seen.
 */
const SentAt = Type.Optional(Type.Integer({ minimum: 0 }));

const SignedVoteSchema = Type.Object({ vote: VoteBodySchema, signature: Signature, at: SentAt }, strict);

export const SignedProposalSchema = Type.Object(
  {
    proposal: Type.Object(
      {
        type: Type.Literal("proposal"),
        chain_id: ChainId,
        height: Height,
        round: Round,
        pol_round: Type.Integer({ minimum: -1, maximum: 10_000 }),
        block_hash: Hash,
      },
      strict,
    ),
    signature: Signature,
    at: SentAt,
    block: Type.Object(
      {
        header: HeaderSchema,
        txs: Type.Array(TxSchema, { maxItems: 100_000 }),
        last_commit: Type.Union([CommitSchema, Type.Null()]),
      },
      strict,
    ),
  },
  strict,
);

const voteCheck = TypeCompiler.Compile(SignedVoteSchema);
const proposalCheck = TypeCompiler.Compile(SignedProposalSchema);

export function isSignedVote(value: unknown): value is SignedVote {
  return voteCheck.Check(value);
}

export function isSignedProposal(value: unknown): value is SignedProposal {
  return proposalCheck.Check(value);
}

export type SignedVoteWire = Static<typeof SignedVoteSchema>;
