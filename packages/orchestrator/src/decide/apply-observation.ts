import type { LoopEvent, LoopObservation } from './loop-action.js';
import type { LoopConfig, LoopPhase, LoopState, Stage } from './loop-state.js';
import { applyWitness } from './witness-route.js';

/** The stage that follows a phase when it is done (or has failed for good). */
const AFTER: Readonly<Record<LoopPhase, Stage>> = {
  elicit: 'propagate',
  distill: 'propagate',
  tend: 'propagate',
  propagate: 'red_check',
  implement: 'measure',
  weed: 'evaluate',
};

/** Folds one observation into the loop state. Pure; `events` collects what the journal should record. */
export function applyObservation(
  state: LoopState,
  observation: LoopObservation,
  config: LoopConfig,
  events: LoopEvent[],
): LoopState {
  switch (observation.kind) {
    case 'start':
      return state;
    case 'cancelled':
      return {
        ...state,
        terminal: { state: 'cancelled', reason: 'cancelled by the user (Ctrl-C / SIGTERM)' },
      };
    case 'deadline': {
      const limit = config.caps.wallClockMs ?? 0;
      events.push({
        kind: 'cap_reached',
        cap: 'wallClock',
        detail: `the wall-clock cap of ${String(limit)} ms passed during a call, which was stopped`,
        limit,
        value: state.elapsedMs,
      });
      return {
        ...state,
        terminal: {
          state: 'timed_out',
          reason: `wall-clock cap of ${String(limit)} ms reached during a call`,
          ...(observation.error === undefined ? {} : { error: observation.error }),
        },
      };
    }
    case 'failed':
      return {
        ...state,
        terminal: {
          state: 'failed',
          reason: observation.reason,
          ...(observation.error === undefined ? {} : { error: observation.error }),
        },
      };
    case 'phase_done':
      return applyPhase(state, observation, config, events);
    case 'red_checked':
      return applyRedCheck(state, observation, config, events);
    case 'measured':
      return applyMeasurement(state, observation, config, events);
    case 'planned':
      return { ...state, slices: observation.slices, stage: observation.slices > 1 ? 'slices' : 'propagate' };
    case 'slices_done':
      // Every slice passed its own witness; the assembled whole is witnessed once more before it converges.
      return observation.terminal === undefined
        ? { ...state, stage: 'witness' }
        : { ...state, terminal: observation.terminal };
    case 'witnessed':
      return applyWitness(state, observation);
    case 'answers':
      return { ...state, answered: observation.answered, blocking: [], stage: 'gather' };
  }
}

type PhaseDone = Extract<LoopObservation, { kind: 'phase_done' }>;

function applyPhase(state: LoopState, done: PhaseDone, config: LoopConfig, events: LoopEvent[]): LoopState {
  const charged: LoopState = {
    ...state,
    spentUsd: state.spentUsd + (done.costUsd ?? 0),
    agentCalls: state.agentCalls + 1,
    ...(done.phase === 'implement' ? { innerAttempts: state.innerAttempts + 1 } : {}),
  };
  if (!done.ok) return applyPhaseFailure(charged, done, config, events);
  switch (done.phase) {
    case 'elicit':
    case 'distill':
    case 'tend': {
      const blocking = done.blocking ?? [];
      return {
        ...charged,
        specChanged: charged.specChanged || done.specChanged === true,
        blocking,
        ...(done.parked === undefined ? {} : { parkedReported: done.parked }),
        ...(done.phase === 'tend' ? { answered: [] } : {}),
        ...(done.phase === 'distill' && done.distillNew !== undefined ? { distillNew: done.distillNew } : {}),
        stage: blocking.length > 0 ? 'escalate' : 'plan',
      };
    }
    case 'propagate': {
      const generated = done.newTests ?? [];
      const seen = charged.redBeforeGreen ?? { newTests: [], seenRed: [] };
      return {
        ...charged,
        newTests: generated,
        ...(done.reconciliation === undefined ? {} : { reconciliation: done.reconciliation }),
        specChanged: false,
        stage: 'red_check',
        redBeforeGreen: { ...seen, newTests: union(seen.newTests, generated) },
      };
    }
    case 'implement':
      return { ...charged, contested: [...charged.contested, ...(done.contested ?? [])], stage: 'measure' };
    case 'weed': {
      const divergences = done.divergences ?? [];
      const counted = divergences.filter((d) => d.classification !== 'intentional-gap').length;
      return {
        ...charged,
        divergences,
        weed: counted === 0 ? { status: 'clean' } : { status: 'dirty', divergences: counted },
        stage: 'evaluate',
      };
    }
  }
}

