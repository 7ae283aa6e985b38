/**
 * A small seeded PRNG (mulberry32) for the fault suite: the same seed gives the same faults, so a
 * failure reproduces. Tests print their seed; `E2E_SEED=<n>` overrides it to replay or explore.
 */
export interface Rng {
  readonly seed: number;
  /** Uniform in [0, 1). */
  next(): number;
  /** Integer in [0, n). */
  int(n: number): number;
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
}

export function seeded(seed: number): Rng {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    seed,
    next,
    int: (n) => Math.floor(next() * n),
    chance: (p) => next() < p,
    pick: (items) => items[Math.floor(next() * items.length)],
  };
}

/** The test's fixed seed, unless E2E_SEED overrides it. */
export function testSeed(fixed: number): number {
  const env = process.env.E2E_SEED;
  return env !== undefined && /^\d+$/.test(env) ? Number(env) : fixed;
}
