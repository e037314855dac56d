import { joinPath, normalizeAddressSegment, parsePath } from "./path.ts";
import type { JsonValue } from "./types.ts";

/**
 * Reading the data tree back as JSON. The state keeps objects spread into leaves (state.ts), so
 * the value at a path is its leaf, or the object its leaves below rebuild, or null.
 */

/** Where a state's leaves are read from: the head's flat table, or a past state's trie. */
export interface LeafReader {
  getLeaf(path: string): JsonValue | undefined;
  /** The leaves strictly below `path`, with their values, in path order. */
  leavesBelow(path: string): Iterable<readonly [string, JsonValue]>;
}

/** The segments writes normalise to checksum addresses (operation.ts): reads do the same. */
const ADDRESS_SEGMENTS: ReadonlyMap<string, readonly number[]> = new Map([
  ["account", [1]],
  ["transfer", [1, 2]],
  ["staking", [1]],
  ["users", [1]],
]);

/**
 * The path a read names, as writes store it: one leading slash, no trailing one, addresses in
 * checksum form where writes put them (`/users/0xabc…` reads `/users/0xAbC…`). Undefined for a
 * malformed path. Other segments are kept exactly: object keys under /users are case-sensitive.
 */
export function normalizeReadPath(ref: string): string | undefined {
  const segments = parsePath(ref);
  if (segments === undefined) return undefined;
  // A Map, not an object literal: a path named /constructor or /__proto__ is data, not a lookup of Object's.
  for (const at of ADDRESS_SEGMENTS.get(segments[0] as string) ?? []) {
    const segment = segments[at];
    const address = segment === undefined ? undefined : normalizeAddressSegment(segment);
    if (address !== undefined) segments[at] = address;
  }
  return joinPath(segments);
}

/** The subtree at a path holds more leaves than one answer may carry. */
export class TooManyLeavesError extends Error {
  readonly limit: number;

  constructor(path: string, limit: number) {
    super(`${path} holds more than ${limit} leaves; read a narrower path`);
    this.name = "TooManyLeavesError";
    this.limit = limit;
  }
}

/**
 * The leaves below `path`, at most `limit` of them (more throws TooManyLeavesError): the answer
 * is whole or refused, never silently cut.
 */
export function boundedLeavesBelow(
  reader: LeafReader,
  path: string,
  limit: number,
): Array<readonly [string, JsonValue]> {
  const leaves: Array<readonly [string, JsonValue]> = [];
  for (const entry of reader.leavesBelow(path)) {
    if (leaves.length === limit) throw new TooManyLeavesError(path, limit);
    leaves.push(entry);
  }
  return leaves;
}

/** The JSON value at `path` (normalised): its leaf, its subtree as one object, or null. */
export function readValue(reader: LeafReader, path: string, maxLeaves: number): JsonValue {
  const leaf = reader.getLeaf(path);
  if (leaf !== undefined) return leaf;
  const leaves = boundedLeavesBelow(reader, path, maxLeaves);
  return leaves.length === 0 ? null : rebuildObject(path, leaves);
}

/**
 * The object whose spread into leaves below `path` gives `leaves` (each strictly below it).
 * Objects have no prototype: a key a user wrote, such as `__proto__`, stays an ordinary key.
 */
export function rebuildObject(path: string, leaves: Iterable<readonly [string, JsonValue]>): JsonValue {
  const root = newObject();
  const skip = path.length + 1;
  for (const [leafPath, value] of leaves) {
    const segments = leafPath.slice(skip).split("/");
    let at = root;
    for (let i = 0; i < segments.length - 1; i++) {
      const key = segments[i] as string;
      const next = at[key];
      if (next === undefined || next === null || typeof next !== "object" || Array.isArray(next)) {
        const made = newObject();
        at[key] = made;
        at = made;
      } else {
        at = next;
      }
    }
    at[segments[segments.length - 1] as string] = value;
  }
  return root;
}

const newObject = (): Record<string, JsonValue> => Object.create(null) as Record<string, JsonValue>;
