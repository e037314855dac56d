import { UNORDERED_TX_WINDOW_MS } from "../chain/index.ts";

export interface TxPoolOptions {
  /** Chain id that signatures must carry. */
  chainId: number;
  /** Largest canonical transaction body, bytes. */
  maxTxBytes: number;
  /** Pending transactions in all. */
  maxPoolTxs: number;
  /** Pending transactions of one sender. */
  maxPoolTxsPerAccount: number;
  /**
   * An unordered (nonce -1) transaction's timestamp must lie within now ± this, ms. At most the
   * chain's UNORDERED_TX_WINDOW_MS: a wider window would admit transactions no block may take.
   */
  replayWindowMs: number;
}

export const defaultTxPoolOptions: Omit<TxPoolOptions, "chainId" | "maxTxBytes"> = {
  maxPoolTxs: 5000,
  maxPoolTxsPerAccount: 64,
  replayWindowMs: UNORDERED_TX_WINDOW_MS,
};
