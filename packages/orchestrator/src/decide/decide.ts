import {
  detectStall,
  evaluateInvariant,
  fingerprint,
  type Observation,
  type TickSummary,
} from '@allium-loop/evaluator';
import type { LoopAction, LoopEvent, LoopMeter, LoopObservation, PhaseFocus } from './loop-action.js';
import type { Divergence, LoopConfig, LoopPhase, LoopState, Route, Stage } from './loop-state.js';
import { applyObservation } from './apply-observation.js';

/** The outcome of one decision: the state to persist, the action to carry out, and events to journal. */
export interface Decision {
  readonly state: LoopState;
  readonly action: LoopAction;
  readonly events: readonly LoopEvent[];
}

/**
 * The tick, as a pure function: folds what the driver observed into the loop state and picks the next action.
 * It touches no file, process or clock; the driver writes the returned state to the ledger before acting, so a
 * fresh process can call `decide(state, { kind: 'start' }, …)` and get the same next action.
 */
export function decide(
  state: LoopState,
  observation: LoopObservation,
  config: LoopConfig,
  meter: LoopMeter,
): Decision {
  const events: LoopEvent[] = [];
  const metered: LoopState = {
    ...state,
    elapsedMs: Math.max(state.elapsedMs, meter.elapsedMs),
    ...(meter.tokens === undefined ? {} : { tokensUsed: Math.max(state.tokensUsed ?? 0, meter.tokens) }),
  };
  const applied = applyObservation(metered, observation, config, events);
  return step(applied, config, events);
}

function step(initial: LoopState, config: LoopConfig, events: LoopEvent[]): Decision {
  let state = initial;
  // Each stage either yields an action or moves to a later stage; a tick has fewer than 12 stages.
  for (let guard = 0; guard < 32; guard += 1) {
    if (state.terminal !== undefined) {
      // The stage is kept, so a resumed run (after cancel, time-out or an answer) continues where it stopped.
      return { state, action: { kind: 'terminal', ...state.terminal }, events };
    }
    const outcome = STAGES[state.stage](state, config, events);
    if ('action' in outcome) return { state: outcome.state, action: outcome.action, events };
    state = outcome.state;
  }
  return stop(state, 'failed', 'internal error: the loop did not settle on an action', events);
}

type StageOutcome =
  { readonly state: LoopState; readonly action: LoopAction } | { readonly state: LoopState };
type StageHandler = (state: LoopState, config: LoopConfig, events: LoopEvent[]) => StageOutcome;

const STAGES: Readonly<Record<Stage, StageHandler>> = {
  tick_start: startTick,
  gather,
  plan,
  slices: (state) => ({ state, action: { kind: 'run_slices' } }),
  propagate,
  red_check: redCheck,
  implement,
  measure,
  weed: (state, config, events) =>
    agentAction(state, config, events, 'weed', {}, 'verify: spec and code alignment after the measure'),
  evaluate,
  escalate,
  witness: (state) => ({
    state: logPhase(
      state,
      'witness',
      'the convergence invariant holds; the witness re-derives it from ground truth',
    ),
    action: { kind: 'witness' },
  }),
  done: (state) => ({
    state: { ...state, terminal: state.terminal ?? { state: 'failed', reason: 'run already ended' } },
  }),
};

function startTick(state: LoopState, config: LoopConfig, events: LoopEvent[]): StageOutcome {
  if (state.tick >= config.caps.maxTicks) {
    events.push({
      kind: 'cap_reached',
      cap: 'maxTicks',
      detail: `${String(config.caps.maxTicks)} ticks used`,
      limit: config.caps.maxTicks,
      value: state.tick,
    });
    return {
      state: {
        ...state,
        terminal: { state: 'max_ticks', reason: `stopped at the tick cap (${String(config.caps.maxTicks)})` },
      },
    };
  }
  const tick = state.tick + 1;
  events.push({ kind: 'tick_started', tick, reasons: state.route.reasons });
  const { weed: _weed, measured: _measured, distillNew: _distill, actionHash: _hash, ...kept } = state;
  return {
    state: {
      ...kept,
      tick,
      stage: 'gather',
      phaseFailures: {},
      innerAttempts: 0,
      specChanged: tick === 1 && config.startWithPropagate === true,
      newTests: [],
      vacuous: [],
      fixTargets: [],
      contested: [],
    },
  };
}

function gatherPhase(state: LoopState, config: LoopConfig): 'elicit' | 'distill' | 'tend' | undefined {
  if (state.answered.length > 0) return 'tend';
  if (state.tick === 1 && state.route.gather === undefined)
    return config.entry === 'weed' ? undefined : config.entry;
  if (state.route.gather !== undefined) return state.route.gather;
  return config.mode === 'code-first' ? 'distill' : undefined;
}

