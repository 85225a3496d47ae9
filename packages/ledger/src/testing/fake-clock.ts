/** A clock tests move by hand; pass `clock.now` wherever a `now: () => Date` is expected. */
export interface FakeClock {
  /** The current fake time (a fresh Date each call). */
  readonly now: () => Date;
  /** Moves time forward by `ms`. */
  advance(ms: number): void;
  /** Jumps to `date`. */
  set(date: Date): void;
}

/** Creates a {@link FakeClock} starting at `start` (2026-01-01T00:00:00Z by default). */
export function createFakeClock(start: Date = new Date('2026-01-01T00:00:00.000Z')): FakeClock {
  let current = start.getTime();
  return {
    now: () => new Date(current),
    advance: (ms) => {
      current += ms;
    },
    set: (date) => {
      current = date.getTime();
    },
  };
}
