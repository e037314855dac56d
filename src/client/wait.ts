import { WaitTimeoutError } from "./errors.ts";
import type { NodeMethods } from "./methods.ts";
import type { ConfirmedTransaction, Hash, PendingTransaction } from "./types.ts";

export interface WaitOptions {
  /** Give up (WaitTimeoutError) after this long. Default 30,000 ms. */
  timeoutMs?: number;
  /** Time between two polls of chain_getTransactionByHash. Default 250 ms. */
  pollMs?: number;
}

export const DEFAULT_WAIT_TIMEOUT_MS = 30_000;
export const DEFAULT_POLL_MS = 250;

/** Whether a transaction fetched by hash is committed (it then carries its block and result). */
export function isConfirmedTransaction(
  tx: ConfirmedTransaction | PendingTransaction,
): tx is ConfirmedTransaction {
  return "block_number" in tx;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Polls until the transaction is in a block and returns it with `block_number` and `result`.
 * A committed transaction whose operation failed at execution resolves too: check
 * `result.code` (0 is success). Blocks are final (no reorgs), so one sighting is enough.
 */
export async function waitForTransaction(
  methods: Pick<NodeMethods, "getTransactionByHash">,
  hash: Hash,
  options: WaitOptions = {},
): Promise<ConfirmedTransaction> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS;
  const pollMs = options.pollMs ?? DEFAULT_POLL_MS;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const tx = await methods.getTransactionByHash({ hash });
    if (tx !== null && isConfirmedTransaction(tx)) return tx;
    const left = deadline - Date.now();
    if (left <= 0) throw new WaitTimeoutError(hash, timeoutMs, tx !== null);
    await sleep(Math.min(pollMs, left));
  }
}
