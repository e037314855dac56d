import { Worker } from "node:worker_threads";
import {
  EMPTY_ROOT,
  type StateChanges,
  type StateCommitment,
  StateTrie,
  type TrieNodeReader,
  type TrieWrite,
} from "../chain/index.ts";
import { type PackedSpans, spanAt } from "../storage/index.ts";

/** How long `close` waits for the thread to exit by itself before terminating it. */
const EXIT_WAIT_MS = 5_000;
/** Starts of a lost thread in a row, with no block applied in between, before it is given up. */
const MAX_RESTARTS_IN_ROW = 3;

/** A block's trie write as the thread sends it: node `ids[j]`'s record is span j (PackedSpans). */
export interface PackedTrieWrite extends PackedSpans {
  ids: Float64Array;
  retired: Float64Array;
  root?: { hash: string; id: number };
  parent?: { hash: string; id: number };
}

/** What the chain's thread asks of the trie thread (trieThreadWorker.ts), in order. */
export type TrieRequest =
  | { op: "open"; rootHex: string | undefined; rootId: number | undefined; nextId: number }
  | { op: "apply"; seq: number; changes: StateChanges }
  | { op: "markCommitted"; underWay: boolean }
  | { op: "written" }
  | { op: "discard" }
  | { op: "close" };

/** The `seq` of the thread's last message when a message other than an apply failed on it. */
export const FAILED = -1;

/** The trie thread's answer to an apply (or, with seq FAILED, why it is about to exit). */
export type TrieReply =
  | { seq: number; rootHex: string; write: PackedTrieWrite }
  | { seq: number; error: string };

/**
 * The state's trie on a thread of its own (docs/decisions/024): a block's changes are sent there,
 * applied, hashed and numbered while the chain's event loop goes on (admission, reads), and the
 * root and the block's trie write come back. The chain's calls become messages, answered in the
 * order they were sent; only `apply` waits for an answer.
 *
 * The thread reads committed nodes from the store's environment, so the chain tells it when a
 * block is durable (`markCommitted`, `written`) as StateTrie's callers do; inside a range's write
 * (Chain.commitTogether) each block stays under way until the range's write commits.
 */
export class TrieThread {
  private worker: Worker;
  private readonly workerData: { path: string; residentDepth?: number };
  private seq = 0;
  private readonly waiting = new Map<
    number,
    { resolve: (reply: TrieReply) => void; reject: (e: Error) => void }
  >();
  private lost: Error | undefined;
  private exited = false;
  private closed = false;
  /** Times the thread was started again since it last applied a block. */
  private restartsInRow = 0;
  /** onGaveUp was told (a thread given up is never started again: restartsInRow stays at the limit). */
  private gaveUp = false;
  /**
   * Told once, with the last cause, when the thread died again after MAX_RESTARTS_IN_ROW starts in a
   * row and the trie stays on the event loop from then on (the node logs it).
   */
  onGaveUp: ((cause: Error) => void) | undefined;

  private constructor(worker: Worker, workerData: { path: string; residentDepth?: number }) {
    this.workerData = workerData;
    this.worker = worker;
    this.attach(worker);
  }

  private attach(worker: Worker): void {
    this.worker = worker;
    this.lost = undefined;
    this.exited = false;
    worker.unref(); // only a pending apply keeps the process alive
    worker.on("message", (reply: TrieReply) => {
      if (reply.seq === FAILED && "error" in reply)
        return lose(new Error(`the trie thread failed: ${reply.error}`));
      if (!("error" in reply)) this.restartsInRow = 0;
      const waiting = this.waiting.get(reply.seq);
      this.waiting.delete(reply.seq);
      if (this.waiting.size === 0) worker.unref();
      waiting?.resolve(reply);
    });
    const lose = (error: Error) => {
      if (this.worker !== worker) return; // one that was replaced
      this.lost ??= error;
      for (const waiting of this.waiting.values()) waiting.reject(this.lost);
      this.waiting.clear();
    };
    worker.on("error", lose);
    worker.on("exit", (code) => {
      if (this.worker === worker) this.exited = true;
      lose(new Error(`the trie thread exited (code ${code})`));
    });
  }

  private static spawn(workerData: { path: string; residentDepth?: number }): Worker {
    // The entry loads the sources itself (loadTypeScript.mjs): the parent's --import flags (tsx
    // under the tests) would load them twice.
    return new Worker(new URL("./trieThreadEntry.mjs", import.meta.url), { execArgv: [], workerData });
  }

  /**
   * Starts the thread on the store at `path` (a directory the node's LmdbStore has open) and
   * waits until it runs. `residentDepth`: the MerkleTrie option (tests).
   */
  static async start(path: string, options: { residentDepth?: number } = {}): Promise<TrieThread> {
    const workerData = { path, ...options };
    const worker = TrieThread.spawn(workerData);
    const exited = (code: number) => new Error(`the trie thread exited at start (code ${code})`);
    await new Promise<void>((resolve, reject) => {
      const failed = (error: Error) => {
        worker.off("message", ready);
        reject(error);
      };
      const ready = () => {
        worker.off("error", failed);
        resolve();
      };
      worker.once("message", ready);
      worker.once("error", failed);
      worker.once("exit", (code) => failed(exited(code)));
    });
    return new TrieThread(worker, workerData);
  }

