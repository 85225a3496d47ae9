import type { JournalEvent, Ledger } from '@allium-loop/ledger';
import type { LoopObservation } from '../decide/loop-action.js';
import type { LoopConfig, LoopState } from '../decide/loop-state.js';
import { reopenAfterWitness } from '../decide/witness-route.js';
import { readLoopState, syncSliceLedger } from './ledger-sync.js';
import type { LoopPorts, WitnessClaim } from './loop-ports.js';

/**
 * What a loop recorded about itself, for its witness: the last measure's tests, the weed verdict, distill's new
 * findings, the parked questions it reported and (spec-first) its red-before-green observations. For the whole of
 * a decomposed run, the slices' records together (the integration pass's tests and weed, every slice's questions
 * and red observations). Pure.
 */
export function witnessClaim(
  state: LoopState,
  config: Pick<LoopConfig, 'mode'>,
  slices: readonly LoopState[] = [],
  integration?: LoopState,
): WitnessClaim {
  const scopes = [state, ...slices];
  const last = integration ?? state;
  const tests = last.measured?.tests ?? last.verdicts.at(-1)?.observation.tests;
  const weed = last.weed ?? last.verdicts.at(-1)?.observation.weed;
  const distillNew = last.distillNew;
  const red = scopes.flatMap((s) => (s.redBeforeGreen === undefined ? [] : [s.redBeforeGreen]));
  const reconciled = [...scopes, ...(integration === undefined ? [] : [integration])].flatMap((s) =>
    s.reconciliation === undefined ? [] : [s.reconciliation],
  );
  return {
    // A decomposed run's ticks are its slices' (its own first tick only gathered and planned).
    tick: slices.length > 0 ? slices.reduce((sum, s) => sum + s.tick, 0) : state.tick,
    mode: config.mode,
    ...(tests === undefined ? {} : { recorded: tests }),
    ...(weed === undefined ? {} : { weed }),
    ...(distillNew === undefined ? {} : { distillNew }),
    parkedReported: [...new Set(scopes.flatMap((s) => s.parkedReported ?? []))],
    ...(reconciled.length === 0
      ? {}
      : { reconciliation: { uncovered: reconciled.flatMap((r) => r.uncovered) } }),
    ...(config.mode === 'spec-first' && red.length > 0
      ? {
          redBeforeGreen: {
            newTests: [...new Set(red.flatMap((r) => r.newTests))],
            seenRed: [...new Set(red.flatMap((r) => r.seenRed))],
            seenGreen: [...new Set(red.flatMap((r) => r.seenGreen ?? []))],
          },
        }
      : {}),
  };
}

/** What {@link runWitnessStep} needs from the driver. */
export interface WitnessStepInput {
  readonly ports: Pick<LoopPorts, 'witness' | 'restoreTests'>;
  readonly ledger: Ledger;
  readonly state: LoopState;
  readonly config: Pick<LoopConfig, 'mode'>;
  /** The slice whose gate this is; absent for the run. */
  readonly slice?: string;
  /** The id of a decomposed run's integration pass in `subGoals`. */
  readonly integrationId: string;
  readonly signal: AbortSignal;
  readonly at: Date;
}

/** The witness's observation for `decide`, the ledger to persist, and the journal events to append. */
export interface WitnessStepOutcome {
  readonly observation: Extract<LoopObservation, { kind: 'witnessed' }>;
  readonly ledger: Ledger;
  readonly events: JournalEvent[];
}

/**
 * Runs the witness at a convergence gate and carries out what its verdict asks of the engine (never of the
 * witness): generated tests it found edited are restored from the engine's copies and journaled as violations;
 * when the whole of a decomposed run fails its witness, the integration pass is re-opened on the witness's route
 * so the slices loop picks it up again under its own caps.
 */
export async function runWitnessStep(input: WitnessStepInput): Promise<WitnessStepOutcome> {
  const { ledger, state, slice } = input;
  const decomposed = slice === undefined && state.slices !== undefined && state.slices > 1;
  const sliceStates = decomposed
    ? ledger.subGoals.flatMap((goal) => {
        const s = readLoopState(ledger, goal.id);
        return s === undefined ? [] : [s];
      })
    : [];
  const integration = decomposed ? readLoopState(ledger, input.integrationId) : undefined;
  const claim = witnessClaim(state, input.config, sliceStates, integration);
  const constructs = ledger.subGoals.find((goal) => goal.id === slice)?.slice.constructs;
  const report = await input.ports.witness({
    ...(slice === undefined ? {} : { slice }),
    ...(constructs === undefined ? {} : { constructs }),
    claim,
    signal: input.signal,
  });
  const { result } = report;
  const restored =
    result.verdict === 'FAIL' && report.tampered.length > 0
      ? await input.ports.restoreTests(report.tampered)
      : [];
  const stamp = { at: input.at.toISOString(), tick: state.tick };
  const events: JournalEvent[] = [
    ...report.tampered.map((test): JournalEvent => ({
      type: 'violation',
      ...stamp,
      kind: 'witness_generated_test_changed',
      path: test.path,
      detail: `${test.path} no longer matches the hash propagate recorded (found by the witness at the convergence gate)`,
      reverted: restored.includes(test.path),
    })),
    {
      type: 'x-loop.witness',
      ...stamp,
      data: JSON.parse(
        JSON.stringify({
          ...(slice === undefined ? {} : { slice }),
          verdict: result.verdict,
          summary: result.summary,
          record_path: result.record_path,
          violations: result.violations,
          restored,
        }),
      ) as Record<string, never>,
    },
  ];
  const observation: WitnessStepOutcome['observation'] = {
    kind: 'witnessed',
    verdict: result.verdict,
    summary: result.summary,
    violations: result.violations,
    failing: report.failing,
    restored,
  };
  let next = ledger;
  if (decomposed && result.verdict === 'FAIL' && integration !== undefined)
    next = syncSliceLedger(
      ledger,
      input.integrationId,
      reopenAfterWitness(integration, observation),
      input.at,
    );
  return { observation, ledger: next, events };
}
