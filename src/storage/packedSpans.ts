/**
 * Byte strings packed end to end into one buffer, cut at `ends` (span j ends at ends[j]): how
 * many small records cross to another thread in one message whose buffers are moved, not copied
 * (a block's writes to the writer thread, a block's trie records from the trie thread).
 */
export interface PackedSpans {
  /** Made on an ArrayBuffer of its own, so that it can be moved to another thread. */
  bytes: Uint8Array<ArrayBuffer>;
  ends: Uint32Array<ArrayBuffer>;
}

/** Copies `spans` into one new buffer (a view's bytes only, not its whole ArrayBuffer). */
export function packSpans(spans: readonly Uint8Array[]): PackedSpans {
  let size = 0;
  for (const span of spans) size += span.byteLength;
  const bytes = new Uint8Array(size);
  const ends = new Uint32Array(spans.length);
  let end = 0;
  for (const [j, span] of spans.entries()) {
    bytes.set(span, end);
    end += span.byteLength;
    ends[j] = end;
  }
  return { bytes, ends };
}

/** Span `j` of a PackedSpans, as a view into its buffer. */
export const spanAt = ({ bytes, ends }: PackedSpans, j: number): Uint8Array =>
  bytes.subarray(j === 0 ? 0 : ends[j - 1], ends[j]);
