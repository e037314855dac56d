/**
 * How long after a block's write its pruning write begins, ms: first the next height's proposal
 * is built and sent (a few ms), then pruning takes LMDB's writer while the node waits for the
 * network.
 */
const PRUNE_DELAY_MS = 20;

/** What PruningWrites drives: one pruning write, and when none may begin. */
export interface PruningWriter {
  /**
   * Makes one pruning write of at most `budget` entries; resolves whether more may be due (the
   * budget ran out), rejects if the write failed (and left nothing of itself).
   */
  write(budget: number): Promise<boolean>;
  /** True while no pruning write may begin (the store's own write holds its writer). */
  paused(): boolean;
}

/**
 * Pruning in writes of its own, after the blocks' writes (docs/decisions/011-pruning.md): each
 * block owes entries (`owe`), and PRUNE_DELAY_MS later one write makes what is owed (or the next
 * block's write makes it first, `settled`, if it has not begun by then). What blocks
 * owe meanwhile goes into the next write; what is owed is forgiven once nothing more is due (the
 * next blocks owe for what they retire). A failed write goes to `onError` and waits for the next
 * block's `owe`; without `onError`, `takeError` hands it to the next block's write.
 */
export class PruningWrites {
  private readonly writer: PruningWriter;
  private readonly onError: ((error: unknown) => void) | undefined;
  /** Entries owed by the blocks written since the last pruning write. */
  private owed = 0;
  private timer: NodeJS.Timeout | undefined;
  /** The pruning write under way, if any (it holds LMDB's writer until it commits); never rejects. */
  private current: Promise<void> | undefined;
  private failure: { error: unknown } | undefined;
  private stopped = false;

  constructor(writer: PruningWriter, onError?: (error: unknown) => void) {
    this.writer = writer;
    this.onError = onError;
  }

  /** Adds `budget` entries to what is owed and, unless a write is under way or due, makes one soon. */
  owe(budget: number): void {
    this.owed += budget;
    if (this.current !== undefined || this.timer !== undefined || this.stopped) return;
    this.timer = setTimeout(() => this.begin(), PRUNE_DELAY_MS);
    this.timer.unref();
  }

  /** A failed write's error not yet told (no onError), once. */
  takeError(): unknown | undefined {
    const failure = this.failure;
    this.failure = undefined;
    return failure?.error;
  }

  /**
   * Resolves once no pruning write is under way or due: a due one is begun now (unless the writer
   * is paused; it then waits for the next block's `owe`), and one under way is awaited. Called
   * before a block's write (which would otherwise block on LMDB's lock), by close, and by tests.
   */
  async settled(): Promise<void> {
    for (;;) {
      if (this.timer !== undefined) {
        clearTimeout(this.timer);
        this.begin();
      }
      if (this.current === undefined) return;
      await this.current;
    }
  }

  /** Makes what is owed, then begins no more. */
  async stop(): Promise<void> {
    await this.settled();
    this.stopped = true;
  }

  private begin(): void {
    this.timer = undefined;
    // Paused: the owed pruning waits for the next block's owe.
    if (this.stopped || this.current !== undefined || this.owed === 0 || this.writer.paused()) return;
    const budget = this.owed;
    this.owed = 0;
    let failed = false;
    this.current = this.writer
      .write(budget)
      .then(
        (more) => {
          if (!more) this.owed = 0;
        },
        (error: unknown) => {
          failed = true;
          this.owed += budget;
          if (this.onError !== undefined) this.onError(error);
          else this.failure = { error };
        },
      )
      .finally(() => {
        this.current = undefined;
        if (this.owed > 0 && !failed) this.owe(0);
      });
  }
}
