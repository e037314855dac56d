/**
 * Synchronous observers of an event (a committed block, admitted transactions). A listener that
 * throws is reported to `onError` and does not stop the others or the code that emitted: watching
 * the chain must never break it.
 */
export class Listeners<T> {
  private readonly listeners = new Set<(event: T) => void>();
  private readonly onError: (error: unknown) => void;

  constructor(onError: (error: unknown) => void = () => {}) {
    this.onError = onError;
  }

  /** Adds a listener; the returned function removes it. */
  add(listener: (event: T) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(event: T): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (error) {
        this.onError(error);
      }
    }
  }

  get size(): number {
    return this.listeners.size;
  }
}
