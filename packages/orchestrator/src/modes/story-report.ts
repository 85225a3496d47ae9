import type { Prd } from './prd.js';
import type { StoryIteration, StoryModeState } from './story-mode.js';
import { formatTable } from './verify-report.js';

/** The verdict as the progress log writes it: `PASS`, `SKIP-EVAL`, `REJECTED — reason`, `WARN — reason`. */
export function progressVerdict(iteration: StoryIteration): string {
  if (iteration.verdict === 'PASS') return iteration.skipEval === true ? 'SKIP-EVAL' : 'PASS';
  const word = iteration.verdict === 'REJECT' ? 'REJECTED' : 'WARN';
  return `${word} — ${iteration.reason ?? ''}`;
}

/**
 * One `progress.md` entry in the agent-loop layout:
 *
 * ```
 * ### US-001 — Export invoices as CSV
 * Date: 2026-11-30T14:05:00.000Z
 * Iteration: 3
 * Verdict: REJECTED — no CSV file is written
 * ---
 * ```
 *
 * A story blocked by this verdict gets `[BLOCKED]` after it; a generator that crashed gets a `Warning:` line.
 */
export function progressEntry(iteration: StoryIteration): string {
  return [
    `### ${iteration.story} — ${iteration.title}`,
    `Date: ${iteration.at}`,
    `Iteration: ${String(iteration.tick)}`,
    `Verdict: ${progressVerdict(iteration)}${iteration.blocked ? ' [BLOCKED]' : ''}`,
    ...(iteration.generatorCrash === undefined
      ? []
      : [`Warning: the generator crashed (${iteration.generatorCrash}); the loop continued`]),
    '---',
    '',
    '',
  ].join('\n');
}

/** How many stories in scope pass, are blocked, and remain. */
export function storyCounts(
  prd: Prd,
  only?: string,
): { passed: number; blocked: number; remaining: number; total: number } {
  const scope = prd.userStories.filter((s) => only === undefined || s.id === only);
  const passed = scope.filter((s) => s.passes).length;
  const blocked = scope.filter((s) => !s.passes && s.blocked === true).length;
  return { passed, blocked, remaining: scope.length - passed - blocked, total: scope.length };
}

/** The exit lines of a story run: `{passed}/{total} stories complete` and the counts. */
export function exitLines(prd: Prd, only?: string): string[] {
  const c = storyCounts(prd, only);
  return [
    `${String(c.passed)}/${String(c.total)} stories complete`,
    `passed: ${String(c.passed)} · blocked: ${String(c.blocked)} · remaining: ${String(c.remaining)}`,
  ];
}

/** The summary table of a story run: one row per iteration. */
export function formatStorySummary(state: StoryModeState): string {
  return formatTable(
    ['tick', 'story', 'verdict', 'reason'],
    state.iterations.map((i) => [
      String(i.tick),
      i.story,
      i.blocked ? `${i.verdict} (blocked)` : i.verdict,
      i.reason ?? '',
    ]),
  );
}
