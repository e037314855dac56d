import { pino, type Logger } from "pino";

export type { Logger };

/** The root logger; layers take `logger.child({ module })`. Logs go to stderr, output to stdout. */
export function createLogger(level: string): Logger {
  return pino({ level, base: null, timestamp: pino.stdTimeFunctions.isoTime }, pino.destination(2));
}
