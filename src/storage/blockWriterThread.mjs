// The store's block writer thread (blockWriter.ts): makes each block's planned writes
// (WriteBatch.toMessage; the parts sent ahead of it, then the write's own message) in one LMDB
// write transaction of its own, so that the node's event loop answers reads and admits
// transactions while LMDB writes pages and syncs them. It shares the
// node's environment (lmdb-js opens one LMDB environment per path and process) and its tables'
// encodings (schema.ts TABLE_OPTIONS, passed in). Plain JavaScript with lmdb-js alone: it starts
// in milliseconds, without the TypeScript loader.
import { writeSync } from "node:fs";
import { parentPort, workerData } from "node:worker_threads";
import { open } from "lmdb";

/** writeBatch.ts WRITE_OP: the kind in the low bits, flags above. */
const KIND = 3;
const PUT = 0;
const KILL = 2;
const PACKED_KEY = 4;
const PACKED_VALUE = 8;

// began[0]: the id of the last write whose transaction began, i.e. that holds LMDB's write lock
// (blockWriter.ts's slow-write report).
const { path, environment, tables, began } = workerData;
const root = open({ path, ...environment });
/** In the order of blockWriter.ts's table list: a message names a table by its index. */
const databases = tables.map(({ name, options }) => root.openDB({ name, ...options }));

/** Makes one message's writes (WriteBatch.toMessage), inside the caller's transaction. */
function makeWrites({ kinds, tables: at, keys, values, bytes, ends }) {
  /** Span `j` of the packed byte strings (a view: nothing copied). */
  const span = (j) => bytes.subarray(j === 0 ? 0 : ends[j - 1], ends[j]);
  for (let i = 0; i < kinds.length; i++) {
    const kind = kinds[i] & KIND;
    if (kind === KILL) {
      // A failpoint (faults/failpoints.ts): die inside the transaction, with SIGKILL semantics.
      writeSync(2, values[i]);
      process.kill(process.pid, "SIGKILL");
      continue;
    }
    const database = databases[at[i]];
    const key = kinds[i] & PACKED_KEY ? span(keys[i]) : keys[i];
    if (kind === PUT) database.put(key, kinds[i] & PACKED_VALUE ? span(values[i]) : values[i]);
    else database.remove(key);
  }
}

/** The parts sent ahead of write `id` (BlockWriter.begin); those of an older id are dropped. */
let pending = { id: 0, parts: [] };

parentPort.on("message", (message) => {
  if (message.close === true) {
    root.close().then(() => parentPort.postMessage({ closed: true }));
    return;
  }
  const { id, part, write } = message;
  if (part !== undefined) {
    if (pending.id !== id) pending = { id, parts: [] };
    pending.parts.push(part);
    return;
  }
  const parts = pending.id === id ? pending.parts : [];
  pending = { id: 0, parts: [] };
  if (parts.length !== message.parts) {
    const error = `${message.parts} parts were sent ahead of the write and ${parts.length} arrived`;
    parentPort.postMessage({ id, error });
    return;
  }
  try {
    root.transactionSync(() => {
      Atomics.store(began, 0, id);
      for (const each of parts) makeWrites(each);
      makeWrites(write);
    });
    parentPort.postMessage({ id });
  } catch (error) {
    // Nothing of the transaction was written (it aborted); the store rejects the block's write.
    parentPort.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
  }
});
