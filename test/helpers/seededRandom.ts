/**
 * mulberry32: a small seeded 32-bit generator, so that a run (a crash loop, a simulation, a
 * bench's accounts and amounts) can be repeated exactly from its seed. Not for keys.
 */
export function seededUint32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

/** The same generator as floats in [0, 1). */
export function seededRandom(seed: number): () => number {
  const next = seededUint32(seed);
  return () => next() / 4294967296;
}