function applyPhaseFailure(
  state: LoopState,
  done: PhaseDone,
  config: LoopConfig,
  events: LoopEvent[],
): LoopState {
  const failures = (state.phaseFailures[done.phase] ?? 0) + 1;
  const phaseFailures = { ...state.phaseFailures, [done.phase]: failures };
  if (failures <= config.caps.phaseRetries) {
    events.push({ kind: 'phase_retry', phase: done.phase, reason: done.detail ?? 'phase failed' });
    return { ...state, phaseFailures };
  }
  // Out of retries: the phase's contribution is missing this tick and the loop moves on; the verdict shows it.
  return { ...state, phaseFailures, stage: done.phase === 'implement' ? 'measure' : AFTER[done.phase] };
}

type RedChecked = Extract<LoopObservation, { kind: 'red_checked' }>;

function applyRedCheck(
  state: LoopState,
  checked: RedChecked,
  config: LoopConfig,
  events: LoopEvent[],
): LoopState {
  if (config.mode === 'code-first') {
    // Inverted: passing against existing code is the goal; failures go to weed for triage, not to implement.
    events.push({ kind: 'red_check', vacuous: [], failing: checked.failing });
    return { ...state, failing: checked.failing, stage: 'measure' };
  }
  const vacuous = checked.passing.filter((name) => state.newTests.includes(name));
  events.push({ kind: 'red_check', vacuous, failing: checked.failing });
  const seen = state.redBeforeGreen ?? { newTests: [], seenRed: [] };
  return {
    ...state,
    vacuous,
    failing: checked.failing,
    stage: 'implement',
    redBeforeGreen: {
      ...seen,
      seenRed: union(seen.seenRed, checked.failing),
      seenGreen: union(seen.seenGreen ?? [], vacuous),
    },
  };
}

type Measured = Extract<LoopObservation, { kind: 'measured' }>;

function applyMeasurement(
  state: LoopState,
  measured: Measured,
  config: LoopConfig,
  events: LoopEvent[],
): LoopState {
  const tests = measured.measurement.tests;
  // Every test run is shown as it happens, including those between the inner implement rounds of a tick.
  events.push({
    kind: 'tests_measured',
    round: state.innerAttempts,
    ...(tests.counts === 'known'
      ? { counts: { passed: tests.passed, failed: tests.failed, skipped: tests.skipped } }
      : {}),
  });
  const failing = tests.counts === 'known' ? tests.failing : state.failing;
  const base: LoopState = {
    ...state,
    measured: measured.measurement,
    failing,
    ...(measured.treeHash === undefined ? {} : { actionHash: measured.treeHash }),
  };
  const stillFailing = tests.counts === 'known' && tests.failed > 0;
  const inInnerLoop = state.innerAttempts > 0 && state.innerAttempts < config.caps.innerLoopMax;
  const implementable = config.mode === 'spec-first' || state.route.implement;
  return {
    ...base,
    stage:
      stillFailing && inInnerLoop && implementable && state.contested.length === 0 ? 'implement' : 'weed',
  };
}

function union(a: readonly string[], b: readonly string[]): string[] {
  return [...new Set([...a, ...b])];
}
