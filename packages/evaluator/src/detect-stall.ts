/** What the supervisor remembers of one finished tick, for stall detection. Oldest first in a history. */
export interface TickSummary {
  /** {@link fingerprint} of the tick's observation. */
  readonly fingerprint: string;
  /** Hash of the diff the agent's actions produced this tick (including the empty diff); absent when none acted. */
  readonly actionHash?: string;
  /** Set when this tick was an attempt to fix failing tests (the implement inner loop). */
  readonly fixAttempt?: FixAttempt;
  /** Tokens the tick's agent calls used (input + output + cache), when known. */
  readonly tokens?: number;
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
  /**
   * Whether going back to the state of two ticks before (A→B→A, a backtrack) counts towards a stall. One backtrack
   * is tolerated (an agent may undo a wrong step once); the second in a history is an oscillation.
   */
  readonly oscillation: boolean;
  /** Backtracks tolerated before an oscillation is a stall; default 1. */
  readonly toleratedBacktracks?: number;
  /**
   * Stall when the fingerprint stayed the same for this many ticks in a row while the tokens of each tick grew
   * ("tokens climbing while state doesn't move"); default 2. It does not wait for the no-progress cap: a run given
   * a long `noProgressTicks` is still stopped when each flat tick costs more than the one before. 0 turns it off.
   */
  readonly tokenClimbTicks?: number;
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

/** Why a history counts as stalled (a climb of tokens is named before plain no progress), and its terminal state. */
export interface StallReason {
  readonly kind: 'no_progress' | 'oscillation' | 'repeated_action' | 'failed_fix_attempts' | 'token_climb';
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
 * the fingerprint unchanged for `noProgressTicks` ticks, a second A→B→A backtrack (the first is tolerated), the
 * tokens of each tick climbing for `tokenClimbTicks` ticks while the fingerprint does not move,
 * the latest action's diff hash seen `repeatedAction` times, or `failedFixAttempts` consecutive failed fix
 * attempts on the same set of failing tests. Pure; never throws.
 */
export function detectStall(
  history: readonly TickSummary[],
  caps: StallCaps = DEFAULT_STALL_CAPS,
): StallVerdict {
  const reasons = [
    tokenClimb(history, caps),
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

/** The ticks (indexes) that went back to the state of two ticks before: A→B→A. */
export function backtracks(history: readonly TickSummary[]): number[] {
  const found: number[] = [];
  for (let i = 2; i < history.length; i += 1) {
    const [a, b, c] = [history[i - 2]!.fingerprint, history[i - 1]!.fingerprint, history[i]!.fingerprint];
    if (a === c && a !== b) found.push(i);
  }
  return found;
}

function oscillation(history: readonly TickSummary[], caps: StallCaps): StallReason | undefined {
  if (!caps.oscillation) return undefined;
  const found = backtracks(history);
  const tolerated = caps.toleratedBacktracks ?? 1;
  // Only a backtrack at the latest tick stops the run, once more than the tolerated number happened.
  if (found.length <= tolerated || found.at(-1) !== history.length - 1) return undefined;
  const [a, b] = history.slice(-2).map((tick) => tick.fingerprint);
  return {
    kind: 'oscillation',
    terminal: 'no_progress',
    message: `oscillating between ${a!} and ${b!} (${String(found.length)} backtracks; ${String(tolerated)} tolerated)`,
  };
}

function tokenClimb(history: readonly TickSummary[], caps: StallCaps): StallReason | undefined {
  const limit = caps.tokenClimbTicks ?? 2;
  if (limit <= 0 || history.length < limit + 1) return undefined;
  const recent = history.slice(-(limit + 1));
  const still = recent.every((tick) => tick.fingerprint === recent[0]!.fingerprint);
  const tokens = recent.map((tick) => tick.tokens);
  const climbing = tokens.every(
    (n, i) => n !== undefined && (i === 0 || n > (tokens[i - 1] ?? Number.POSITIVE_INFINITY)),
  );
  if (!still || !climbing) return undefined;
  return {
    kind: 'token_climb',
    terminal: 'no_progress',
    message: `tokens climbing while the state does not move: ${tokens.join(' → ')} tokens over ${String(limit)} ticks at ${recent[0]!.fingerprint}`,
  };
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
