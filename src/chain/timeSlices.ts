import { setImmediate as nextTurn } from "node:timers/promises";

/**
 * Long synchronous work cut into turns of the event loop. Executing and hashing a block of 5,000
 * transactions takes the thread 100–200 ms; in one piece, every request that arrived meanwhile
 * waited for all of it, and the signature threads sat idle for want of new jobs (docs/
 * performance.md, "Block writes off the event loop, blocks back to back, execution in slices").
 * `pause` yields once the current slice has run `sliceMs`; the work's own state is private to it
 * (Chain.execute holds the chain busy), so what runs in between sees the committed state as before.
 */
export class TimeSlices {
  private readonly sliceMs: number;
  private started = performance.now();

  constructor(sliceMs: number) {
    this.sliceMs = sliceMs;
  }

  /** Resolves at once inside a slice; after a turn of the event loop once the slice is used up. */
  async pause(): Promise<void> {
    if (performance.now() - this.started < this.sliceMs) return;
    await nextTurn();
    this.started = performance.now();
  }
}

/**
 * Resolves once the event loop has polled for I/O (read the requests that arrived meanwhile). One
 * setImmediate is not always enough: queued from the poll phase (after a worker's message, as
 * when the block before has just been written), it runs in that same iteration's check phase,
 * before the next poll; the second then runs in the next iteration's.
 */
export async function afterIoTurn(): Promise<void> {
  await nextTurn();
  await nextTurn();
}

/**
 * Work written as a generator that yields between its pieces (MerkleTrie.newNodes, a block's
 * write plan), run in one go: the same code serves a caller that cannot pause.
 */
export function runSteps<T>(steps: Generator<void, T, void>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** `runSteps`, awaiting `pause` at each of the work's yields (TimeSlices.pause). */
export async function runStepsPaused<T>(
  steps: Generator<void, T, void>,
  pause: () => Promise<void>,
): Promise<T> {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    await pause();
  }
}
