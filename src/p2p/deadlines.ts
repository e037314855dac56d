import { setMaxListeners } from "node:events";
import { P2pError } from "./errors.ts";

/**
 * The deadlines of everything in flight (requests, served streams, dials): each gets an abort
 * controller that fires after `timeoutMs`, and `abortAll` ends them all when the network stops.
 */
export class RequestDeadlines {
  private readonly timeoutMs: number;
  private readonly active = new Map<AbortController, NodeJS.Timeout>();

  constructor(timeoutMs: number) {
    this.timeoutMs = timeoutMs;
  }

  /** An abort controller that aborts with `P2pError("timeout")` after the timeout; `untrack` it when done. */
  track(): AbortController {
    const controller = new AbortController();
    // libp2p's stream calls and our reads all listen on one signal: no warning past Node's default 10.
    setMaxListeners(Number.POSITIVE_INFINITY, controller.signal);
    const timer = setTimeout(() => {
      this.active.delete(controller);
      controller.abort(new P2pError("timeout", `no answer within ${this.timeoutMs} ms`));
    }, this.timeoutMs);
    this.active.set(controller, timer);
    return controller;
  }

  untrack(controller: AbortController): void {
    clearTimeout(this.active.get(controller));
    this.active.delete(controller);
  }

  /** Aborts everything in flight with `P2pError("not_running")`. */
  abortAll(): void {
    for (const [controller, timer] of this.active) {
      clearTimeout(timer);
      controller.abort(new P2pError("not_running", "network stopped"));
    }
    this.active.clear();
  }

  /** How many are in flight. */
  get size(): number {
    return this.active.size;
  }
}
