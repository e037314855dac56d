import { ProofVerificationError } from "./errors.ts";

/**
 * A strict RLP decoder (Ethereum yellow paper, appendix B), only as much as proof checking needs.
 * Strict means one encoding per value: a single byte below 0x80 written with a length prefix, a
 * long form for fewer than 56 bytes, a length with leading zero bytes, or anything after the item
 * is refused. The hashes already pin every byte of a proof; strictness keeps the decoder from
 * reading two different trees out of one node, whatever the input.
 */

/** A byte string, or a list with its own encoding (an embedded trie node is checked by it). */
export type RlpItem = Uint8Array | RlpList;

export interface RlpList {
  readonly items: readonly RlpItem[];
  /** The list's encoding, prefix included (a view into the decoded input). */
  readonly encoded: Uint8Array;
}

export const isRlpList = (item: RlpItem): item is RlpList => !(item instanceof Uint8Array);

/**
 * Lists within one another, at most. A trie node is at most three deep (an extension holding an
 * embedded branch holding an embedded leaf); the bound keeps a hostile input from exhausting the stack.
 */
const MAX_DEPTH = 8;

/** Lengths above this are refused before any arithmetic: no trie node comes near 16 MiB. */
const MAX_LENGTH_OF_LENGTH_BYTES = 3;

function malformed(message: string): ProofVerificationError {
  return new ProofVerificationError("malformed_node", `RLP: ${message}`);
}

/** Decodes exactly one item that spans all of `input`. Throws ProofVerificationError (`malformed_node`). */
export function decodeRlp(input: Uint8Array): RlpItem {
  const { item, end } = decodeItem(input, 0, input.length, 0);
  if (end !== input.length) throw malformed(`${input.length - end} bytes after the item`);
  return item;
}

interface Decoded {
  item: RlpItem;
  /** Offset just past the item. */
  end: number;
}

/** Decodes the item at `start`, which must end at or before `limit` (its enclosing list's end). */
function decodeItem(input: Uint8Array, start: number, limit: number, depth: number): Decoded {
  if (start >= limit) throw malformed("an item is missing its prefix");
  const prefix = input[start] as number;
  if (prefix < 0x80) return { item: input.subarray(start, start + 1), end: start + 1 };
  if (prefix < 0xc0) {
    const { offset, length } = readLength(input, start, limit, prefix - 0x80);
    const bytes = input.subarray(offset, offset + length);
    if (length === 1 && (bytes[0] as number) < 0x80) throw malformed("a single byte below 0x80 has a prefix");
    return { item: bytes, end: offset + length };
  }
  if (depth === MAX_DEPTH) throw malformed(`more than ${MAX_DEPTH} lists deep`);
  const { offset, length } = readLength(input, start, limit, prefix - 0xc0);
  const end = offset + length;
  const items: RlpItem[] = [];
  let at = offset;
  while (at < end) {
    const decoded = decodeItem(input, at, end, depth + 1);
    items.push(decoded.item);
    at = decoded.end;
  }
  return { item: { items, encoded: input.subarray(start, end) }, end };
}

/**
 * The payload's offset and length for a prefix whose value above its base (0x80 or 0xc0) is
 * `short`: 0–55 is the length itself, 56–63 the count of big-endian length bytes that follow.
 */
function readLength(
  input: Uint8Array,
  start: number,
  limit: number,
  short: number,
): { offset: number; length: number } {
  let offset = start + 1;
  let length = short;
  if (short > 55) {
    const lengthBytes = short - 55;
    if (lengthBytes > MAX_LENGTH_OF_LENGTH_BYTES) throw malformed(`a length of ${lengthBytes} bytes`);
    if (offset + lengthBytes > limit) throw malformed("the length runs past the end");
    if (input[offset] === 0) throw malformed("a length with a leading zero byte");
    length = 0;
    for (let i = 0; i < lengthBytes; i++) length = length * 256 + (input[offset + i] as number);
    if (length < 56) throw malformed(`the long form for a length of ${length}`);
    offset += lengthBytes;
  }
  if (offset + length > limit) throw malformed(`a payload of ${length} bytes runs past the end`);
  return { offset, length };
}
