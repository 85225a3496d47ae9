import { rollUp, type RollUp, type SliceReport, type SliceStatus } from '@allium-loop/decomposer';
import type { Ledger } from '@allium-loop/ledger';
import type { LoopState } from '../decide/loop-state.js';

/** The decomposer's report of one slice loop (the shape `subGoals[].report` holds), from its loop state. */
export function sliceReport(sliceId: string, state: LoopState | undefined): SliceReport {
  const tests = state?.verdicts.at(-1)?.observation.tests;
  const status: SliceStatus =
    state === undefined ? 'pending' : state.terminal === undefined ? 'running' : state.terminal.state;
  return {
    sliceId,
    status,
    ticks: state?.verdicts.length ?? 0,
    tests:
      tests?.counts === 'known' ? { passed: tests.passed, failed: tests.failed } : { passed: 0, failed: 0 },
    costUsd: state?.spentUsd ?? 0,
    // Parked questions live in the spec and the ledger, not per slice: the roll-up lists the run's once, under
    // the integration pass, which measures the whole spec.
    parkedQuestions: [],
  };
}

/**
 * Rolls a decomposed run's slices up with the decomposer's `rollUp`: per-slice status, totals (ticks, tests,
 * cost), the run's open parked questions, and whether every slice and the integration pass converged.
 */
export function rollUpSlices(ledger: Ledger, readState: (sliceId: string) => LoopState | undefined): RollUp {
  const parked = ledger.questions
    .filter((q) => q.classification === 'parked' && q.status === 'open')
    .map((q) => q.text);
  const reports = ledger.subGoals.map((goal) => {
    const report = sliceReport(goal.id, readState(goal.id));
    return goal.id === ledger.subGoals.at(-1)?.id ? { ...report, parkedQuestions: parked } : report;
  });
  return rollUp(reports);
}
