import { MessageChannel, type MessagePort, Worker } from "node:worker_threads";
import {
  checkSignedHash,
  type SignatureVerifier,
  type SignedHashJob,
  type SignedHashResult,
  type VerifyLane,
} from "../crypto/index.ts";

interface QueuedJob {
  job: SignedHashJob;
  resolve(result: SignedHashResult): void;
}

interface Thread {
  worker: Worker;
  /** Where interactive jobs go (bulk ones go to `worker`): the worker looks at it between checks. */
  interactive: MessagePort;
  /** Jobs sent and not yet answered, by batch id. */
  batches: Map<number, QueuedJob[]>;
  /** How many jobs `batches` holds. */
  pending: number;
  /** How many of those are interactive. */
  interactivePending: number;
  alive: boolean;
  /** Set to 1 by close(): the worker stops between two checks and exits (see signatureWorker.ts). */
  stop: Int32Array;
}

/** Jobs below this go to one thread; a larger turn is split over all of them. */
const SPLIT_AT = 16;
/**
 * Most jobs in one message (about 16 ms of checks). A thread answers a message whole, so a block
 * sync's thousands of signatures in two messages held the first block until half of them were
 * checked; in messages of this size the first blocks' results come back while the rest are checked.
 */
export const MAX_JOBS_PER_MESSAGE = 256;

/** How long close() lets a thread stop by itself before it terminates it, ms. */
const STOP_GRACE_MS = 2_000;

/**
 * Signature checks (keccak of the body, secp256k1 recovery, address) on worker threads, so that
 * admission uses every core while the event loop parses requests and runs the stateful checks.
 *
 * Jobs submitted in one event-loop turn go out together at the end of the turn (setImmediate),
 * split over the threads in messages of at most MAX_JOBS_PER_MESSAGE, in order, each to the
 * thread with the fewest unanswered jobs (of its lane, for interactive ones), so the per-message
 * cost is shared by many signatures and early jobs are answered first. Results come back in job order per call. A thread that
 * dies has its jobs checked on the calling thread; no job is lost and none fails because of it.
 * With no live thread left, checks run inline.
 *
 * Two lanes: bulk jobs (a block sync's thousands) go to a worker's own port, all at once, so the
 * threads never wait for the event loop to hand out more; interactive jobs (admission's) go to a
 * second port that the worker reads between any 16 checks of a bulk message. A thread answers
 * the messages of one port in the order they came, so in one lane a submission waited behind
 * every range a sync had asked for (seconds of checks).
 */
export class SignatureWorkers implements SignatureVerifier {
  private readonly threads: Thread[];
  private queue: QueuedJob[] = [];
  private bulk: QueuedJob[] = [];
  private flushScheduled = false;
  private nextBatch = 0;

  private constructor(threads: Thread[]) {
    this.threads = threads;
  }

  /** Starts `count` threads and waits until each is running. */
  static async start(count: number): Promise<SignatureWorkers> {
    const entry = new URL("./signatureWorkerEntry.mjs", import.meta.url);
    const threads = await Promise.all(
      Array.from({ length: count }, async (): Promise<Thread> => {
        // The entry loads the sources itself (loadTypeScript.mjs): the parent's --import flags
        // (tsx under the tests) would load them twice.
        const { port1: interactive, port2 } = new MessageChannel();
        const stop = new Int32Array(new SharedArrayBuffer(4));
        const worker = new Worker(entry, {
          execArgv: [],
          workerData: { interactive: port2, stop },
          transferList: [port2],
        });
        await new Promise<void>((resolve, reject) => {
          worker.once("online", resolve);
          worker.once("error", reject);
        });
        worker.unref(); // a pool never keeps the process alive; close() ends it explicitly
        return {
          worker,
          interactive,
          batches: new Map(),
          pending: 0,
          interactivePending: 0,
          alive: true,
          stop,
        };
      }),
    );
    const pool = new SignatureWorkers(threads);
    for (const thread of threads) pool.watch(thread);
    return pool;
  }

  get size(): number {
    return this.threads.filter((t) => t.alive).length;
  }

