/** A small seeded generator (mulberry32), so a generated run can be repeated: the same seed, the same draws. */
export interface Draws {
  /** A number in [0, 1). */
  random(): number;
  /** An integer in [0, n). */
  below(n: number): number;
  /** One element of a non-empty list. */
  pick<T>(list: readonly T[]): T;
}

export function seeded(seed: number): Draws {
  let state = seed >>> 0;
  const random = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const below = (n: number): number => Math.floor(random() * n);
  return { random, below, pick: <T>(list: readonly T[]): T => list[below(list.length)] as T };
}
