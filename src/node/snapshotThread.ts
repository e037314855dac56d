import { Worker } from "node:worker_threads";
import type { FailpointSpec } from "../faults/index.ts";

/** What the thread is started with (worker data). */
export interface SnapshotThreadData {
  home: string;
  data: string;
  /** Block 0's hash, as the node's chain checked it against genesis.json when it opened. */
  genesisHash: string | undefined;
  failpoint: FailpointSpec | undefined;
  chunkTargetBytes: number | undefined;
  /** Set to 1 by `close`: a snapshot under way stops between chunks. */
  stop: Int32Array;
}

export interface SnapshotRequest {
  id: number;
  height: number;
  path: string;
}

/** Replies, in order: `opened` (the head its read transaction sees), then one of the others. */
export type SnapshotReply =
  | { ready: true }
  | { id: number; opened: number }
  | { id: number; skipped: number }
  | { id: number; written: { chunks: number; leaves: number } }
  | { id: number; aborted: true }
  | { id: number; error: string };

/** How one snapshot ended (after `opened`). */
export type SnapshotOutcome = Exclude<SnapshotReply, { ready: true } | { opened: number }>;

/** A snapshot asked of the thread: when its read transaction is open, and how it ended. */
export interface SnapshotJob {
  /** Resolves once the thread's read transaction is open (or the thread failed): never rejects. */
  opened: Promise<void>;
  ended: Promise<SnapshotOutcome>;
}

/** How long `close` waits for the thread to exit by itself before terminating it. */
const EXIT_WAIT_MS = 5_000;

/**
 * A thread that writes the node's periodic snapshots (snapshotThreadWorker.ts): the encoding,
 * hashing and writing of a snapshot (seconds at a million accounts) leave the event loop. One
 * snapshot at a time (PeriodicSnapshots asks for the next only once one has ended).
 */
export class SnapshotThread {
  private readonly worker: Worker;
  private readonly stop: Int32Array;
  private readonly ready: Promise<void>;
  /** Jobs not yet ended, by id: how to settle each, and its `ended` (what close awaits). */
  private readonly pending = new Map<
    number,
    { opened: () => void; ended: (o: SnapshotOutcome) => void; job: SnapshotJob }
  >();
  private nextId = 1;
  private exited = false;

  constructor(params: Omit<SnapshotThreadData, "stop">) {
    this.stop = new Int32Array(new SharedArrayBuffer(4));
    const data: SnapshotThreadData = { ...params, stop: this.stop };
    this.worker = new Worker(new URL("./snapshotThreadEntry.mjs", import.meta.url), {
      execArgv: [],
      workerData: data,
    });
    this.worker.unref();
    let ready: () => void = () => undefined;
    this.ready = new Promise<void>((resolve) => {
      ready = resolve;
    });
    this.worker.on("message", (reply: SnapshotReply) => {
      if ("ready" in reply) return ready();
      const waiting = this.pending.get(reply.id);
      if (waiting === undefined) return;
      if ("opened" in reply) return waiting.opened();
      this.pending.delete(reply.id);
      waiting.opened();
      waiting.ended(reply);
    });
    const failAll = (why: string): void => {
      this.exited = true;
      ready();
      for (const [id, waiting] of this.pending) {
        waiting.opened();
        waiting.ended({ id, error: why });
      }
      this.pending.clear();
    };
    this.worker.on("error", (error) => failAll(`the snapshot thread failed: ${error.message}`));
    this.worker.on("exit", (code) => failAll(`the snapshot thread exited (code ${code})`));
  }

  /** Asks for a snapshot of `height` (the head now) written to `path`. */
  take(height: number, path: string): SnapshotJob {
    const id = this.nextId++;
    let opened: () => void = () => undefined;
    let ended: (outcome: SnapshotOutcome) => void = () => undefined;
    const job: SnapshotJob = {
      opened: new Promise<void>((resolve) => {
        opened = resolve;
      }),
      ended: new Promise<SnapshotOutcome>((resolve) => {
        ended = resolve;
      }),
    };
    if (this.exited) {
      opened();
      ended({ id, error: "the snapshot thread is not running" });
      return job;
    }
    this.pending.set(id, { opened, ended, job });
    void this.ready.then(() => {
      if (!this.exited) this.worker.postMessage({ id, height, path } satisfies SnapshotRequest);
    });
    return job;
  }

  /**
   * Stops the thread: a snapshot under way is abandoned between two chunks (its partial file
   * removed) and awaited, then the thread closes its environment and exits by itself. It is
   * terminated (which may abort inside LMDB's native code) only if it has not exited EXIT_WAIT_MS
   * after the stop began.
   */
  async close(): Promise<void> {
    if (this.exited) return;
    Atomics.store(this.stop, 0, 1);
    const exit = new Promise<void>((resolve) => this.worker.once("exit", () => resolve()));
    // Also while it starts or abandons a snapshot: a node's stop must not wait on it for good.
    const timer = setTimeout(() => void this.worker.terminate(), EXIT_WAIT_MS);
    await this.ready;
    await Promise.all([...this.pending.values()].map(({ job }) => job.ended));
    if (!this.exited) this.worker.postMessage({ close: true });
    await exit;
    clearTimeout(timer);
  }
}
