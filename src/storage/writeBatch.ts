import type { Database, Key } from "lmdb";
import { type FailpointName, failpoint } from "../faults/index.ts";

/** Writes to the environment's tables: made at once (inside a write transaction) or recorded. */
export interface TableWrites {
  put<V, K extends Key>(table: Database<V, K>, key: K, value: V): void;
  remove<V, K extends Key>(table: Database<V, K>, key: K): void;
}

/** Writes made at once: for code already inside a write transaction. */
export const directWrites: TableWrites = {
  put: (table, key, value) => {
    table.put(key, value);
  },
  remove: (table, key) => {
    table.remove(key);
  },
};

/** Marks a removal in WriteBatch's value list (no stored value is this object). */
const REMOVE = Symbol("remove");
/** Marks a failpoint in WriteBatch's table list. */
const FAILPOINT = Symbol("failpoint");

/**
 * Writes recorded in order, to be made later by `apply` in one write: a block's write is first
 * planned here (reading only committed data, and free to throw: nothing is written yet), then
 * applied where nothing but puts and removes run. So the write itself could be made elsewhere
 * (lmdb-js's writer thread: an lmdb-js `batch` commits whatever its callback wrote even when the
 * callback throws; tried, docs/performance.md).
 *
 * Reads made while planning do not see the plan's own writes.
 */
export class WriteBatch implements TableWrites {
  private readonly tables: (Database<unknown, Key> | typeof FAILPOINT)[] = [];
  private readonly keys: (Key | FailpointName)[] = [];
  private readonly values: unknown[] = [];

  /** Writes recorded so far. */
  get size(): number {
    return this.tables.length;
  }

  put<V, K extends Key>(table: Database<V, K>, key: K, value: V): void {
    this.tables.push(table as Database<unknown, Key>);
    this.keys.push(key);
    this.values.push(value);
  }

  remove<V, K extends Key>(table: Database<V, K>, key: K): void {
    this.tables.push(table as Database<unknown, Key>);
    this.keys.push(key);
    this.values.push(REMOVE);
  }

  /** The failpoint `name` fires at this place of `apply` (crash tests kill the write there). */
  failpoint(name: FailpointName): void {
    this.tables.push(FAILPOINT);
    this.keys.push(name);
    this.values.push(undefined);
  }

  /** Makes the recorded writes, in order. Call inside a write transaction or an lmdb-js batch. */
  apply(): void {
    const { tables, keys, values } = this;
    for (let i = 0; i < tables.length; i++) {
      const table = tables[i] as Database<unknown, Key> | typeof FAILPOINT;
      if (table === FAILPOINT) failpoint(keys[i] as FailpointName);
      else if (values[i] === REMOVE) table.remove(keys[i] as Key);
      else table.put(keys[i] as Key, values[i]);
    }
  }
}