function gather(state: LoopState, config: LoopConfig, events: LoopEvent[]): StageOutcome {
  const phase = gatherPhase(state, config);
  if (phase === undefined) return { state: { ...state, stage: 'plan' } };
  const focus: PhaseFocus = {
    reasons: state.route.reasons,
    ...(state.answered.length > 0 ? { answered: state.answered } : {}),
    ...(phase === 'tend' ? { divergences: state.divergences.filter(needsTend) } : {}),
  };
  return agentAction(state, config, events, phase, focus, gatherReason(state, config, phase));
}

function gatherReason(state: LoopState, config: LoopConfig, phase: 'elicit' | 'distill' | 'tend'): string {
  if (state.answered.length > 0) return `${String(state.answered.length)} answer(s) to write into the spec`;
  if (state.route.gather === undefined && state.tick === 1) return `entry: ${config.entry}`;
  if (state.route.reasons.length > 0) return state.route.reasons.join('; ');
  return phase === 'distill' ? 'code-first: a fresh distill pass must find nothing new' : `route: ${phase}`;
}

function plan(state: LoopState, config: LoopConfig): StageOutcome {
  const planNow = config.decompose === true && state.slices === undefined && state.specChanged;
  if (!planNow) return { state: { ...state, stage: 'propagate' } };
  return { state, action: { kind: 'plan' } };
}

function propagate(state: LoopState, config: LoopConfig, events: LoopEvent[]): StageOutcome {
  const needed = state.specChanged || (state.tick > 1 && state.route.propagate);
  if (!needed) return { state: { ...state, stage: 'implement' } };
  const reason = state.specChanged
    ? 'the spec changed'
    : state.route.reasons.length > 0
      ? state.route.reasons.join('; ')
      : 'route: propagate';
  return agentAction(
    state,
    config,
    events,
    'propagate',
    { reasons: state.route.reasons, vacuous: state.route.vacuous ?? [] },
    reason,
  );
}

function redCheck(state: LoopState): StageOutcome {
  if (state.newTests.length === 0) return { state: { ...state, stage: 'implement' } };
  return { state, action: { kind: 'red_check', tests: state.newTests } };
}

function implement(state: LoopState, config: LoopConfig, events: LoopEvent[]): StageOutcome {
  const targets = state.failing.filter((name) => !state.vacuous.includes(name));
  const codeBugs =
    state.innerAttempts === 0 ? state.divergences.filter((d) => d.classification === 'code-bug') : [];
  const testsToFix =
    config.mode === 'spec-first' || state.innerAttempts > 0 || state.route.implement ? targets : [];
  if (testsToFix.length === 0 && codeBugs.length === 0) return { state: { ...state, stage: 'measure' } };
  const next: LoopState = state.innerAttempts === 0 ? { ...state, fixTargets: testsToFix } : state;
  const reason = [
    ...(testsToFix.length > 0 ? [`${String(testsToFix.length)} failing test(s)`] : []),
    ...(codeBugs.length > 0 ? [`weed: ${String(codeBugs.length)} code bug(s)`] : []),
  ].join('; ');
  return agentAction(
    next,
    config,
    events,
    'implement',
    { failing: testsToFix, divergences: codeBugs },
    reason,
  );
}

function measure(state: LoopState, config: LoopConfig, events: LoopEvent[]): StageOutcome {
  const clock = wallClockExceeded(state, config, events);
  if (clock !== undefined) return clock;
  return { state, action: { kind: 'measure' } };
}

function evaluate(state: LoopState, config: LoopConfig, events: LoopEvent[]): StageOutcome {
  if (state.measured === undefined) return { state: { ...state, stage: 'measure' } };
  const observation: Observation = {
    ...state.measured,
    weed: state.weed ?? { status: 'not_run' },
    ...(state.distillNew === undefined ? {} : { distillNew: state.distillNew }),
  };
  const verdict = evaluateInvariant(observation, config.policy);
  const print = fingerprint(observation);
  const tickTokens =
    state.tokensUsed === undefined
      ? undefined
      : Math.max(0, state.tokensUsed - state.history.reduce((sum, tick) => sum + (tick.tokens ?? 0), 0));
  const summary: TickSummary = {
    fingerprint: print,
    ...(tickTokens === undefined ? {} : { tokens: tickTokens }),
    ...(state.actionHash === undefined ? {} : { actionHash: state.actionHash }),
    ...(state.fixTargets.length > 0
      ? {
          fixAttempt: {
            targets: state.fixTargets,
            stillFailing: state.failing.filter((t) => state.fixTargets.includes(t)),
          },
        }
      : {}),
  };
  const tickVerdict = {
    tick: state.tick,
    observation,
    fingerprint: print,
    converged: verdict.converged,
    unmet: verdict.unmet,
    ...(state.reconciliation === undefined ? {} : { uncovered: state.reconciliation.uncovered.length }),
  };
  events.push({ kind: 'tick_recorded', verdict: tickVerdict });
  const recorded: LoopState = {
    ...state,
    history: [...state.history, summary],
    verdicts: [...state.verdicts, tickVerdict],
  };
  // The run's own reading says converged; convergence is declared on the witness's verdict, not on it.
  if (verdict.converged) return { state: { ...recorded, stage: 'witness' } };
  const stall = detectStall(recorded.history, {
    noProgressTicks: config.caps.noProgressTicks,
    oscillation: true,
    repeatedAction: 3,
    failedFixAttempts: config.caps.maxFixAttempts,
    tokenClimbTicks: TOKEN_CLIMB_TICKS,
  });
  const reason = stall.reasons[0];
  if (reason !== undefined) {
    events.push({
      kind: 'cap_reached',
      cap: reason.kind,
      detail: reason.message,
      limit:
        reason.kind === 'failed_fix_attempts'
          ? config.caps.maxFixAttempts
          : reason.kind === 'token_climb'
            ? TOKEN_CLIMB_TICKS
            : config.caps.noProgressTicks,
      value: recorded.tick,
    });
    return { state: { ...recorded, terminal: { state: reason.terminal, reason: reason.message } } };
  }
  return { state: { ...recorded, stage: 'tick_start', route: routeAfter(recorded, observation, config) } };
}

