import { balancePath, noncePath, stakePath } from "./path.ts";
import type { JsonValue } from "./types.ts";

/**
 * The state is a JSON tree kept as flat leaves: every non-object value lives at its full path
 * (`/account/0xAb…/balance` → 5). Objects are spread into leaves; arrays are leaves.
 * The store is committed state; a StateOverlay collects one block's writes on top of it.
 */
export interface StateReader {
  /** The leaf at `path`, or undefined. */
  getLeaf(path: string): JsonValue | undefined;
  /** Paths of all leaves strictly below `path` (committed state only). */
  leafPathsBelow(path: string): Iterable<string>;
}

function readNumber(state: StateReader, path: string): number {
  const value = state.getLeaf(path);
  return typeof value === "number" ? value : 0;
}

export const balanceOf = (state: StateReader, address: string): number =>
  readNumber(state, balancePath(address));
export const nonceOf = (state: StateReader, address: string): number => readNumber(state, noncePath(address));
export const stakeOf = (state: StateReader, address: string): number => readNumber(state, stakePath(address));

/** Writes are leaf → value, or leaf → null for a deletion. */
export type StateChanges = Map<string, JsonValue | null>;

export class StateOverlay implements StateReader {
  private readonly base: StateReader;
  private readonly writes: StateChanges;
  /**
   * Each ancestor path → the written paths strictly below it, built on the first
   * leafPathsBelow and kept up to date from then on. Scanning every write instead made a block
   * of SET_VALUE writes quadratic in its size: 3.1 s of 5.3 s executing 5,000-transaction blocks
   * of `/users` writes (docs/performance.md, issue 20). A block of transfers never asks, and never
   * pays for the index.
   */
  private below: Map<string, Set<string>> | undefined;

  /**
   * `writes`, when given, are a block's changes already made (ExecutedBlock.changes): the overlay
   * then reads as the state after that block, for the next one to execute on while it is written.
   */
  constructor(base: StateReader, writes: StateChanges = new Map()) {
    this.base = base;
    this.writes = writes;
  }

  getLeaf(path: string): JsonValue | undefined {
    const written = this.writes.get(path);
    if (written !== undefined) return written === null ? undefined : written;
    return this.base.getLeaf(path);
  }

  *leafPathsBelow(path: string): Iterable<string> {
    for (const below of this.base.leafPathsBelow(path)) {
      if (!this.writes.has(below)) yield below;
    }
    for (const written of this.writtenBelow(path)) {
      if (this.writes.get(written) !== null) yield written;
    }
  }

  setLeaf(path: string, value: JsonValue): void {
    this.write(path, value);
  }

  /**
   * SET_VALUE semantics on the tree: the subtree at `path` is replaced by `value` (null or {}
   * deletes it), and any ancestor that was a leaf stops being one.
   */
  setValue(path: string, value: JsonValue): void {
    for (const below of [...this.leafPathsBelow(path)]) this.write(below, null);
    let cut = path.lastIndexOf("/");
    while (cut > 0) {
      const ancestor = path.slice(0, cut);
      if (this.getLeaf(ancestor) !== undefined) this.write(ancestor, null);
      cut = ancestor.lastIndexOf("/");
    }
    this.write(path, null);
    this.spread(path, value);
  }

  changes(): StateChanges {
    return this.writes;
  }

  private write(path: string, value: JsonValue | null): void {
    if (this.below !== undefined && !this.writes.has(path)) indexUnderAncestors(this.below, path);
    this.writes.set(path, value);
  }

  /** The written paths strictly below `path` (any value, deletions too). */
  private writtenBelow(path: string): Iterable<string> {
    if (this.below === undefined) {
      this.below = new Map();
      for (const written of this.writes.keys()) indexUnderAncestors(this.below, written);
    }
    return this.below.get(path) ?? [];
  }

  private spread(path: string, value: JsonValue): void {
    if (value === null) return;
    if (typeof value === "object" && !Array.isArray(value)) {
      for (const [key, member] of Object.entries(value)) this.spread(`${path}/${key}`, member);
      return;
    }
    this.write(path, value);
  }
}

/** Adds `path` to the set of each of its ancestors ("" for the root, then "/a", "/a/b", …). */
function indexUnderAncestors(index: Map<string, Set<string>>, path: string): void {
  for (let cut = path.indexOf("/"); cut >= 0; cut = path.indexOf("/", cut + 1)) {
    const ancestor = path.slice(0, cut);
    let set = index.get(ancestor);
    if (set === undefined) {
      set = new Set();
      index.set(ancestor, set);
    }
    set.add(path);
  }
}