  /** The thread threw or exited (not closed): its trie is gone until the next `open`. */
  get failed(): boolean {
    return this.lost !== undefined && !this.closed;
  }

  /**
   * The trie at a committed root (undefined or EMPTY_ROOT: empty), as `store` holds it:
   * ChainOptions.openTrie. The thread drops the trie it held before.
   */
  open(store: TrieNodeReader, rootHex: string | undefined): StateCommitment {
    const empty = rootHex === undefined || rootHex === EMPTY_ROOT;
    const rootId = empty ? undefined : store.getTrieRoot(rootHex);
    if (!empty && rootId === undefined) throw new Error(`state root ${rootHex} is not in the store`);
    // A lost thread is started again: the chain opens its trie anew after a block failed on it.
    // One that keeps dying before it applies a block is not started forever (each start is a
    // worker's load): the trie then stays on the event loop, as when the thread cannot start.
    if (this.failed) {
      if (this.restartsInRow >= MAX_RESTARTS_IN_ROW) {
        if (!this.gaveUp) this.onGaveUp?.(this.lost as Error);
        this.gaveUp = true;
        return new StateTrie(store, rootHex);
      }
      this.restartsInRow++;
      void this.worker.terminate();
      this.attach(TrieThread.spawn(this.workerData));
    }
    this.post({ op: "open", rootHex, rootId, nextId: store.nextTrieNodeId() });
    return new ThreadTrie(this);
  }

  /**
   * Ends the thread once the work sent before has been done; calls after this fail. The thread
   * closes its environment and exits by itself; it is terminated (which may abort inside LMDB's
   * native code) only if it has not exited EXIT_WAIT_MS after the close began.
   */
  async close(): Promise<void> {
    this.closed = true;
    if (this.lost !== undefined && this.exited) return;
    const exit = new Promise<void>((resolve) => this.worker.once("exit", () => resolve()));
    const timer = setTimeout(() => void this.worker.terminate(), EXIT_WAIT_MS);
    if (this.lost === undefined) this.worker.postMessage({ op: "close" } satisfies TrieRequest);
    this.lost ??= new Error("the trie thread is closed");
    this.worker.ref();
    if (!this.exited) await exit;
    clearTimeout(timer);
  }

  post(request: TrieRequest): void {
    if (this.lost === undefined) this.worker.postMessage(request);
  }

  request(changes: StateChanges): Promise<TrieReply> {
    if (this.lost !== undefined) return Promise.reject(this.lost);
    const seq = ++this.seq;
    return new Promise((resolve, reject) => {
      this.waiting.set(seq, { resolve, reject });
      this.worker.ref();
      this.worker.postMessage({ op: "apply", seq, changes } satisfies TrieRequest);
    });
  }
}

/** The chain's handle on the trie thread's trie (StateCommitment). */
class ThreadTrie implements StateCommitment {
  private readonly thread: TrieThread;
  /** What the last apply gave, until the trie moves on or drops it. */
  private write: TrieWrite | undefined;

  constructor(thread: TrieThread) {
    this.thread = thread;
  }

  async apply(changes: StateChanges): Promise<string> {
    this.write = undefined;
    const reply = await this.thread.request(changes);
    if ("error" in reply) throw new Error(`trie thread: ${reply.error}`);
    this.write = unpacked(reply.write);
    return reply.rootHex;
  }

  pendingWrite(): TrieWrite {
    if (this.write === undefined) throw new Error("no block was applied to the trie");
    return this.write;
  }

  failed(): boolean {
    return this.thread.failed;
  }

  /** The thread numbered the nodes when it applied the block. */
  numberNewNodes(): Promise<void> {
    return Promise.resolve();
  }

  markCommitted(underWay = false): void {
    this.write = undefined;
    this.thread.post({ op: "markCommitted", underWay });
  }

  markCommittedInSlices(underWay: boolean): Promise<void> {
    this.markCommitted(underWay);
    return Promise.resolve();
  }

  written(): void {
    this.thread.post({ op: "written" });
  }

  discard(): void {
    this.write = undefined;
    this.thread.post({ op: "discard" });
  }
}

/** A PackedTrieWrite as a TrieWrite: its records are views into the one buffer. */
function unpacked(packed: PackedTrieWrite): TrieWrite {
  const { ids, retired, root, parent } = packed;
  const nodes = {
    *[Symbol.iterator](): Generator<readonly [number, Uint8Array]> {
      for (let j = 0; j < ids.length; j++) yield [ids[j] as number, spanAt(packed, j)];
    },
  };
  return {
    nodes,
    retired: Array.from(retired),
    ...(root === undefined ? {} : { root }),
    ...(parent === undefined ? {} : { parent }),
  };
}
