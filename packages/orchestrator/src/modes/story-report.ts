import type { StoryIteration, StoryModeState } from './story-mode.js';
import { formatTable } from './verify-report.js';

/** One `progress.md` entry: the iteration, the story, the time, the verdict. */
export function progressEntry(iteration: StoryIteration): string {
  const verdict = iteration.verdict === 'PASS' ? 'PASS' : `REJECT — ${iteration.reason ?? ''}`;
  return [
    `## Iteration ${String(iteration.tick)}: ${iteration.story} — ${iteration.title}`,
    `- time: ${iteration.at}`,
    `- verdict: ${verdict}`,
    ...(iteration.blocked ? ['- story blocked: rejection limit reached'] : []),
    '',
    '',
  ].join('\n');
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
