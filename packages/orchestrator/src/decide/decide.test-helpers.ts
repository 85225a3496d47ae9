import { DEFAULT_POLICY, type Observation } from '@allium-loop/evaluator';
import { decide } from './decide.js';
import type { LoopAction, LoopEvent, LoopObservation } from './loop-action.js';
import { DEFAULT_CAPS, initialLoopState, type LoopConfig, type LoopState } from './loop-state.js';

/** A loop config for tests: spec-first from elicit, default caps, non-interactive. */
export function testConfig(
  overrides: Omit<Partial<LoopConfig>, 'caps'> & { caps?: Partial<LoopConfig['caps']> } = {},
): LoopConfig {
  return {
    entry: 'elicit',
    mode: 'spec-first',
    policy: DEFAULT_POLICY,
    interactive: false,
    ...overrides,
    caps: { ...DEFAULT_CAPS, ...overrides.caps },
  };
}

/** A measurement with known counts. */
export function measured(
  failing: readonly string[],
  passed = 3,
  extra: Partial<Omit<Observation, 'weed' | 'tests'>> = {},
): LoopObservation {
  return {
    kind: 'measured',
    measurement: {
      tests: {
        counts: 'known',
        passed,
        failed: failing.length,
        skipped: 0,
        failing,
        exitCode: failing.length > 0 ? 1 : 0,
      },
      structuralErrors: 0,
      openQuestions: { blocking: 0, parked: 0 },
      ...extra,
    },
  };
}

/** The witness passing at a convergence gate. */
export const WITNESS_PASS: LoopObservation = {
  kind: 'witnessed',
  verdict: 'PASS',
  summary: 'witness: PASS · checks 4/4',
  violations: [],
  failing: [],
  restored: [],
};

/** Describes an action in a short string, for readable traces. */
export function describeAction(action: LoopAction): string {
  switch (action.kind) {
    case 'phase':
      return action.phase;
    case 'terminal':
      return `terminal:${action.state}`;
    default:
      return action.kind;
  }
}

/**
 * Drives `decide` against a scripted world until a terminal action (or 200 steps), returning the trace of
 * actions and the final state. The responder answers each action with an observation.
 */
export function simulate(
  config: LoopConfig,
  respond: (action: LoopAction, state: LoopState, step: number) => LoopObservation,
  options: {
    readonly elapsedMs?: (step: number) => number;
    /** The run's tokens so far, as the driver meters them. */
    readonly tokens?: (step: number, state: LoopState) => number;
    readonly state?: LoopState;
    /** Answers the convergence gate; by default the witness passes. */
    readonly witness?: (state: LoopState, step: number) => LoopObservation;
  } = {},
): { trace: string[]; state: LoopState; actions: LoopAction[]; events: LoopEvent[] } {
  let state = options.state ?? initialLoopState();
  let observation: LoopObservation = { kind: 'start' };
  const trace: string[] = [];
  const actions: LoopAction[] = [];
  const events: LoopEvent[] = [];
  for (let step = 0; step < 200; step += 1) {
    const tokens = options.tokens?.(step, state);
    const decision = decide(state, observation, config, {
      elapsedMs: options.elapsedMs?.(step) ?? 0,
      ...(tokens === undefined ? {} : { tokens }),
    });
    state = decision.state;
    events.push(...decision.events);
    actions.push(decision.action);
    trace.push(describeAction(decision.action));
    if (decision.action.kind === 'terminal') break;
    observation =
      decision.action.kind === 'witness'
        ? (options.witness?.(state, step) ?? WITNESS_PASS)
        : respond(decision.action, state, step);
  }
  return { trace, state, actions, events };
}
