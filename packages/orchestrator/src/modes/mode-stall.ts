import { detectStall } from '@allium-loop/evaluator';
import type { ModeStop } from './mode-context.js';

/** One recorded tick of a mode, as its stall detection sees it. */
export interface ModeTick {
  /** What "the state did not move" means for the mode: equal fingerprints are the same state. */
  readonly fingerprint: string;
  /** Tokens the tick's agent calls used; `undefined` or 0 when no call reported any. */
  readonly tokens?: number | undefined;
}

/** How a mode names its stop: the detail of plain no progress, and what the other reasons' messages are about. */
export interface StallWording {
  /** The whole detail when the fingerprint did not change for the cap (e.g. `the state file did not change …`). */
  readonly unchanged: string;
  /** What the state is, before the evaluator's message of a backtrack or a token climb (e.g. `the state file`). */
  readonly subject: string;
}

/**
 * The evaluator's stall rules ({@link detectStall}) over a mode's ticks, oldest first — the same rules as the spec
 * loop's: the fingerprint unchanged for `noProgressTicks` ticks, a second A→B→A backtrack (the first is
 * tolerated), or the tokens of each tick climbing while the fingerprint does not move (`token_climb`). A mode has
 * no agent action hashes or fix attempts, so those rules never fire here. Pure: the `no_progress` stop of the
 * first reason (named as its `reason`), if any.
 */
export function modeStall(
  ticks: readonly ModeTick[],
  noProgressTicks: number,
  wording: StallWording,
): ModeStop | undefined {
  const history = ticks.map(({ fingerprint, tokens }) =>
    tokens === undefined || tokens === 0 ? { fingerprint } : { fingerprint, tokens },
  );
  const reason = detectStall(history, {
    noProgressTicks,
    oscillation: true,
    repeatedAction: Number.POSITIVE_INFINITY,
    failedFixAttempts: Number.POSITIVE_INFINITY,
  }).reasons[0];
  if (reason === undefined) return undefined;
  return {
    state: 'no_progress',
    reason: reason.kind,
    detail: reason.kind === 'no_progress' ? wording.unchanged : `${wording.subject}: ${reason.message}`,
  };
}

/** The token counts an agent call reported. */
export interface CallTokens {
  readonly input?: number | undefined;
  readonly output?: number | undefined;
  readonly cacheRead?: number | undefined;
  readonly cacheWrite?: number | undefined;
}

/** All the tokens of one agent call (input, output and cache), or `undefined` when it reported none. */
export function callTokens(used: CallTokens | undefined): number | undefined {
  if (used === undefined) return undefined;
  return (used.input ?? 0) + (used.output ?? 0) + (used.cacheRead ?? 0) + (used.cacheWrite ?? 0);
}
