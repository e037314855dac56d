import { Presets, SingleBar } from "cli-progress";

/**
 * A progress bar for a sync on a terminal (stderr is a TTY); silent otherwise, where the sync's
 * log lines say the same. Shown only for catch-ups worth watching.
 */
export class SyncProgress {
  private bar: SingleBar | undefined;
  private readonly enabled = process.stderr.isTTY === true;

  update(head: number, target: number): void {
    if (!this.enabled) return;
    if (head >= target - 1) {
      this.stop();
      return;
    }
    if (this.bar === undefined) {
      if (target - head < 20) return;
      this.bar = new SingleBar(
        { format: "sync |{bar}| {value}/{total} blocks | {eta_formatted} left", stream: process.stderr },
        Presets.shades_classic,
      );
      this.bar.start(target, head);
      return;
    }
    this.bar.setTotal(target);
    this.bar.update(head);
  }

  stop(): void {
    this.bar?.stop();
    this.bar = undefined;
  }
}
