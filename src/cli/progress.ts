import { Presets, SingleBar } from "cli-progress";

/** How often a line is printed when stderr is not a terminal (a log file, CI), ms. */
const LINE_INTERVAL_MS = 5_000;

/** Progress of a long command on stderr. */
export interface Progress {
  update(done: number, total: number): void;
  stop(): void;
}

/**
 * A progress bar on stderr when it is a terminal; otherwise a line every LINE_INTERVAL_MS (and
 * none for a run that ends sooner), so that logs stay short.
 */
export function progressOnStderr(label: string, unit: string): Progress {
  if (process.stderr.isTTY === true) {
    let bar: SingleBar | undefined;
    return {
      update(done, total) {
        if (bar === undefined) {
          bar = new SingleBar(
            {
              format: `${label} |{bar}| {value}/{total} ${unit} | {eta_formatted} left`,
              stream: process.stderr,
            },
            Presets.shades_classic,
          );
          bar.start(total, done);
          return;
        }
        bar.setTotal(total);
        bar.update(done);
      },
      stop() {
        bar?.stop();
        bar = undefined;
      },
    };
  }
  let last = Date.now();
  return {
    update(done, total) {
      const now = Date.now();
      if (now - last < LINE_INTERVAL_MS) return;
      last = now;
      console.error(`${label}: ${done}/${total} ${unit}`);
    },
    stop() {},
  };
}
