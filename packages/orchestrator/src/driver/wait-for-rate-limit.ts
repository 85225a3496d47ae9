import type { AgentRunResult } from '@allium-loop/agents';

/** What {@link waitForRateLimit} needs: a clock, a cancellable sleep, and the run's wall-clock deadline. */
export interface RateLimitWaitOptions {
  /** Epoch milliseconds now. */
  readonly now: () => number;
  /** Sleeps `ms`; resolves early (without throwing) when `signal` fires. */
  readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  readonly signal: AbortSignal;
  /** Epoch milliseconds when the run's wall-clock cap ends; absent = no cap. */
  readonly wallClockDeadline?: number;
  /** How long to wait when the agent reported a rate limit without a reset time (default 60 s). */
  readonly fallbackWaitMs?: number;
}

/** What came of a rate-limit wait. */
export type RateLimitWait =
  | { readonly kind: 'not_rate_limited' }
  /** Waited until the reset time (or the fallback); the call should run again. */
  | {
      readonly kind: 'waited';
      readonly untilMs: number;
      readonly waitedMs: number;
      readonly resetKnown: boolean;
    }
  /** The reset lies beyond the wall-clock cap: waited until the cap instead; the run is `timed_out`. */
  | { readonly kind: 'deadline'; readonly untilMs: number; readonly waitedMs: number }
  /** The signal fired during the wait; the run is `cancelled`. */
  | { readonly kind: 'aborted'; readonly waitedMs: number };

/** Default wait when a rate limit comes without a reset time. */
export const DEFAULT_RATE_LIMIT_WAIT_MS = 60_000;

/**
 * Waits out an agent's rate limit instead of burning ticks: until `result.rateLimitResetAt` (or a fallback wait
 * when the CLI gave no reset time), but never past the wall-clock deadline — the wait counts against that cap.
 * Returns at once with `not_rate_limited` for any other outcome. Never throws; an abort ends the wait early.
 */
export async function waitForRateLimit(
  result: Pick<AgentRunResult, 'outcome' | 'rateLimitResetAt'>,
  options: RateLimitWaitOptions,
): Promise<RateLimitWait> {
  if (result.outcome !== 'rate_limited') return { kind: 'not_rate_limited' };
  const started = options.now();
  const resetKnown = result.rateLimitResetAt !== undefined;
  const resetAt = result.rateLimitResetAt ?? started + (options.fallbackWaitMs ?? DEFAULT_RATE_LIMIT_WAIT_MS);
  const deadline = options.wallClockDeadline;
  const untilMs = deadline === undefined ? resetAt : Math.min(resetAt, deadline);
  if (untilMs > started && !options.signal.aborted) await options.sleep(untilMs - started, options.signal);
  const waitedMs = Math.max(0, options.now() - started);
  if (options.signal.aborted) return { kind: 'aborted', waitedMs };
  if (deadline !== undefined && resetAt > deadline) return { kind: 'deadline', untilMs, waitedMs };
  return { kind: 'waited', untilMs, waitedMs, resetKnown };
}

/** A real {@link RateLimitWaitOptions.sleep}: a timer that an abort clears. */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve();
      return;
    }
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
