/**
 * Time as the consensus engine sees it: a clock and one-shot timers. A node runs the engine on
 * `realScheduler` (its clock skewed only when a test sets CHAIN_NODE_TEST_CLOCK_SKEW_MS); the
 * scenario tests and the many-validator simulation run it on a manual clock that only moves when
 * told to (test/helpers/manualScheduler.ts), so rounds and timeouts are exact and take no real time.
 */
export interface Scheduler {
  now(): number;
  /** Calls `task` once, `ms` from now. The returned function cancels it (a no-op once it ran). */
  after(ms: number, task: () => void): () => void;
}

/** `setTimeout` timers and the given clock (Date.now by default). */
export function realScheduler(now: () => number = Date.now): Scheduler {
  return {
    now,
    after(ms, task) {
      const timer = setTimeout(task, ms);
      return () => clearTimeout(timer);
    },
  };
}
