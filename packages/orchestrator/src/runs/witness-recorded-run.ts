import type { Ledger } from '@allium-loop/ledger';
import type { ProjectMeasurement } from '@allium-loop/verify';
import { initialLoopState } from '../decide/loop-state.js';
import { readLoopState } from '../driver/ledger-sync.js';
import type { WitnessReport } from '../driver/loop-ports.js';
import { INTEGRATION } from '../driver/run-loop.js';
import { witnessClaim } from '../driver/witness-step.js';
import { blockingQuestionTexts } from '../project/project-ports.js';
import { runWitnessGate } from '../project/witness-gate.js';

/** What {@link witnessRecordedRun} needs. */
export interface WitnessRecordedRunOptions {
  readonly cwd: string;
  /** The spec-loop run whose convergence claim is witnessed again. */
  readonly ledger: Ledger;
  /** The measurement of the tree `verify` just took (tests, structure, open questions). */
  readonly measured: ProjectMeasurement;
}

/**
 * The witness re-run as a CI gate (`allium-loop verify`): the recorded run's claim — its last tests, weed verdict,
 * reported parked questions and red-before-green observations, a decomposed run's slices together — checked
 * against the tree as it is now, with the hashes propagate recorded. Writes the run's witness record again.
 */
export async function witnessRecordedRun(options: WitnessRecordedRunOptions): Promise<WitnessReport> {
  const { ledger } = options;
  const state = readLoopState(ledger) ?? initialLoopState();
  const slices = ledger.subGoals.flatMap((goal) => {
    const s = readLoopState(ledger, goal.id);
    return s === undefined ? [] : [s];
  });
  const integration = slices.length > 0 ? readLoopState(ledger, INTEGRATION) : undefined;
  const claim = witnessClaim(state, { mode: ledger.entry?.mode ?? 'spec-first' }, slices, integration);
  return runWitnessGate({
    cwd: options.cwd,
    slug: ledger.slug,
    command: options.measured.tests.command,
    measured: options.measured,
    protectedTests: ledger.protectedTests,
    blockingQuestions: blockingQuestionTexts(ledger),
    claim,
  });
}
