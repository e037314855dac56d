import type { Scheduler } from "../../src/consensus/index.ts";

interface Timer {
  due: number;
  order: number;
  task: () => void;
  owner: unknown;
  cancelled: boolean;
}

/**
 * A clock that moves only when told to, with the timers set on it: consensus scenarios run on it
 * in milliseconds of real time, each timeout firing at exactly the simulated time it was set for.
 * Timers due at the same time fire in the order they were set. Many engines may share one clock,
 * each through its own view (`forOwner`), so that a driver knows whose timer fired.
 */
export class ManualScheduler implements Scheduler {
  private time: number;
  private order = 0;
  /** A binary min-heap on (due, order). */
  private readonly heap: Timer[] = [];

  constructor(start = 1_700_000_000_000) {
    this.time = start;
  }

  now(): number {
    return this.time;
  }

  after(ms: number, task: () => void): () => void {
    return this.schedule(ms, task, undefined);
  }

  /** The same clock, its timers marked as `owner`'s (what fireNext returns). */
  forOwner(owner: unknown): Scheduler {
    return { now: () => this.time, after: (ms, task) => this.schedule(ms, task, owner) };
  }

  /**
   * Moves the clock to the earliest live timer due no later than `limit` and fires it. Returns
   * whose it was (`{ owner }`), or undefined, with the clock left as it is, when none is due.
   */
  fireNext(limit = Number.POSITIVE_INFINITY): { owner: unknown } | undefined {
    for (;;) {
      const first = this.heap[0];
      if (first === undefined || first.due > limit) return undefined;
      this.pop();
      if (first.cancelled) continue;
      this.time = Math.max(this.time, first.due);
      first.task();
      return { owner: first.owner };
    }
  }

  /**
   * Fires every live timer due at the earliest due time (no later than `limit`), in the order
   * they were set; returns their owners (empty when none is due). Timers they set for that same
   * instant wait for the next call, as they would for the next turn of an event loop.
   */
  fireDue(limit = Number.POSITIVE_INFINITY): Set<unknown> {
    const owners = new Set<unknown>();
    const setBefore = this.order;
    let instant: number | undefined;
    for (let next = this.heap[0]; next !== undefined; next = this.heap[0]) {
      if (next.cancelled) {
        this.pop();
        continue;
      }
      instant ??= next.due;
      if (next.due > limit || next.due !== instant || next.order >= setBefore) break;
      this.pop();
      this.time = Math.max(this.time, next.due);
      next.task();
      owners.add(next.owner);
    }
    return owners;
  }

  /**
   * Moves the clock `ms` forward, firing the timers due on the way in time order; `settle` runs
   * after each, so that what a timer set off (and the timers it sets) happens before the next.
   */
  async advance(ms: number, settle: () => Promise<void>): Promise<void> {
    const target = this.time + ms;
    await settle();
    while (this.fireNext(target) !== undefined) await settle();
    this.time = target;
  }

  private schedule(ms: number, task: () => void, owner: unknown): () => void {
    const timer: Timer = {
      due: this.time + Math.max(0, ms),
      order: this.order++,
      task,
      owner,
      cancelled: false,
    };
    this.push(timer);
    return () => {
      timer.cancelled = true;
    };
  }

  private push(timer: Timer): void {
    const heap = this.heap;
    heap.push(timer);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i] as Timer, heap[parent] as Timer)) break;
      [heap[i], heap[parent]] = [heap[parent] as Timer, heap[i] as Timer];
      i = parent;
    }
  }

  private pop(): void {
    const heap = this.heap;
    const last = heap.pop();
    if (last === undefined || heap.length === 0) return;
    heap[0] = last;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < heap.length && before(heap[left] as Timer, heap[smallest] as Timer)) smallest = left;
      if (right < heap.length && before(heap[right] as Timer, heap[smallest] as Timer)) smallest = right;
      if (smallest === i) return;
      [heap[i], heap[smallest]] = [heap[smallest] as Timer, heap[i] as Timer];
      i = smallest;
    }
  }
}

const before = (a: Timer, b: Timer): boolean => a.due < b.due || (a.due === b.due && a.order < b.order);
