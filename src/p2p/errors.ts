/**
 * Why a p2p operation failed: a closed list of stable reasons (STYLE.md §2.6). `P2PNetwork`
 * throws `P2PError` across the layer boundary, never a bare `Error`.
 */
export const P2P_ERROR_REASONS = [
  /** An argument or option is malformed (bad multiaddr, bad node key, from > to, ...). */
  "invalid_argument",
  /** The network is not running (before start or after stop). */
  "not_running",
  /** The TCP listener could not be opened (port in use, address not local, ...). */
  "listen_failed",
  /** The peer is not connected or has not passed the handshake. */
  "not_connected",
  /** No answer within the request timeout. */
  "timeout",
  /** A message (ours or the peer's) is larger than `maxMessageBytes` or a protocol's bound. */
  "message_too_large",
  /** A peer's message is not what the protocol allows (not JSON, wrong shape, too many items). */
  "bad_message",
  /** The stream broke: reset, closed early or refused by the peer. */
  "stream_error",
] as const;

export type P2PErrorReason = (typeof P2P_ERROR_REASONS)[number];

export class P2PError extends Error {
  readonly reason: P2PErrorReason;

  constructor(reason: P2PErrorReason, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "P2PError";
    this.reason = reason;
  }
}

/** Wraps any thrown value as a `P2PError` (keeping one that already is). */
export function toP2PError(err: unknown, fallback: P2PErrorReason): P2PError {
  if (err instanceof P2PError) return err;
  if (err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError")) {
    return new P2PError("timeout", err.message, { cause: err });
  }
  const message = err instanceof Error ? err.message : String(err);
  return new P2PError(fallback, message, { cause: err });
}

/** The message of anything thrown, for logs. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
