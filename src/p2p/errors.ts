/**
 * Why a p2p operation failed: a closed list of stable reasons (STYLE.md §2.6). `P2pNetwork`
 * throws `P2pError` across the layer boundary, never a bare `Error`.
 */
const P2P_ERROR_REASONS = [
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

export type P2pErrorReason = (typeof P2P_ERROR_REASONS)[number];

export class P2pError extends Error {
  readonly reason: P2pErrorReason;

  constructor(reason: P2pErrorReason, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "P2pError";
    this.reason = reason;
  }
}

/** Wraps any thrown value as a `P2pError` (keeping one that already is). */
export function toP2pError(err: unknown, fallback: P2pErrorReason): P2pError {
  if (err instanceof P2pError) return err;
  if (err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError")) {
    return new P2pError("timeout", err.message, { cause: err });
  }
  const message = err instanceof Error ? err.message : String(err);
  return new P2pError(fallback, message, { cause: err });
}

/** The message of anything thrown, for logs. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
