import type { Scheduler } from "../../src/consensus/index.ts";

interface Timer {
  due: number;
  order: number;
  task: () => void;
  cancelled: boolean;
}

/**
 * A clock that moves only when told to, with the timers set on it: consensus scenarios run on it
 * in milliseconds of real time, each timeout firing at exactly the simulated time it was set for.
 * Timers due at the same time fire in the order they were set.
 */
export class ManualScheduler implements Scheduler {
  private time: number;
  private order = 0;
  private timers: Timer[] = [];

  constructor(start = 1_700_000_000_000) {
    this.time = start;
  }

  now(): number {
    return this.time;
  }

  after(ms: number, task: () => void): () => void {
    const timer: Timer = { due: this.time + Math.max(0, ms), order: this.order++, task, cancelled: false };
    this.timers.push(timer);
    return () => {
      timer.cancelled = true;
    };
  }

  /** When the next live timer fires; undefined when none is set. */
  nextDue(): number | undefined {
    this.timers = this.timers.filter((t) => !t.cancelled);
    let next: number | undefined;
    for (const t of this.timers) if (next === undefined || t.due < next) next = t.due;
    return next;
  }

  /**
   * Moves the clock to the earliest live timer due no later than `limit` and fires it. False (the
   * clock left as it is) when there is none.
   */
  fireNext(limit = Number.POSITIVE_INFINITY): boolean {
    const live = this.timers.filter((t) => !t.cancelled);
    let first: Timer | undefined;
    for (const t of live) {
      if (
        t.due <= limit &&
        (first === undefined || t.due < first.due || (t.due === first.due && t.order < first.order))
      )
        first = t;
    }
    if (first === undefined) return false;
    this.timers = live.filter((t) => t !== first);
    this.time = Math.max(this.time, first.due);
    first.task();
    return true;
  }

  /**
   * Moves the clock `ms` forward, firing the timers due on the way in time order; `settle` runs
   * after each, so that what a timer set off (and the timers it sets) happens before the next.
   */
  async advance(ms: number, settle: () => Promise<void>): Promise<void> {
    const target = this.time + ms;
    await settle();
    while (this.fireNext(target)) await settle();
    this.time = target;
  }
}
