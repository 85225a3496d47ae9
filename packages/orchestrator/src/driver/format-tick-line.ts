import type { TickVerdict } from '../decide/loop-state.js';

/** Formats `usd` for the tick line; unknown cost shows as `$?`, a lower bound as `≥$0.42`. */
export function formatUsd(usd: number | null, unknownCalls = 0): string {
  if (usd === null) return unknownCalls > 0 ? '$?' : '$0.00';
  return `${unknownCalls > 0 ? '≥' : ''}$${usd.toFixed(2)}`;
}

/** The one line a tick prints: `tick 3 · tests 14/17 · weed dirty(2) · openQ blocking 0 / parked 1 · $0.42`. */
export function formatTickLine(verdict: TickVerdict, usd: string): string {
  const tests = verdict.observation.tests;
  const testText =
    tests.counts === 'known'
      ? `tests ${String(tests.passed)}/${String(tests.passed + tests.failed)}${tests.skipped > 0 ? ` (+${String(tests.skipped)} skipped)` : ''}`
      : 'tests ?/? (counts unknown)';
  const weed = verdict.observation.weed;
  const weedText =
    weed.status === 'dirty'
      ? `weed dirty(${String(weed.divergences)})`
      : weed.status === 'clean'
        ? 'weed clean'
        : 'weed not run';
  const q = verdict.observation.openQuestions;
  const parts = [
    `tick ${String(verdict.tick)}`,
    testText,
    weedText,
    `openQ blocking ${String(q.blocking)} / parked ${String(q.parked)}`,
  ];
  if (verdict.observation.structuralErrors > 0)
    parts.push(`spec errors ${String(verdict.observation.structuralErrors)}`);
  if (verdict.observation.distillNew !== undefined)
    parts.push(`distill new ${String(verdict.observation.distillNew)}`);
  parts.push(usd);
  return parts.join(' · ');
}
