import { isAddress, toChecksumAddress } from "../crypto/index.ts";

/** Limits on state paths, so one write cannot make a pathological key. */
export const MAX_PATH_DEPTH = 32;
const MAX_PATH_SEGMENT_CHARS = 256;
/** Whole leaf path, in characters; LMDB keys must stay well under its 1,978-byte key limit. */
export const MAX_PATH_CHARS = 512;

// Control characters are refused in path segments: they make keys unreadable in logs and tools.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;

/**
 * Splits `/a/b/c` into segments. Leading and trailing slashes are ignored; an empty inner
 * segment (`a//b`), an empty path, control characters or an over-deep path give undefined.
 */
export function parsePath(ref: string): string[] | undefined {
  const trimmed = ref.replace(/^\/+/, "").replace(/\/+$/, "");
  if (trimmed === "") return undefined;
  const segments = trimmed.split("/");
  if (segments.length > MAX_PATH_DEPTH || trimmed.length + 1 > MAX_PATH_CHARS) return undefined;
  for (const segment of segments) {
    if (segment === "" || segment.length > MAX_PATH_SEGMENT_CHARS || CONTROL_CHARS.test(segment))
      return undefined;
  }
  return segments;
}

export function joinPath(segments: readonly string[]): string {
  return `/${segments.join("/")}`;
}

/**
 * The checksum form of an address segment, or undefined if it is not an address. `known`: a
 * checksum address the segment is likely to be (the sender's, in its own paths): written exactly
 * so, it is its own checksum form, and the pattern check and the keccak are skipped (about 1.7 µs
 * of every transfer's classification, at admission and again at execution).
 */
export function normalizeAddressSegment(segment: string, known?: string): string | undefined {
  if (segment === known) return known;
  return isAddress(segment) ? toChecksumAddress(segment) : undefined;
}

export const balancePath = (address: string): string => `/account/${address}/balance`;
export const noncePath = (address: string): string => `/account/${address}/nonce`;
export const stakePath = (address: string): string => `/account/${address}/stake`;
