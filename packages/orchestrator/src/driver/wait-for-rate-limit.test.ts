import { describe, expect, it } from 'vitest';
import { abortableSleep, waitForRateLimit, type RateLimitWaitOptions } from './wait-for-rate-limit.js';

function fakeClock(start: number) {
  let time = start;
  const sleeps: number[] = [];
  const options = (extra: Partial<RateLimitWaitOptions> = {}): RateLimitWaitOptions => ({
    now: () => time,
    sleep: async (ms) => {
      sleeps.push(ms);
      time += ms;
    },
    signal: new AbortController().signal,
    ...extra,
  });
  return { options, sleeps };
}

describe('waitForRateLimit', () => {
  it('does nothing for an outcome that is not a rate limit', async () => {
    const clock = fakeClock(1_000);
    expect(await waitForRateLimit({ outcome: 'failed' }, clock.options())).toEqual({
      kind: 'not_rate_limited',
    });
    expect(clock.sleeps).toEqual([]);
  });

  it('waits until the reset time the agent reported', async () => {
    const clock = fakeClock(1_000);
    const wait = await waitForRateLimit(
      { outcome: 'rate_limited', rateLimitResetAt: 31_000 },
      clock.options(),
    );
    expect(wait).toEqual({ kind: 'waited', untilMs: 31_000, waitedMs: 30_000, resetKnown: true });
    expect(clock.sleeps).toEqual([30_000]);
  });

  it('waits the fallback when no reset time was given', async () => {
    const clock = fakeClock(0);
    const wait = await waitForRateLimit(
      { outcome: 'rate_limited' },
      clock.options({ fallbackWaitMs: 5_000 }),
    );
    expect(wait).toMatchObject({ kind: 'waited', waitedMs: 5_000, resetKnown: false });
  });

  it('stops at the wall-clock deadline when the reset lies beyond it', async () => {
    const clock = fakeClock(0);
    const wait = await waitForRateLimit(
      { outcome: 'rate_limited', rateLimitResetAt: 100_000 },
      clock.options({ wallClockDeadline: 20_000 }),
    );
    expect(wait).toEqual({ kind: 'deadline', untilMs: 20_000, waitedMs: 20_000 });
  });

  it('does not sleep for a reset time already past', async () => {
    const clock = fakeClock(50_000);
    const wait = await waitForRateLimit(
      { outcome: 'rate_limited', rateLimitResetAt: 10_000 },
      clock.options(),
    );
    expect(wait).toMatchObject({ kind: 'waited', waitedMs: 0 });
    expect(clock.sleeps).toEqual([]);
  });

  it('reports an abort during the real sleep', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 20);
    const started = Date.now();
    const wait = await waitForRateLimit(
      { outcome: 'rate_limited', rateLimitResetAt: Date.now() + 3_600_000 },
      { now: Date.now, sleep: abortableSleep, signal: controller.signal },
    );
    expect(wait.kind).toBe('aborted');
    // The wait was an hour: ending within minutes shows the abort cut it short, however busy the machine.
    expect(Date.now() - started).toBeLessThan(300_000);
  });
});
