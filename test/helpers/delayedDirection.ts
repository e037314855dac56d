import type { Socket } from "node:net";
import { performance } from "node:perf_hooks";

/**
 * One direction of a proxied TCP connection (source socket → sink socket) that holds every chunk
 * for a one-way delay plus jitter, optionally caps the rate, and never reorders bytes.
 *
 * One queue and one timer per direction: chunks with separate timers and equal (or, with jitter,
 * crossing) deadlines could fire out of order. A chunk's release time is
 * max(its own deadline, the previous chunk's release time), so jitter delays a chunk but never
 * lets it overtake. The timer always waits for the queue's head only.
 *
 * The rate cap is a token bucket at the release side (a chunk leaves no earlier than its deadline
 * and no faster than the cap; a chunk larger than the bucket leaves in pieces of the bucket's size). Memory is
 * bounded: above `maxQueueBytes` queued the source is paused, and resumed at half; a sink whose
 * own buffer is full ('write' returned false) stops the releases until it drains.
 *
 * The end of the source (a half-close) is queued like a chunk and ends the sink when it comes due,
 * after every byte before it.
 */

export type JitterDistribution = "uniform" | "normal";

/** The shape of one direction of a link; every field is in the unit its name says. */
export interface LinkShape {
  delayMs: number;
  /** The bound of the jitter: a chunk's delay is within delayMs ± jitterMs (never below 0). */
  jitterMs: number;
  /** `uniform` over ±jitterMs, or `normal` with σ = jitterMs / 2, clipped at ±jitterMs. */
  jitter: JitterDistribution;
  /** Rate cap in bytes per second; 0 for none. */
  bandwidthBytesPerSecond: number;
  /** The bucket's size: how many bytes may leave at once after a quiet spell. */
  burstBytes: number;
  /** Bytes queued in this direction above which the source is paused. */
  maxQueueBytes: number;
}

interface Queued {
  /** The bytes still to send; `undefined` marks the source's end. */
  bytes: Buffer | undefined;
  releaseAt: number;
}

/** What the proxy wants to know about every direction (for tests of its bounds). */
export interface DirectionObserver {
  /** A chunk was queued; `bytes` are now queued in this direction. */
  queuedBytes(bytes: number): void;
}

export class DelayedDirection {
  private readonly queue: Queued[] = [];
  private queuedBytes = 0;
  private lastReleaseAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private waitingForDrain = false;
  private pausedSource = false;
  private stopped = false;
  private tokens: number;
  private tokensAt = performance.now();
  private readonly source: Socket;
  private readonly sink: Socket;
  private readonly shape: LinkShape;
  private readonly random: () => number;
  private readonly observer: DirectionObserver;

  constructor(
    source: Socket,
    sink: Socket,
    shape: LinkShape,
    random: () => number,
    observer: DirectionObserver,
  ) {
    this.source = source;
    this.sink = sink;
    this.shape = shape;
    this.random = random;
    this.observer = observer;
    this.tokens = shape.burstBytes;
    source.on("data", (chunk: Buffer) => this.enqueue(chunk));
    source.on("end", () => this.enqueue(undefined));
  }

  /** Whether a timer is pending (a stopped or idle direction has none). */
  get hasTimer(): boolean {
    return this.timer !== undefined;
  }

  /** Drops what is queued and the timer; the proxy destroys the sockets. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.queue.length = 0;
    this.queuedBytes = 0;
    this.sink.removeListener("drain", this.onDrain);
  }

  private enqueue(bytes: Buffer | undefined): void {
    if (this.stopped) return;
    const deadline = performance.now() + Math.max(0, this.shape.delayMs + this.sampleJitter());
    const releaseAt = Math.max(deadline, this.lastReleaseAt);
    this.lastReleaseAt = releaseAt;
    this.queue.push({ bytes, releaseAt });
    if (bytes !== undefined) {
      this.queuedBytes += bytes.length;
      this.observer.queuedBytes(this.queuedBytes);
      if (this.queuedBytes > this.shape.maxQueueBytes && !this.pausedSource) {
        this.pausedSource = true;
        this.source.pause();
      }
    }
    this.schedule();
  }

  private sampleJitter(): number {
    const bound = this.shape.jitterMs;
    if (bound <= 0) return 0;
    if (this.shape.jitter === "uniform") return (this.random() * 2 - 1) * bound;
    // Box–Muller; 1 - random() is in (0, 1], so the log is finite.
    const normal = Math.sqrt(-2 * Math.log(1 - this.random())) * Math.cos(2 * Math.PI * this.random());
    return Math.min(bound, Math.max(-bound, (normal * bound) / 2));
  }

  private schedule(): void {
    if (this.timer !== undefined || this.waitingForDrain || this.stopped) return;
    const head = this.queue[0];
    if (head === undefined) return;
    let waitMs = head.releaseAt - performance.now();
    if (head.bytes !== undefined && this.shape.bandwidthBytesPerSecond > 0) {
      this.refill();
      const wanted = Math.min(head.bytes.length, this.shape.burstBytes);
      waitMs = Math.max(waitMs, ((wanted - this.tokens) / this.shape.bandwidthBytesPerSecond) * 1000);
    }
    // Rounded up: a timer may fire up to a millisecond early, and release() re-arms if it did.
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.release();
      },
      Math.max(0, Math.ceil(waitMs)),
    );
  }

  private refill(): void {
    const now = performance.now();
    const rate = this.shape.bandwidthBytesPerSecond;
    this.tokens = Math.min(this.shape.burstBytes, this.tokens + ((now - this.tokensAt) * rate) / 1000);
    this.tokensAt = now;
  }

  private readonly onDrain = (): void => {
    this.waitingForDrain = false;
    this.release();
  };

  private release(): void {
    for (;;) {
      const head = this.queue[0];
      if (this.stopped || head === undefined || head.releaseAt > performance.now()) break;
      if (head.bytes === undefined) {
        this.queue.shift();
        this.sink.end();
        continue;
      }
      const bytes = this.takeAllowed(head, head.bytes);
      if (bytes === undefined) break;
      this.queuedBytes -= bytes.length;
      if (!this.sink.write(bytes)) {
        this.waitingForDrain = true;
        this.sink.once("drain", this.onDrain);
        break;
      }
    }
    if (this.pausedSource && this.queuedBytes <= this.shape.maxQueueBytes / 2) {
      this.pausedSource = false;
      this.source.resume();
    }
    this.schedule();
  }

  /** The bytes of `head` the rate cap lets out now (all of them without a cap), removed from the queue. */
  private takeAllowed(head: Queued, queued: Buffer): Buffer | undefined {
    if (this.shape.bandwidthBytesPerSecond <= 0) {
      this.queue.shift();
      return queued;
    }
    this.refill();
    // Wait for a whole piece (the chunk, or a burst of it): sending what trickled in since the
    // last look would write a few bytes at a time in a busy loop.
    const allowed = Math.min(queued.length, this.shape.burstBytes);
    if (this.tokens < allowed) return undefined;
    this.tokens -= allowed;
    if (allowed === queued.length) this.queue.shift();
    else head.bytes = queued.subarray(allowed);
    return queued.subarray(0, allowed);
  }
}
