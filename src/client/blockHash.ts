import { canonicalJson, keccak256, utf8Bytes } from "../crypto/index.ts";
import { bytesToHex } from "./bytes.ts";
import type { BlockHeader, Hash } from "./types.ts";

/**
 * The hash of a block as the node computes it (src/chain/block.ts `hashHeader`): `0x` +
 * keccak256 of the canonical JSON of the header's eight hashed members. `hash` and `validators`
 * travel beside the header in the RPC's shape but are not part of it (validators are the commit's
 * signers, known only after the hash). Members are picked one by one rather than the rest kept,
 * so a member a newer node adds cannot slip into, or out of, what is checked here.
 */
export function hashBlockHeader(header: BlockHeader): Hash {
  const hashed = {
    parent_hash: header.parent_hash,
    number: header.number,
    timestamp: header.timestamp,
    proposer: header.proposer,
    transactions_hash: header.transactions_hash,
    state_root: header.state_root,
    last_commit_hash: header.last_commit_hash,
    size: header.size,
  };
  return bytesToHex(keccak256(utf8Bytes(canonicalJson(hashed))));
}
