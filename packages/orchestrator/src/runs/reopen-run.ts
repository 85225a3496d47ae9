import type { Ledger, SpecLoopState } from '@allium-loop/ledger';
import { specRecord } from '../driver/ledger-sync.js';
import { sliceRunMark } from '../scale-out/slice-run.js';
import type { TerminalState } from '../terminal-state.js';

/** Terminal states a run (or a slice of it) can be resumed from; the others stay ended. */
export const RESUMABLE_STATES: ReadonlySet<TerminalState> = new Set([
  'awaiting_input',
  'cancelled',
  'timed_out',
  'failed',
]);

/** Questions the user answered that no tend has written into the spec yet. */
function answeredIds(ledger: Ledger): string[] {
  return ledger.questions.filter((q) => q.status === 'answered').map((q) => q.id);
}

/** Whether a terminal run can go on now: resumable, and not still waiting for an unanswered blocking question. */
export function canReopen(ledger: Ledger): boolean {
  const state = ledger.terminal?.state;
  if (state === undefined || !RESUMABLE_STATES.has(state)) return false;
  if (state !== 'awaiting_input') return true;
  const unanswered = ledger.questions.some((q) => q.classification === 'blocking' && q.status === 'open');
  return answeredIds(ledger).length > 0 || !unanswered;
}

/**
 * One loop scope's state, reopened: the terminal is dropped and the stage says where to go on — `gather` when
 * answers wait to be written into the spec (tend runs next), the next tick after an escalation, or the stage it
 * stopped in (a cancelled or timed-out call runs again).
 */
function reopenScope(loop: SpecLoopState, state: TerminalState, answered: readonly string[]): SpecLoopState {
  const { terminal: _terminal, ...rest } = loop;
  const stage =
    answered.length > 0
      ? 'gather'
      : rest.stage === 'done' || state === 'awaiting_input'
        ? 'tick_start'
        : rest.stage;
  return {
    ...rest,
    stage,
    ...(state === 'awaiting_input' || answered.length > 0 ? { answered, blocking: [] } : {}),
  };
}

/** A loop state without its terminal. */
function withoutTerminal(loop: SpecLoopState): SpecLoopState {
  const { terminal: _terminal, ...rest } = loop;
  return rest;
}

/**
 * A terminal run that can go on (see {@link canReopen}), reopened; `undefined` when it stays ended (converged,
 * max_ticks, no_progress, budget_exhausted, or still waiting for an answer). A run stopped inside a slice
 * (Ctrl-C, the wall clock, a failed call, a question) stays in its slices stage, and the slice it stopped in is
 * reopened the same way, so resume continues that slice instead of ending again at once. Pure.
 */
export function reopenRun(ledger: Ledger): Ledger | undefined {
  const state = ledger.terminal?.state;
  if (ledger.modeState.kind !== 'spec') return undefined;
  const record = specRecord(ledger);
  const loop = record.loop;
  // A slice run (`run --slice`) has no loop of its own: only its slice's.
  const sliceRun = sliceRunMark(ledger) !== undefined;
  if ((loop === undefined && !sliceRun) || state === undefined || !canReopen(ledger)) return undefined;
  const answered = answeredIds(ledger);
  if (loop === undefined || loop.stage === 'slices') {
    const rest = loop === undefined ? undefined : withoutTerminal(loop);
    const slices = { ...record.slices };
    const reopened = new Set<string>();
    for (const goal of ledger.subGoals) {
      const slice = slices[goal.id];
      const terminal = slice?.terminal?.state;
      if (slice === undefined || terminal === undefined || !RESUMABLE_STATES.has(terminal)) continue;
      slices[goal.id] = reopenScope(slice, terminal, answered);
      reopened.add(goal.id);
    }
    return {
      ...ledger,
      status: 'running',
      terminal: null,
      subGoals: ledger.subGoals.map((goal) =>
        reopened.has(goal.id) ? { ...goal, status: 'running' as const } : goal,
      ),
      modeState: { ...record, ...(rest === undefined ? {} : { loop: rest }), slices },
    };
  }
  return {
    ...ledger,
    status: 'running',
    terminal: null,
    modeState: { ...record, loop: reopenScope(loop, state, answered) },
  };
}
