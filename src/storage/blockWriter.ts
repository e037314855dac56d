import { Worker } from "node:worker_threads";
import type { Database, Key } from "lmdb";
import { DATABASES, ENVIRONMENT_OPTIONS, TABLE_OPTIONS, type TableName } from "./schema.ts";
import type { WriteBatch } from "./writeBatch.ts";

interface Waiting {
  resolve(): void;
  reject(error: Error): void;
}

/**
 * A block write that has run `elapsedMs` without committing (reported every `slowMs`, 5 s by
 * default, until it does): `lockHeld` says whether the thread's transaction has begun. If not, it waits for
 * LMDB's write lock, which another writer holds (this process's pool journal or pruning, or
 * another process on the same home); if so, the thread is writing or committing (the disk).
 */
export interface SlowBlockWrite {
  elapsedMs: number;
  lockHeld: boolean;
}

/** A write on the thread under way: see BlockWriter.write. */
export interface ThreadWrite {
  /** Resolves once the write has committed. */
  done: Promise<void>;
}

/** A write sent in parts: see BlockWriter.begin. */
export interface PartedWrite {
  sendPart(batch: WriteBatch): void;
  write(batch: WriteBatch): ThreadWrite;
}

/** How long a block write runs before it is reported, and how often after that. */
const SLOW_WRITE_MS = 5_000;

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
  /** Stored by the thread: the id of the last write whose transaction began (it holds LMDB's write lock). */
  private readonly began = new Int32Array(new SharedArrayBuffer(4));
  private readonly waiting = new Map<number, Waiting>();
  private nextId = 1;
  private readonly onSlow: ((report: SlowBlockWrite) => void) | undefined;
  private readonly slowMs: number;

  /**
   * `tables`: the store's open tables, by name; the thread opens the same ones alike. `onSlow` is
   * told of a write that has not committed after `slowMs`, and again every `slowMs` until it does.
   */
  constructor(
    path: string,
    tables: ReadonlyMap<TableName, Database<unknown, Key>>,
    onSlow?: (report: SlowBlockWrite) => void,
    slowMs = SLOW_WRITE_MS,
  ) {
    this.path = path;
    this.tableIndex = new Map([...tables.values()].map((table, i) => [table, i]));
    this.tableNames = [...tables.keys()];
    this.onSlow = onSlow;
    this.slowMs = slowMs;
  }

  /**
   * Makes `batch` in one write transaction on the thread: `done` resolves once it has committed.
   */
  write(batch: WriteBatch): ThreadWrite {
    return this.begin().write(batch);
  }

  /**
   * A write whose batch is sent in parts as it is planned (`sendPart` takes what the batch
   * recorded so far, which it then no longer holds), all made in one transaction with the
   * batch's rest when `write` sends that: a large block's hand-over in pieces copied between
   * turns of the event loop, not ~20 ms of it in one. The thread counts the parts: if one did not
   * reach it (the thread died and another started), the write fails instead of making the rest.
   * A write begun and never made (its plan failed) is dropped by the thread at the next one.
   */
  begin(): PartedWrite {
    const id = this.nextId++;
    let parts = 0;
    return {
      sendPart: (batch) => {
        const { message, transfer } = batch.toMessage(this.indexOf);
        this.started().postMessage({ id, part: message }, transfer);
        parts++;
      },
      write: (batch) => this.send(id, batch, parts),
    };
  }

  private send(id: number, batch: WriteBatch, parts: number): ThreadWrite {
    const { message, transfer } = batch.toMessage(this.indexOf);
    const worker = this.started();
    const done = new Promise<void>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      worker.ref(); // a write under way keeps the process alive until it ends
      worker.postMessage({ id, write: message, parts }, transfer);
    });
    if (this.onSlow !== undefined) this.watch(id, done, this.onSlow);
    return { done };
  }

  private readonly indexOf = (table: Database<unknown, Key>): number => {
    const index = this.tableIndex.get(table);
    if (index === undefined) throw new Error("BlockWriter: a write to a table it was not given");
    return index;
  };

  /** Reports write `id` to `onSlow` every slowMs until `done` settles. */
  private watch(id: number, done: Promise<void>, onSlow: (report: SlowBlockWrite) => void): void {
    const started = performance.now();
    const timer = setInterval(() => {
      onSlow({
        elapsedMs: Math.round(performance.now() - started),
        lockHeld: Atomics.load(this.began, 0) >= id,
      });
    }, this.slowMs);
    timer.unref();
    const stop = () => clearInterval(timer);
    done.then(stop, stop);
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
        began: this.began,
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
