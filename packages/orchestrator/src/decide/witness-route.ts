import type { LoopObservation } from './loop-action.js';
import type { LoopState, Route, WitnessViolationRoute } from './loop-state.js';

type Witnessed = Extract<LoopObservation, { kind: 'witnessed' }>;

/**
 * The next tick's route from the witness's violations (upstream driving-the-loop §11/§12): each violation goes
 * to the phase its `routing` names — `revert + propagate` and `propagate` re-propagate (the driver has already
 * restored tampered tests), `implement` fixes the code, `tend` / `distill` gather again; `tend or implement, per
 * divergence` follows the divergences' own classification. `escalate` is not a route: see {@link applyWitness}.
 */
export function routeFromWitness(violations: readonly WitnessViolationRoute[], state: LoopState): Route {
  const routings = violations.map((v) => v.routing);
  const perDivergence = routings.some((r) => r.startsWith('tend or implement'));
  const specSide = state.divergences.some(
    (d) => d.classification === 'spec-bug' || d.classification === 'aspirational',
  );
  const codeBugs = state.divergences.some((d) => d.classification === 'code-bug');
  const tend = routings.some((r) => r === 'tend') || (perDivergence && specSide);
  const distill = routings.some((r) => r === 'distill');
  return {
    ...(tend ? { gather: 'tend' as const } : distill ? { gather: 'distill' as const } : {}),
    propagate: tend || routings.some((r) => r.includes('propagate')),
    implement: routings.some((r) => r === 'implement') || (perDivergence && codeBugs),
    vacuous: [],
    reasons: violations.map((v) => `witness: ${v.violation} → ${v.routing}`),
  };
}

/**
 * Folds the witness's verdict into the loop state: `PASS` converges; `INCONCLUSIVE` never does (the run fails
 * loudly, upstream §9/§11); `FAIL` routes each violation and the loop goes on under its caps — a violation routed
 * to `escalate` (a blocking question) stops the run `awaiting_input` instead. A decomposed run goes back to its
 * slices, where the driver has re-opened the integration pass with the same route.
 */
export function applyWitness(state: LoopState, witnessed: Witnessed): LoopState {
  const recorded: LoopState = {
    ...state,
    witness: { tick: state.tick, verdict: witnessed.verdict, summary: witnessed.summary },
  };
  if (witnessed.verdict === 'PASS') {
    const reason =
      state.slices !== undefined && state.slices > 1
        ? 'every slice and the integration pass converged, and the witness passed'
        : 'the convergence invariant holds, and the witness passed';
    return { ...recorded, terminal: { state: 'converged', reason } };
  }
  if (witnessed.verdict === 'INCONCLUSIVE')
    return {
      ...recorded,
      terminal: {
        state: 'failed',
        reason: `the witness was INCONCLUSIVE (${witnessed.summary}): convergence is not declared without evidence`,
      },
    };
  const escalate = witnessed.violations.filter((v) => v.routing === 'escalate');
  if (escalate.length > 0)
    return {
      ...recorded,
      terminal: {
        state: 'awaiting_input',
        reason: `the witness found: ${escalate.map((v) => v.violation).join('; ')}`,
      },
    };
  if (state.slices !== undefined && state.slices > 1) return { ...recorded, stage: 'slices' };
  return reopenAfterWitness(recorded, witnessed);
}

/**
 * A loop whose witness failed, set to start its next tick on the witness's route (also used by the driver to
 * re-open a decomposed run's integration pass, whose own state had converged). Pure.
 */
export function reopenAfterWitness(state: LoopState, witnessed: Witnessed): LoopState {
  const { terminal: _terminal, ...open } = state;
  return {
    ...open,
    stage: 'tick_start',
    route: routeFromWitness(witnessed.violations, state),
    failing: witnessed.failing,
  };
}