/** Flat ticks whose tokens climb, one after the other, before the run stops (`token_climb`). */
const TOKEN_CLIMB_TICKS = 2;

function escalate(state: LoopState, config: LoopConfig): StageOutcome {
  if (config.interactive) return { state, action: { kind: 'ask', questions: state.blocking } };
  return {
    state: {
      ...state,
      terminal: {
        state: 'awaiting_input',
        reason: `blocking question(s) need an answer: ${state.blocking.join(', ')}`,
      },
    },
  };
}

function needsTend(divergence: Divergence): boolean {
  return divergence.classification === 'spec-bug' || divergence.classification === 'aspirational';
}

/** Routes the fix for the next tick from what this tick measured (ARCHITECTURE.md §3). */
export function routeAfter(state: LoopState, observation: Observation, config: LoopConfig): Route {
  const reasons: string[] = [];
  let tend = false;
  if (observation.structuralErrors > 0) {
    tend = true;
    reasons.push(`${String(observation.structuralErrors)} structural error(s) in the spec`);
  }
  const specDivergences = state.divergences.filter(needsTend);
  if (specDivergences.length > 0) {
    tend = true;
    reasons.push(`weed: ${String(specDivergences.length)} spec-side divergence(s)`);
  }
  if (state.contested.length > 0) {
    tend = true;
    reasons.push(`implement contested ${String(state.contested.length)} test(s)`);
  }
  if (state.vacuous.length > 0)
    reasons.push(`${String(state.vacuous.length)} new test(s) already green (vacuous or already covered)`);
  const codeBugs = state.divergences.filter((d) => d.classification === 'code-bug').length;
  if (codeBugs > 0) reasons.push(`weed: ${String(codeBugs)} code bug(s)`);
  const failing = observation.tests.counts === 'known' ? observation.tests.failed : 0;
  if (failing > 0) reasons.push(`${String(failing)} failing test(s)`);
  const distillAgain = config.mode === 'code-first' && !tend;
  return {
    ...(tend ? { gather: 'tend' as const } : distillAgain ? { gather: 'distill' as const } : {}),
    propagate: tend || state.contested.length > 0 || state.vacuous.length > 0,
    implement:
      codeBugs > 0 ||
      (failing > 0 &&
        config.mode === 'code-first' &&
        state.divergences.some((d) => d.classification === 'code-bug')),
    vacuous: state.vacuous,
    reasons,
  };
}

function agentAction(
  state: LoopState,
  config: LoopConfig,
  events: LoopEvent[],
  phase: LoopPhase,
  focus: PhaseFocus,
  reason: string,
): StageOutcome {
  const clock = wallClockExceeded(state, config, events);
  if (clock !== undefined) return clock;
  const budget = budgetExceeded(state, config, events);
  if (budget !== undefined) return budget;
  return { state: logPhase(state, phase, reason), action: { kind: 'phase', phase, focus } };
}

/** Records a phase the loop chose and why; a choice repeated on resume (same tick, phase and reason) once. */
function logPhase(state: LoopState, name: string, reason: string): LoopState {
  const log = state.phaseLog ?? [];
  const last = log.at(-1);
  if (last?.tick === state.tick && last.name === name && last.reason === reason) return state;
  return { ...state, phaseLog: [...log, { tick: state.tick, name, reason }] };
}

