import { type DestinationStream, type Logger, pino } from "pino";
import pinoPretty from "pino-pretty";

export type { Logger };

export type LogFormat = "json" | "pretty" | "auto";

/**
 * Where log lines go: JSON lines (one object each, for collectors) unless they are read by a
 * person at a terminal. Pretty printing runs in this thread and writes synchronously, so a line
 * is out before the process exits and no worker thread is started for it.
 */
function destination(format: LogFormat): DestinationStream {
  const pretty = format === "pretty" || (format === "auto" && process.stderr.isTTY === true);
  if (!pretty) return pino.destination(2);
  return pinoPretty({
    destination: 2,
    sync: true,
    colorize: process.stderr.isTTY === true,
    translateTime: "SYS:HH:MM:ss.l",
    ignore: "module",
    messageFormat: "{if module}[{module}] {end}{msg}",
  });
}

/** The root logger; layers take `logger.child({ module })`. Logs go to stderr, output to stdout. */
export function createLogger(level: string, format: LogFormat = "auto"): Logger {
  return pino({ level, base: null, timestamp: pino.stdTimeFunctions.isoTime }, destination(format));
}
