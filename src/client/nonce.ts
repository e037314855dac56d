import { RpcError, TransactionRejectedError } from "./errors.ts";

/**
 * Hands out one account's nonces. The node admits an ordered transaction only with exactly the
 * account's next nonce (committed count plus its pending ordered transactions; no queue for
 * future nonces), so sends of one wallet run one at a time: a rejected send then provably did
 * not use its nonce, and the next send gets it back. The cost is one round trip per send of the
 * same wallet; different wallets do not wait for each other.
 */
export class NonceManager {
  private readonly fetchNonce: () => Promise<number>;
  /** The nonce the next send carries; undefined until asked, and after an unclear outcome. */
  private next: number | undefined;
  private tail: Promise<unknown> = Promise.resolve();

  /** `fetchNonce` asks the node (chain_getNonce): queried once, then counted locally. */
  constructor(fetchNonce: () => Promise<number>) {
    this.fetchNonce = fetchNonce;
  }

  /**
   * Runs `send` with the first of `count` consecutive nonces, after every earlier send of this
   * account has settled. On a nonce rejection it resynchronizes once (from the node's
   * `expected` when given, else chain_getNonce) and sends again.
   */
  use<T>(count: number, send: (first: number) => Promise<T>): Promise<T> {
    const run = this.tail.then(() => this.send(count, send));
    this.tail = run.catch(() => undefined);
    return run;
  }

  /** Forgets the local count, so the next send asks the node again. */
  reset(): void {
    this.next = undefined;
  }

  private async send<T>(count: number, send: (first: number) => Promise<T>): Promise<T> {
    this.next ??= await this.fetchNonce();
    try {
      return await this.attempt(count, send, this.next);
    } catch (error) {
      if (!isNonceRejection(error)) throw error;
      this.next = resyncedNonce(error) ?? (await this.fetchNonce());
      return this.attempt(count, send, this.next);
    }
  }

  private async attempt<T>(count: number, send: (first: number) => Promise<T>, first: number): Promise<T> {
    try {
      const result = await send(first);
      this.next = first + count;
      return result;
    } catch (error) {
      // A JSON-RPC error is a definite refusal: nothing was admitted and the nonce is still free.
      // Anything else (timeout, lost connection) may or may not have been admitted: ask again.
      if (!(error instanceof RpcError)) this.next = undefined;
      throw error;
    }
  }
}

function isNonceRejection(error: unknown): error is TransactionRejectedError {
  return (
    error instanceof TransactionRejectedError &&
    (error.reason === "nonce_too_low" || error.reason === "nonce_too_high")
  );
}

/** The first nonce the node wants, from a rejection's `expected` (shifted back by a batch index). */
function resyncedNonce(error: TransactionRejectedError): number | undefined {
  const expected = error.expected;
  if (typeof expected !== "number") return undefined;
  return expected - (error.index ?? 0);
}