  verify(jobs: readonly SignedHashJob[], lane: VerifyLane = "interactive"): Promise<SignedHashResult[]> {
    if (this.size === 0) return Promise.resolve(jobs.map(checkSignedHash));
    const queue = lane === "bulk" ? this.bulk : this.queue;
    const results = jobs.map(
      (job) => new Promise<SignedHashResult>((resolve) => queue.push({ job, resolve })),
    );
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    }
    return Promise.all(results);
  }

  /**
   * Checks what is still queued or unanswered inline, then stops the threads. Each is asked to
   * stop (a shared flag it reads between two checks, and an empty message to wake it if idle) and
   * exits by itself; only one that has not within STOP_GRACE_MS is terminated. Terminating a
   * thread inside a secp256k1 call aborts the whole process ("terminate called after throwing an
   * instance of 'Napi::Error'": the addon is built with C++ exceptions, and its N-API calls fail
   * in a thread being torn down); test/unit/node/signatureWorkers.test.ts closes pools mid-work.
   */
  async close(): Promise<void> {
    const threads = this.threads.filter((t) => t.alive);
    for (const thread of threads) thread.alive = false;
    this.flush(); // anything still queued is checked inline
    for (const thread of threads) this.runInline(thread);
    await Promise.all(threads.map((t) => stopThread(t)));
  }

  private flush(): void {
    this.flushScheduled = false;
    const interactive = this.queue;
    const bulk = this.bulk;
    this.queue = [];
    this.bulk = [];
    this.send(interactive, "interactive");
    this.send(bulk, "bulk");
  }

  private send(jobs: QueuedJob[], lane: VerifyLane): void {
    if (jobs.length === 0) return;
    const live = this.threads.filter((t) => t.alive);
    if (live.length === 0) {
      for (const queued of jobs) queued.resolve(checkSignedHash(queued.job));
      return;
    }
    const parts =
      jobs.length < SPLIT_AT ? 1 : Math.max(live.length, Math.ceil(jobs.length / MAX_JOBS_PER_MESSAGE));
    const per = Math.ceil(jobs.length / parts);
    // Interactive jobs to the thread with the fewest of them: it answers them within ~1 ms
    // whatever bulk work it holds.
    const interactive = lane === "interactive";
    const load = interactive ? (t: Thread) => t.interactivePending : (t: Thread) => t.pending;
    for (let start = 0; start < jobs.length; start += per) {
      const slice = jobs.slice(start, start + per);
      const thread = live.reduce((least, t) => (load(t) < load(least) ? t : least));
      const id = this.nextBatch++;
      thread.batches.set(id, slice);
      thread.pending += slice.length;
      const message = { id, jobs: slice.map((q) => q.job) };
      if (interactive) {
        thread.interactivePending += slice.length;
        thread.interactive.postMessage(message);
      } else {
        thread.worker.postMessage(message);
      }
    }
  }

  private watch(thread: Thread): void {
    const answered =
      (interactive: boolean) =>
      ({ id, results }: { id: number; results: SignedHashResult[] }): void => {
        const batch = thread.batches.get(id);
        if (batch === undefined) return;
        thread.batches.delete(id);
        thread.pending -= batch.length;
        if (interactive) thread.interactivePending -= batch.length;
        for (const [i, queued] of batch.entries()) queued.resolve(results[i] as SignedHashResult);
      };
    thread.worker.on("message", answered(false));
    thread.interactive.on("message", answered(true));
    thread.interactive.unref(); // after the listener, which refs the port again
    const lost = () => {
      if (!thread.alive) return;
      thread.alive = false;
      this.runInline(thread);
    };
    thread.worker.on("error", lost);
    thread.worker.on("exit", lost);
  }

  /** Checks a thread's unanswered jobs on this thread (it died or the pool is closing). */
  private runInline(thread: Thread): void {
    for (const batch of thread.batches.values()) {
      for (const queued of batch) queued.resolve(checkSignedHash(queued.job));
    }
    thread.batches.clear();
    thread.pending = 0;
    thread.interactivePending = 0;
    thread.interactive.close();
  }
}

/** Asks `thread`'s worker to stop and resolves once it has exited (terminated after the grace). */
function stopThread(thread: Thread): Promise<void> {
  const { worker } = thread;
  if (worker.threadId === -1) return Promise.resolve(); // already exited
  return new Promise<void>((resolve) => {
    const timer = setTimeout(() => void worker.terminate().then(() => resolve()), STOP_GRACE_MS);
    worker.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    Atomics.store(thread.stop, 0, 1);
    worker.postMessage({ id: -1, jobs: [] });
  });
}
