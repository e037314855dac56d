import { isAddress, toChecksumAddress } from "../crypto/index.ts";

/**
 * Which segments name an account, by the path's first segment: the node stores them in checksum
 * form (writes normalise them, and so do reads: src/chain/operation.ts). Every other segment is
 * kept exactly, since object keys under /users are case-sensitive.
 */
const ADDRESS_SEGMENTS: ReadonlyMap<string, readonly number[]> = new Map([
  ["account", [1]],
  ["transfer", [1, 2]],
  ["staking", [1]],
  ["users", [1]],
]);

/**
 * The path as the node names it in a proof: one leading slash, no trailing one, the account
 * segments in checksum form. Undefined for a path the node refuses outright (empty, or with an
 * empty segment such as `/a//b`). A proof is of exactly this path: a client compares it with the
 * `ref` of the answer, or a node could answer with another path's valid proof.
 */
export function normalizeRef(ref: string): string | undefined {
  const trimmed = ref.replace(/^\/+/, "").replace(/\/+$/, "");
  if (trimmed === "") return undefined;
  const segments = trimmed.split("/");
  if (segments.includes("")) return undefined;
  // A Map, not an object literal: a first segment such as `constructor` must find nothing.
  for (const at of ADDRESS_SEGMENTS.get(segments[0] as string) ?? []) {
    const segment = segments[at];
    if (segment !== undefined && isAddress(segment)) segments[at] = toChecksumAddress(segment);
  }
  return `/${segments.join("/")}`;
}
