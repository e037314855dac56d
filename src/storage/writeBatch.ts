import type { Database, Key } from "lmdb";
import { type FailpointName, failpoint, failpointDue, failpointLine } from "../faults/index.ts";
import { packSpans } from "./packedSpans.ts";

/**
 * Writes to the environment's tables, and the failpoints between them: made at once (inside a
 * write transaction) or recorded (WriteBatch).
 */
export interface TableWrites {
  put<V, K extends Key>(table: Database<V, K>, key: K, value: V): void;
  remove<V, K extends Key>(table: Database<V, K>, key: K): void;
  failpoint(name: FailpointName): void;
}

/** Writes made at once: for code already inside a write transaction. */
export const directWrites: TableWrites = {
  put: (table, key, value) => {
    table.put(key, value);
  },
  remove: (table, key) => {
    table.remove(key);
  },
  failpoint,
};

/**
 * A WriteBatch for the block writer thread (blockWriterThread.mjs), op by op: its kind (WRITE_OP,
 * plus PACKED_KEY / PACKED_VALUE), the table's index in the thread's table list, the key and the
 * value (a put's; a kill's stderr line). Byte keys and values (trie records, history entries:
 * tens of thousands a block) travel packed in one buffer, `bytes`, cut at `ends`: a key or value
 * marked packed is the index of its span. Everything else is structured-cloned, and the thread
 * encodes the values as the store would.
 */
export interface WriteMessage {
  kinds: Uint8Array;
  tables: Uint8Array;
  keys: unknown[];
  values: unknown[];
  bytes: Uint8Array;
  ends: Uint32Array;
}

/** The kinds of WriteMessage's ops and their flags; blockWriterThread.mjs spells the same numbers. */
const WRITE_OP = { put: 0, remove: 1, kill: 2, packedKey: 4, packedValue: 8 } as const;

/** Marks a removal in WriteBatch's value list (no stored value is this object). */
const REMOVE = Symbol("remove");
/** Marks a failpoint in WriteBatch's table list. */
const FAILPOINT = Symbol("failpoint");

/**
 * Writes recorded in order, to be made later in one write by the block writer thread
 * (toMessage): a block's write is first planned here (reading only committed data, and free to
 * throw: nothing is written yet).
 *
 * Reads made while planning do not see the plan's own writes.
 */
export class WriteBatch implements TableWrites {
  private tables: (Database<unknown, Key> | typeof FAILPOINT)[] = [];
  private keys: (Key | FailpointName)[] = [];
  private values: unknown[] = [];

  /** Writes (and failpoints) recorded since the last toMessage. */
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

  /** The failpoint `name` fires at this place of the write (crash tests kill the write there). */
  failpoint(name: FailpointName): void {
    this.tables.push(FAILPOINT);
    this.keys.push(name);
    this.values.push(undefined);
  }

  /**
   * The writes recorded since the last call as a message for the block writer thread, tables by
   * `tableIndex`; the batch is then empty. A failpoint is counted here, in order, as a write made
   * at once would; the one due becomes a kill at its place.
   */
  toMessage(tableIndex: (table: Database<unknown, Key>) => number): {
    message: WriteMessage;
    transfer: ArrayBuffer[];
  } {
    const { tables, keys, values } = this;
    this.tables = [];
    this.keys = [];
    this.values = [];
    const kinds = new Uint8Array(tables.length);
    const at = new Uint8Array(tables.length);
    const message: WriteMessage = {
      kinds,
      tables: at,
      keys: [],
      values: [],
      bytes: new Uint8Array(0),
      ends: new Uint32Array(0),
    };
    const spans: Uint8Array[] = [];
    // A byte string becomes the index of its span in `bytes` (packSpans).
    const pack = (bytes: Uint8Array): number => spans.push(bytes) - 1;
    let n = 0;
    for (let i = 0; i < tables.length; i++) {
      const table = tables[i] as Database<unknown, Key> | typeof FAILPOINT;
      if (table === FAILPOINT) {
        const name = keys[i] as FailpointName;
        if (!failpointDue(name)) continue;
        kinds[n] = WRITE_OP.kill;
        message.keys.push(name);
        message.values.push(failpointLine(name));
      } else {
        const key = keys[i];
        const value = values[i];
        let kind: number = value === REMOVE ? WRITE_OP.remove : WRITE_OP.put;
        if (key instanceof Uint8Array) kind |= WRITE_OP.packedKey;
        if (value instanceof Uint8Array) kind |= WRITE_OP.packedValue;
        kinds[n] = kind;
        at[n] = tableIndex(table);
        message.keys.push(key instanceof Uint8Array ? pack(key) : key);
        message.values.push(value instanceof Uint8Array ? pack(value) : value === REMOVE ? undefined : value);
      }
      n++;
    }
    message.kinds = kinds.subarray(0, n);
    message.tables = at.subarray(0, n);
    ({ bytes: message.bytes, ends: message.ends } = packSpans(spans));
    // All four were made here, on ArrayBuffers of their own: moved to the thread, not copied.
    const transfer = [kinds.buffer, at.buffer, message.bytes.buffer, message.ends.buffer] as ArrayBuffer[];
    return { message, transfer };
  }
}
