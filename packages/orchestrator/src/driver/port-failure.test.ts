import { AlliumLoopError } from '@allium-loop/errors';
import { describe, expect, it } from 'vitest';
import {
  describeFailure,
  failureDetail,
  planRetry,
  portFailure,
  type BackoffPolicy,
} from './port-failure.js';

const POLICY: BackoffPolicy = { baseMs: 1_000, maxMs: 5_000, maxAttempts: 5 };
const retryable = { retryable: true };

describe('describeFailure', () => {
  it('keeps the code, hint, retryable flag and the chain of causes of an allium-loop error', () => {
    const root = new Error('EMFILE: too many open files');
    const error = new AlliumLoopError('could not start the agent', {
      code: 'agents.spawn_failed',
      retryable: true,
      cause: new Error('spawn failed', { cause: root }),
      hint: 'Close other programs.',
    });
    const failure = describeFailure(error);
    expect(failure).toEqual({
      message: 'could not start the agent',
      code: 'agents.spawn_failed',
      retryable: true,
      hint: 'Close other programs.',
      cause: 'spawn failed <- EMFILE: too many open files',
    });
    expect(portFailure(failure)).toEqual({
      code: 'agents.spawn_failed',
      hint: 'Close other programs.',
      cause: 'spawn failed <- EMFILE: too many open files',
    });
    expect(failureDetail(failure)).toBe(
      'could not start the agent [agents.spawn_failed]. Close other programs.',
    );
  });

  it('an error of unknown origin is `internal` and never retryable', () => {
    expect(describeFailure(new TypeError('x is undefined'))).toEqual({
      message: 'x is undefined',
      code: 'internal',
      retryable: false,
    });
    expect(describeFailure('a string')).toMatchObject({ code: 'internal', retryable: false });
  });
});

describe('planRetry: the pure backoff policy', () => {
  it('doubles the wait from the base, capped at the maximum, until the tries run out', () => {
    const waits: number[] = [];
    for (let attempt = 1; ; attempt += 1) {
      const decision = planRetry(retryable, attempt, undefined, POLICY);
      if (!decision.retry) {
        expect(decision.why).toBe('attempts_exhausted');
        break;
      }
      waits.push(decision.delayMs);
    }
    expect(waits).toEqual([1_000, 2_000, 4_000, 5_000]);
  });

  it('never retries a failure that is not retryable', () => {
    expect(planRetry({ retryable: false }, 1, undefined, POLICY)).toEqual({
      retry: false,
      why: 'not_retryable',
    });
  });

  it('stops instead of waiting past the wall clock (a fake clock spends the waits)', () => {
    let now = 0;
    const wallClockMs = 6_500;
    const waits: number[] = [];
    let stopped: string | undefined;
    for (let attempt = 1; stopped === undefined; attempt += 1) {
      now += 100; // each try takes 100 ms on the fake clock
      const decision = planRetry(retryable, attempt, wallClockMs - now, POLICY);
      if (decision.retry) {
        waits.push(decision.delayMs);
        now += decision.delayMs;
      } else stopped = decision.why;
    }
    // 100 + 1000 + 100 + 2000 + 100 = 3300 ms used; a 4 s wait would end past 6.5 s.
    expect(waits).toEqual([1_000, 2_000]);
    expect(stopped).toBe('wall_clock');
    expect(now).toBeLessThanOrEqual(wallClockMs);
  });
});
