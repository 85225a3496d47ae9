import { StoryModeStateSchema, type JournalEvent, type Ledger } from '@allium-loop/ledger';
import { recordVerdict } from '../driver/run-record.js';
import { applyVerdict, serializePrd, type Prd } from './prd.js';
import { progressEntry } from './story-report.js';

/**
 * A stories run whose process was killed between journaling an iteration's record and saving it (the journal goes
 * first, so the gap is a few milliseconds wide): the journal holds the iteration (`x-stories.verdict`) and the tick's
 * `verdict` after the last `run_started`, and the ledger has no iteration of that tick. The verdict was reached and
 * logged, so, as with a journaled end, the ledger is brought level with the journal instead of the story being worked
 * and its verdict logged a second time: the iteration and the tick's verdict are recorded, and the files the lost
 * process was about to write are left pending for the program to write first thing (`apply_pending`): the PRD, the
 * verdict applied to `prd` (the PRD on disk, which that process had not rewritten yet), and the progress entry.
 * `undefined` when there is nothing to bring level, or when the journaled iteration or the PRD (`undefined`) does
 * not read back (then the story is worked again, as before). Pure.
 */
export function storiesAtJournaledIteration(
  ledger: Ledger,
  events: readonly JournalEvent[],
  prd: Prd | undefined,
): Ledger | undefined {
  const mode = ledger.modeState;
  if (ledger.status === 'terminal' || mode.kind !== 'stories' || mode.stories === undefined) return undefined;
  const record = mode.stories;
  if (record.pending !== undefined || prd === undefined) return undefined;
  let started = events.length - 1;
  while (started >= 0 && events[started]?.type !== 'run_started') started -= 1;
  const since = events.slice(started + 1);
  const journaled = lastOf(since, (e) => e.type === 'x-stories.verdict');
  const data = journaled !== undefined && 'data' in journaled ? journaled.data : undefined;
  if (data === undefined) return undefined;
  const tick = data['tick'];
  if (tick !== ledger.tick || record.iterations.some((it) => it.tick === tick)) return undefined;
  const parsed = StoryModeStateSchema.safeParse({ ...record, iterations: [...record.iterations, data] });
  if (!parsed.success) return undefined;
  const iteration = parsed.data.iterations.at(-1)!;
  const applied =
    iteration.verdict === 'WARN'
      ? prd
      : applyVerdict(
          prd,
          iteration.story,
          iteration.verdict === 'PASS'
            ? { verdict: 'PASS' }
            : { verdict: 'REJECT', reason: iteration.reason ?? '' },
          record.config.evalRetries,
        );
  const level: Ledger = {
    ...ledger,
    modeState: {
      ...mode,
      stories: {
        ...parsed.data,
        pending: { prd: serializePrd(applied), progress: progressEntry(iteration) },
      },
    },
  };
  const verdict = lastOf(since, (e) => e.type === 'verdict' && e.tick === tick);
  return verdict?.type === 'verdict'
    ? recordVerdict(level, verdict.verdict, new Date(verdict.at)).ledger
    : level;
}

function lastOf(
  events: readonly JournalEvent[],
  test: (event: JournalEvent) => boolean,
): JournalEvent | undefined {
  for (let i = events.length - 1; i >= 0; i -= 1) if (test(events[i]!)) return events[i];
  return undefined;
}
