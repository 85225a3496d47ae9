import { AlliumLoopError } from '@allium-loop/errors';
import type {
  Divergence as LedgerDivergence,
  LoopStateRecord,
  JournalEvent,
  Ledger,
  TickVerdict as LedgerVerdict,
} from '@allium-loop/ledger';
import type { LoopEvent } from '../decide/loop-action.js';
import type { Divergence, LoopState, TickVerdict } from '../decide/loop-state.js';
import type { MeasureReport } from './loop-ports.js';
import { sliceReport } from './slice-roll-up.js';

const KIND: Readonly<Record<Divergence['classification'], LedgerDivergence['kind']>> = {
  'code-bug': 'code_bug',
  'spec-bug': 'spec_bug',
  aspirational: 'aspirational',
  'intentional-gap': 'intentional_gap',
};

type SpecRecord = Extract<LoopStateRecord, { kind: 'spec' }>;

/** The spec loop's part of the ledger; a ledger of another loop kind is refused (the schema ties kind to mode). */
export function specRecord(ledger: Ledger): SpecRecord {
  const record = ledger.modeState;
  if (record.kind !== 'spec')
    throw new AlliumLoopError(`Run "${ledger.slug}" is a ${record.kind} run, not a spec-loop run.`, {
      code: 'run.wrong_mode',
    });
  return record;
}

/**
 * Reads the spec loop state the driver persisted: `modeState.loop` for the run, `modeState.slices[id]` for a
 * slice; `undefined` when there is none, mode runs included (their state is not a spec loop's).
 */
export function readLoopState(ledger: Ledger, sliceId?: string): LoopState | undefined {
  const record = ledger.modeState;
  if (record.kind !== 'spec') return undefined;
  return sliceId === undefined ? record.loop : record.slices?.[sliceId];
}

/** Stores a slice loop's state under `modeState.slices[id]` and mirrors its status into `subGoals`. Pure. */
export function syncSliceLedger(ledger: Ledger, sliceId: string, state: LoopState, at: Date): Ledger {
  const status =
    state.terminal === undefined ? 'running' : state.terminal.state === 'converged' ? 'converged' : 'failed';
  const record = specRecord(ledger);
  return {
    ...ledger,
    updatedAt: at.toISOString(),
    modeState: { ...record, slices: { ...record.slices, [sliceId]: state } },
    subGoals: ledger.subGoals.map((goal) =>
      goal.id === sliceId
        ? {
            ...goal,
            status,
            report:
              state.terminal === undefined
                ? goal.report
                : {
                    ...sliceReport(sliceId, state),
                    reason: state.terminal.reason,
                    lastFingerprint: state.verdicts.at(-1)?.fingerprint ?? null,
                  },
          }
        : goal,
    ),
  };
}

/** Maps one tick verdict of `decide` onto the ledger's verdict shape. */
export function toLedgerVerdict(
  verdict: TickVerdict,
  state: LoopState,
  measure: MeasureReport | undefined,
  at: Date,
): LedgerVerdict {
  const tests = verdict.observation.tests;
  const weed = verdict.observation.weed;
  return {
    tick: verdict.tick,
    at: at.toISOString(),
    tests:
      tests.counts === 'known'
        ? {
            status: 'known',
            passed: tests.passed,
            failed: tests.failed,
            skipped: tests.skipped,
            failing: [...tests.failing],
          }
        : {
            status: 'unknown',
            reason: tests.timedOut
              ? 'test run timed out'
              : `exit code ${String(tests.exitCode)}; counts unreadable`,
          },
    weed: {
      status: weed.status === 'not_run' ? 'skipped' : weed.status,
      divergences: state.divergences.map((d) => ({
        kind: KIND[d.classification],
        construct: d.construct,
        detail: d.detail,
      })),
    },
    structural: {
      errors: verdict.observation.structuralErrors,
      messages: [...(measure?.structuralMessages ?? [])],
    },
    openQuestions: { ...verdict.observation.openQuestions },
    distillNew: verdict.observation.distillNew === undefined ? null : verdict.observation.distillNew > 0,
    fingerprint: verdict.fingerprint,
    git: measure?.git ?? { head: null, tree: null },
    converged: verdict.converged,
  };
}

/** Copies the loop state's counters and outcome into the ledger's own fields. Pure. */
export function syncLedger(ledger: Ledger, state: LoopState, at: Date, wallMs: number): Ledger {
  return {
    ...ledger,
    tick: state.tick,
    updatedAt: at.toISOString(),
    spent: { ...ledger.spent, ticks: state.verdicts.length, wallMs },
    activeInnerLoop:
      state.innerAttempts > 0 && state.terminal === undefined
        ? {
            kind: 'implement',
            startedAtTick: state.tick,
            attempt: state.innerAttempts,
            targets: [...state.fixTargets],
          }
        : null,
    status: state.terminal === undefined ? 'running' : 'terminal',
    terminal:
      state.terminal === undefined
        ? null
        : {
            state: state.terminal.state,
            reason: state.terminal.state,
            detail: state.terminal.reason,
            ...(state.terminal.error === undefined ? {} : { error: state.terminal.error }),
            at: at.toISOString(),
          },
    modeState: { ...specRecord(ledger), loop: state },
  };
}

/** Turns the events of a decision into journal events stamped with time and tick. */
export function toJournal(events: readonly LoopEvent[], tick: number, at: Date): JournalEvent[] {
  const stamp = { at: at.toISOString(), tick };
  return events.map((event): JournalEvent => {
    switch (event.kind) {
      case 'cap_reached':
        return { type: 'cap_reached', ...stamp, cap: event.cap, limit: event.limit, value: event.value };
      case 'tick_started':
        return { type: 'x-loop.tick_started', ...stamp, data: { reasons: [...event.reasons] } };
      case 'phase_retry':
        return { type: 'x-loop.phase_retry', ...stamp, data: { phase: event.phase, reason: event.reason } };
      case 'red_check':
        return {
          type: 'x-loop.red_check',
          ...stamp,
          data: { vacuous: [...event.vacuous], failing: [...event.failing] },
        };
      case 'tick_recorded':
        return {
          type: 'note',
          ...stamp,
          message: `tick ${String(event.verdict.tick)} evaluated`,
          data: {
            fingerprint: event.verdict.fingerprint,
            converged: event.verdict.converged,
            unmet: event.verdict.unmet.map((u) => u.message),
          },
        };
    }
  });
}
