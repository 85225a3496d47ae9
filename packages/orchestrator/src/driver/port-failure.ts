import { AlliumLoopError } from '@allium-loop/errors';
import type { PortFailure } from '@allium-loop/ledger';

/**
 * What a port failure (an error thrown by an agent, test, evaluator or git port) keeps for the report: its code, its
 * hint, the chain of causes and whether running it again may succeed. Errors that are not allium-loop errors get the
 * code `internal` and are never retried.
 */
export interface DescribedFailure extends PortFailure {
  readonly message: string;
  readonly retryable: boolean;
}

/** Pure: the report's view of a thrown value. */
export function describeFailure(error: unknown): DescribedFailure {
  const message = error instanceof Error ? error.message : String(error);
  const typed = AlliumLoopError.is(error);
  const causes: string[] = [];
  let current: unknown = error instanceof Error ? error.cause : undefined;
  while (current !== undefined && current !== null && causes.length < 4) {
    causes.push(current instanceof Error ? current.message : String(current));
    current = current instanceof Error ? current.cause : undefined;
  }
  return {
    message,
    code: typed ? error.code : 'internal',
    retryable: typed && error.retryable,
    ...(typed && error.hint !== undefined ? { hint: error.hint } : {}),
    ...(causes.length === 0 ? {} : { cause: causes.join(' <- ') }),
  };
}

/** The part of a failure the ledger keeps (the message is the terminal detail). */
export function portFailure(failure: DescribedFailure): PortFailure {
  return {
    code: failure.code,
    ...(failure.hint === undefined ? {} : { hint: failure.hint }),
    ...(failure.cause === undefined ? {} : { cause: failure.cause }),
  };
}

/** The one-line terminal detail of a failure: the message, its code, and what to do next. */
export function failureDetail(failure: DescribedFailure): string {
  return `${failure.message} [${failure.code}]${failure.hint === undefined ? '' : `. ${failure.hint}`}`;
}

/** How retryable port failures are retried: exponential backoff from `baseMs`, at most `maxMs`, `maxAttempts` tries. */
export interface BackoffPolicy {
  readonly baseMs: number;
  readonly maxMs: number;
  /** Tries in all, the first included (1 = never retry). */
  readonly maxAttempts: number;
}

/** Three tries, 2 s then 4 s apart. */
export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 2_000, maxMs: 30_000, maxAttempts: 3 };

/** What to do after the `attempt`-th try (1-based) of an action failed. */
export type RetryDecision =
  | { readonly retry: true; readonly delayMs: number }
  | { readonly retry: false; readonly why: 'not_retryable' | 'attempts_exhausted' | 'wall_clock' };

/**
 * Pure backoff policy: a retryable failure is tried again after `baseMs * 2^(attempt-1)` (capped at `maxMs`) while
 * tries are left and the wait ends before the wall clock (`remainingMs`, undefined without a cap) runs out.
 */
export function planRetry(
  failure: Pick<DescribedFailure, 'retryable'>,
  attempt: number,
  remainingMs: number | undefined,
  policy: BackoffPolicy = DEFAULT_BACKOFF,
): RetryDecision {
  if (!failure.retryable) return { retry: false, why: 'not_retryable' };
  if (attempt >= policy.maxAttempts) return { retry: false, why: 'attempts_exhausted' };
  const delayMs = Math.min(policy.maxMs, policy.baseMs * 2 ** (attempt - 1));
  if (remainingMs !== undefined && delayMs >= remainingMs) return { retry: false, why: 'wall_clock' };
  return { retry: true, delayMs };
}
