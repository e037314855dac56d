/**
 * The node's clock, with a test-only skew. `CHAIN_NODE_CLOCK_SKEW_MS=<integer ms, may be negative>`
 * makes this node believe the time is off by that much (test/e2e/networkFaults.test.ts runs a
 * validator 30 s ahead and 30 s behind the others). It exists only so that tests can fault one
 * node's clock without root; operators leave it unset (docs/configuration.md, "Testing knobs").
 * It offsets what consensus (proposal timestamps, the future-block bound, round timing) and
 * admission (the unordered-transaction window) take as "now"; logs and metrics keep real time.
 */
export const CLOCK_SKEW_VARIABLE = "CHAIN_NODE_CLOCK_SKEW_MS";

/** Date.now, offset by the skew in `env`; throws on a value that is not an integer. */
export function nodeClock(env: NodeJS.ProcessEnv = process.env): () => number {
  const raw = env[CLOCK_SKEW_VARIABLE];
  if (raw === undefined || raw.trim() === "") return Date.now;
  const skew = Number(raw.trim());
  if (!/^-?\d+$/.test(raw.trim()) || !Number.isSafeInteger(skew)) {
    throw new Error(
      `${CLOCK_SKEW_VARIABLE} must be an integer number of milliseconds, got ${JSON.stringify(raw)}`,
    );
  }
  if (skew === 0) return Date.now;
  return () => Date.now() + skew;
}
