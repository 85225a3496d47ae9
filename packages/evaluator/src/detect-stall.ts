/** What the supervisor remembers of one finished tick, for stall detection. Oldest first in a history. */
export interface TickSummary {
  /** {@link fingerprint} of the tick's observation. */
  readonly fingerprint: string;
  /** Hash of the diff the agent's actions produced this tick (including the empty diff); absent when none acted. */
  readonly actionHash?: string;
  /** Set when this tick was an attempt to fix failing tests (the implement inner loop). */
  readonly fixAttempt?: FixAttempt;
}

/** One attempt to make a set of failing tests pass. */
export interface FixAttempt {
  /** The failing tests the attempt targeted. */
  readonly targets: readonly string[];
  /** Which of them still failed afterwards; the attempt failed when this is not empty. */
  readonly stillFailing: readonly string[];
}

/** Limits of stall detection; the defaults are {@link DEFAULT_STALL_CAPS}. */
export interface StallCaps {
  /** Stall after this many consecutive ticks whose fingerprint equals the previous one's (≥ 1). */
  readonly noProgressTicks: number;
  /** Whether an A→B→A fingerprint sequence counts as a stall. */
  readonly oscillation: boolean;
  /** Stall when the latest action hash occurs this many times in the history (≥ 1). */
  readonly repeatedAction: number;
  /** Escalate after this many consecutive failed fix attempts on the same failing tests (≥ 1). */
  readonly failedFixAttempts: number;
}

/** The architecture's defaults: 2 unchanged ticks, oscillation on, 3 identical actions, 3 failed fix attempts. */
export const DEFAULT_STALL_CAPS: StallCaps = {
  noProgressTicks: 2,
  oscillation: true,
  repeatedAction: 3,
  failedFixAttempts: 3,
};

/** Why a history counts as stalled, and the terminal state the supervisor should enter. */
export interface StallReason {
  readonly kind: 'no_progress' | 'oscillation' | 'repeated_action' | 'failed_fix_attempts';
  /** `no_progress` stops the run; failed fix attempts escalate to the user (`awaiting_input`). */
  readonly terminal: 'no_progress' | 'awaiting_input';
  readonly message: string;
}

/** The verdict of {@link detectStall}: stalled exactly when at least one reason applies; reasons in the order above. */
export interface StallVerdict {
  readonly stalled: boolean;
  readonly reasons: readonly StallReason[];
}

/**
 * Decides whether a run has stalled, from the history of finished ticks (oldest first, the latest last):
 * the fingerprint unchanged for `noProgressTicks` ticks, an A→B→A oscillation of the last three fingerprints,
 * the latest action's diff hash seen `repeatedAction` times, or `failedFixAttempts` consecutive failed fix
 * attempts on the same set of failing tests. Pure; never throws.
 */
export function detectStall(
  history: readonly TickSummary[],
  caps: StallCaps = DEFAULT_STALL_CAPS,
): StallVerdict {
  const reasons = [
    noProgress(history, caps),
    oscillation(history, caps),
    repeatedAction(history, caps),
    failedFixes(history, caps),
  ].filter((reason): reason is StallReason => reason !== undefined);
  return { stalled: reasons.length > 0, reasons };
}

function noProgress(history: readonly TickSummary[], caps: StallCaps): StallReason | undefined {
  let unchanged = 0;
  for (let index = history.length - 1; index > 0; index -= 1) {
    if (history[index]!.fingerprint !== history[index - 1]!.fingerprint) break;
    unchanged += 1;
  }
  if (unchanged < caps.noProgressTicks) return undefined;
  return {
    kind: 'no_progress',
    terminal: 'no_progress',
    message: `no progress for ${String(unchanged)} tick(s): ${history.at(-1)!.fingerprint}`,
  };
}

function oscillation(history: readonly TickSummary[], caps: StallCaps): StallReason | undefined {
  if (!caps.oscillation || history.length < 3) return undefined;
  const [a, b, c] = history.slice(-3).map((tick) => tick.fingerprint);
  if (a !== c || a === b) return undefined;
  return { kind: 'oscillation', terminal: 'no_progress', message: `oscillating between ${a!} and ${b!}` };
}

function repeatedAction(history: readonly TickSummary[], caps: StallCaps): StallReason | undefined {
  const latest = history.at(-1)?.actionHash;
  if (latest === undefined) return undefined;
  const times = history.filter((tick) => tick.actionHash === latest).length;
  if (times < caps.repeatedAction) return undefined;
  return {
    kind: 'repeated_action',
    terminal: 'no_progress',
    message: `the same agent action (diff ${latest.slice(0, 12)}) was made ${String(times)} times`,
  };
}

function failedFixes(history: readonly TickSummary[], caps: StallCaps): StallReason | undefined {
  const attempts = history.flatMap((tick) => (tick.fixAttempt === undefined ? [] : [tick.fixAttempt]));
  const latest = attempts.at(-1);
  if (latest === undefined || latest.stillFailing.length === 0) return undefined;
  const key = targetKey(latest.targets);
  let failed = 0;
  for (let index = attempts.length - 1; index >= 0; index -= 1) {
    const attempt = attempts[index]!;
    if (attempt.stillFailing.length === 0 || targetKey(attempt.targets) !== key) break;
    failed += 1;
  }
  if (failed < caps.failedFixAttempts) return undefined;
  return {
    kind: 'failed_fix_attempts',
    terminal: 'awaiting_input',
    message: `${String(failed)} failed fix attempts on the same failing tests: ${latest.stillFailing.join(', ')}`,
  };
}

function targetKey(targets: readonly string[]): string {
  return JSON.stringify([...new Set(targets)].sort());
}