function wallClockExceeded(
  state: LoopState,
  config: LoopConfig,
  events: LoopEvent[],
): StageOutcome | undefined {
  const limit = config.caps.wallClockMs;
  if (limit === undefined || state.elapsedMs < limit) return undefined;
  events.push({
    kind: 'cap_reached',
    cap: 'wallClock',
    detail: `${String(state.elapsedMs)} ms ≥ ${String(limit)} ms`,
    limit,
    value: state.elapsedMs,
  });
  return {
    state: {
      ...state,
      terminal: { state: 'timed_out', reason: `wall-clock cap of ${String(limit)} ms reached` },
    },
  };
}

const MICRO = 1_000_000;

/** Pre-flight: a call may start only when its worst case fits the remaining budget (exact at the boundary). */
export function callFitsBudget(
  spentUsd: number,
  worstCaseUsd: number | undefined,
  budgetUsd: number,
): boolean {
  const spent = Math.round(spentUsd * MICRO);
  const budget = Math.round(budgetUsd * MICRO);
  if (worstCaseUsd === undefined) return spent < budget;
  return spent + Math.round(worstCaseUsd * MICRO) <= budget;
}

/**
 * Why the budget stops the next call (spent, worst case, budget), or `undefined` when its worst case fits. The worst
 * case is the per-call ceiling (`maxCallUsd`, `--max-call-usd`), else the reservation from the model's price table
 * (`reserveUsd`), else nothing (only a budget already spent stops).
 */
export function budgetStop(
  caps: {
    readonly budgetUsd?: number | undefined;
    readonly maxCallUsd?: number | undefined;
    readonly reserveUsd?: number | undefined;
  },
  spentUsd: number,
): string | undefined {
  const budget = caps.budgetUsd;
  const worst = caps.maxCallUsd ?? caps.reserveUsd;
  if (budget === undefined || callFitsBudget(spentUsd, worst, budget)) return undefined;
  const why =
    caps.maxCallUsd === undefined && worst !== undefined ? " (reserved from the model's price table)" : '';
  return `spent $${spentUsd.toFixed(2)}; the next call may cost up to $${(worst ?? 0).toFixed(2)}${why}; budget $${budget.toFixed(2)}`;
}

/** A duration for people: `90 s`, `12 min`. */
export function seconds(ms: number): string {
  return ms >= 120_000 ? `${String(Math.round(ms / 60_000))} min` : `${String(Math.round(ms / 1000))} s`;
}

/** A cap that ends a run, as the driver records it. */
export interface CapStop {
  readonly state: 'cancelled' | 'timed_out' | 'budget_exhausted' | 'max_ticks';
  readonly reason: 'cancelled' | 'wall_clock' | 'budget' | 'max_ticks';
  readonly detail: string;
}

/**
 * The cap that stops a run before its next tick, first match wins: Ctrl-C, the wall clock, the budget pre-flight
 * ({@link budgetStop}), the tick cap. Pure; the loop programs of the modes are stopped by it between ticks.
 */
export function capStop(
  caps: {
    readonly maxTicks: number;
    readonly wallClockMs?: number | undefined;
    readonly budgetUsd?: number | undefined;
    readonly maxCallUsd?: number | undefined;
    readonly reserveUsd?: number | undefined;
  },
  meter: {
    readonly cancelled: boolean;
    readonly elapsedMs: number;
    readonly spentUsd: number;
    readonly tick: number;
  },
): CapStop | undefined {
  if (meter.cancelled) return { state: 'cancelled', reason: 'cancelled', detail: 'cancelled by the user' };
  if (caps.wallClockMs !== undefined && meter.elapsedMs >= caps.wallClockMs)
    return {
      state: 'timed_out',
      reason: 'wall_clock',
      detail: `wall-clock cap of ${seconds(caps.wallClockMs)} reached`,
    };
  const budget = budgetStop(caps, meter.spentUsd);
  if (budget !== undefined) return { state: 'budget_exhausted', reason: 'budget', detail: budget };
  if (meter.tick >= caps.maxTicks)
    return {
      state: 'max_ticks',
      reason: 'max_ticks',
      detail: `tick cap of ${String(caps.maxTicks)} reached`,
    };
  return undefined;
}

function budgetExceeded(state: LoopState, config: LoopConfig, events: LoopEvent[]): StageOutcome | undefined {
  const detail = budgetStop(config.caps, state.spentUsd);
  if (detail === undefined || config.caps.budgetUsd === undefined) return undefined;
  events.push({
    kind: 'cap_reached',
    cap: 'budget',
    detail,
    limit: config.caps.budgetUsd,
    value: state.spentUsd,
  });
  return { state: { ...state, terminal: { state: 'budget_exhausted', reason: detail } } };
}

function stop(state: LoopState, terminal: 'failed', reason: string, events: readonly LoopEvent[]): Decision {
  return {
    state: { ...state, stage: 'done', terminal: { state: terminal, reason } },
    action: { kind: 'terminal', state: terminal, reason },
    events,
  };
}
