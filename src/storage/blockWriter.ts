import { Worker } from "node:worker_threads";
import type { Database, Key } from "lmdb";
import { DATABASES, ENVIRONMENT_OPTIONS, TABLE_OPTIONS, type TableName } from "./schema.ts";
import type { WriteBatch } from "./writeBatch.ts";

interface Waiting {
  resolve(): void;
  reject(error: Error): void;
}

/**
 * The store's block writer: a thread of its own (blockWriterThread.mjs) that makes a block's
 * planned writes in one LMDB write transaction and commits it, durable, while this thread goes on.
 * Started at the first write; one write at a time (the store's commits are sequential). A thread
 * that dies fails the writes it held, and the next write starts another.
 */
export class BlockWriter {
  private readonly path: string;
  /** The tables' order is the thread's: a message names a table by its index here. */
  private readonly tableIndex: Map<Database<unknown, Key>, number>;
  private readonly tableNames: TableName[];
  private worker: Worker | undefined;
  /**
   * The id of the last write the thread committed, stored by the thread right after the commit:
   * `committed` reads it without waiting for the thread's message.
   */
  private readonly lastCommitted = new Int32Array(new SharedArrayBuffer(4));
  private readonly waiting = new Map<number, Waiting>();
  private nextId = 1;

  /** `tables`: the store's open tables, by name; the thread opens the same ones alike. */
  constructor(path: string, tables: ReadonlyMap<TableName, Database<unknown, Key>>) {
    this.path = path;
    this.tableIndex = new Map([...tables.values()].map((table, i) => [table, i]));
    this.tableNames = [...tables.keys()];
  }

  /**
   * Makes `batch` in one write transaction on the thread: `done` resolves once it has committed,
   * and `committed()` says at any moment whether it has (true from the commit on, maybe before
   * `done` resolves).
   */
  write(batch: WriteBatch): { done: Promise<void>; committed: () => boolean } {
    const { message, transfer } = batch.toMessage((table) => {
      const index = this.tableIndex.get(table);
      if (index === undefined) throw new Error("BlockWriter: a write to a table it was not given");
      return index;
    });
    const worker = this.started();
    const id = this.nextId++;
    const done = new Promise<void>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      worker.ref(); // a write under way keeps the process alive until it ends
      worker.postMessage({ id, write: message }, transfer);
    });
    return { done, committed: () => Atomics.load(this.lastCommitted, 0) >= id };
  }

  /** Ends the thread (after the writes under way), closing its handle on the environment. */
  async close(): Promise<void> {
    const worker = this.worker;
    if (worker === undefined) return;
    this.worker = undefined;
    await new Promise<void>((resolve) => {
      worker.once("exit", () => resolve());
      worker.on("message", (message: { closed?: boolean }) => {
        if (message.closed === true) void worker.terminate();
      });
      worker.ref();
      worker.postMessage({ close: true });
    });
  }

  private started(): Worker {
    if (this.worker !== undefined) return this.worker;
    const tables = this.tableNames.map((name) => ({ name: DATABASES[name], options: TABLE_OPTIONS[name] }));
    const worker = new Worker(new URL("./blockWriterThread.mjs", import.meta.url), {
      execArgv: [], // the parent's --import flags (tsx under the tests) are not needed here
      workerData: {
        path: this.path,
        environment: ENVIRONMENT_OPTIONS,
        tables,
        lastCommitted: this.lastCommitted,
      },
    });
    worker.unref();
    worker.on("message", (message: { id?: number; error?: string }) => {
      if (message.id === undefined) return;
      const waiting = this.waiting.get(message.id);
      this.waiting.delete(message.id);
      if (this.waiting.size === 0) worker.unref();
      if (message.error === undefined) waiting?.resolve();
      else waiting?.reject(new Error(`block write failed: ${message.error}`));
    });
    const lost = (error: Error) => {
      if (this.worker === worker) this.worker = undefined;
      for (const waiting of this.waiting.values()) waiting.reject(error);
      this.waiting.clear();
    };
    worker.on("error", lost);
    worker.on("exit", (code) => lost(new Error(`the block writer thread exited (code ${code})`)));
    this.worker = worker;
    return worker;
  }
}
