import { isHex } from "../crypto/index.ts";
import type { PeerStatus } from "./types.ts";

const STATUS_KEYS = ["chain_id", "genesis_hash", "head_hash", "head_number", "network_id"] as const;

const isCount = (value: unknown): value is number =>
  typeof value === "number" && Number.isSafeInteger(value) && value >= 0;

const isHash = (value: unknown): value is string => typeof value === "string" && isHex(value, 32);

/**
 * A status exactly as the protocol allows: the five members and nothing else, ids and height
 * non-negative safe integers, hashes `0x` + 64 hex. Anything else is `undefined` (the peer is
 * penalized: our own nodes never send it).
 */
export function parsePeerStatus(value: unknown): PeerStatus | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const keys = Object.keys(value).sort();
  if (keys.length !== STATUS_KEYS.length || keys.some((key, i) => key !== STATUS_KEYS[i])) return undefined;
  const record = value as Record<string, unknown>;
  const { chain_id, network_id, genesis_hash, head_number, head_hash } = record;
  if (!isCount(chain_id) || !isCount(network_id) || !isCount(head_number)) return undefined;
  if (!isHash(genesis_hash) || !isHash(head_hash)) return undefined;
  return {
    chain_id,
    network_id,
    genesis_hash: genesis_hash.toLowerCase(),
    head_number,
    head_hash: head_hash.toLowerCase(),
  };
}

/** Why two nodes cannot peer (another chain, network or genesis), or `undefined` when they can. */
export function statusMismatch(ours: PeerStatus, theirs: PeerStatus): string | undefined {
  if (theirs.chain_id !== ours.chain_id) return `chain id ${theirs.chain_id}, ours ${ours.chain_id}`;
  if (theirs.network_id !== ours.network_id)
    return `network id ${theirs.network_id}, ours ${ours.network_id}`;
  if (theirs.genesis_hash.toLowerCase() !== ours.genesis_hash.toLowerCase()) {
    return `genesis ${theirs.genesis_hash}, ours ${ours.genesis_hash}`;
  }
  return undefined;
}
