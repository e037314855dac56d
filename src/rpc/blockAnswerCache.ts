import { RawJson } from "./rawJson.ts";

/**
 * Serialized answers for committed blocks, least recently used first out.
 *
 * Blocks are final (DESIGN §6: no reorgs), so the answer for a block number and a
 * `getFullTransactions` flag never changes once the block is committed: reading the block from
 * LMDB, decoding it, loading its transactions and serializing them is done once per block, not
 * once per request. A height that has no block yet is never cached (its answer is null now and a
 * block later). Bounded in entries and in bytes of text, so a client walking the whole chain
 * cannot grow it without bound.
 */
export class BlockAnswerCache {
  private readonly entries = new Map<string, RawJson>();
  private bytes = 0;
  private readonly maxEntries: number;
  private readonly maxBytes: number;

  constructor(maxEntries = 2_048, maxBytes = 32 * 1024 * 1024) {
    this.maxEntries = maxEntries;
    this.maxBytes = maxBytes;
  }

  /** The cached answer for block `number`, or the one `build` makes (cached unless undefined). */
  get(number: number, fullTransactions: boolean, build: () => unknown): RawJson | null {
    const key = `${number}:${fullTransactions ? 1 : 0}`;
    const hit = this.entries.get(key);
    if (hit !== undefined) {
      this.entries.delete(key); // re-inserted below: Map order is the recency order
      this.entries.set(key, hit);
      return hit;
    }
    const value = build();
    if (value === undefined || value === null) return null;
    const answer = new RawJson(JSON.stringify(value));
    if (answer.size <= this.maxBytes / 4) this.insert(key, answer);
    return answer;
  }

  get size(): number {
    return this.entries.size;
  }

  private insert(key: string, answer: RawJson): void {
    this.entries.set(key, answer);
    this.bytes += answer.size;
    for (const [oldest, old] of this.entries) {
      if (this.entries.size <= this.maxEntries && this.bytes <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= old.size;
    }
  }
}
