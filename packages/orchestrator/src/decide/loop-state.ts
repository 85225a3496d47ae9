import type { PortFailure } from '@allium-loop/ledger';
import type { InvariantPolicy, Observation, StallCaps, TickSummary, UnmetTerm } from '@allium-loop/evaluator';
import type { TerminalState } from '../terminal-state.js';

/** An agent phase the loop can run. */
export type LoopPhase = 'elicit' | 'distill' | 'tend' | 'propagate' | 'implement' | 'weed';

/** Whether the spec leads the code or is recovered from it. */
export type LoopMode = 'spec-first' | 'code-first';

/** Supervisor-owned limits. Counters live in the ledger, so they hold across resumes. */
export interface LoopCaps {
  /** Hard cap on ticks (default 6). */
  readonly maxTicks: number;
  /** Ticks with an unchanged fingerprint before `no_progress` (default 2). */
  readonly noProgressTicks: number;
  /** Failed fix attempts on the same failing tests before escalating (default 3). */
  readonly maxFixAttempts: number;
  /** Implement → test rounds inside one tick, the bounded TDD inner loop (default 3). */
  readonly innerLoopMax: number;
  /** How often a failed phase is retried within a tick (default 1). */
  readonly phaseRetries: number;
  /** Wall clock for the whole run, across resumes. */
  readonly wallClockMs?: number;
  /** Total USD budget for agent calls. */
  readonly budgetUsd?: number;
  /** The most one agent call may cost (passed to CLIs that accept a budget); the pre-flight check uses it. */
  readonly maxCallUsd?: number;
  /** The worst case the pre-flight reserves when `maxCallUsd` is not given (from the model's price table). */
  readonly reserveUsd?: number;
}

/** The defaults of ARCHITECTURE.md §5. */
export const DEFAULT_CAPS: LoopCaps = {
  maxTicks: 6,
  noProgressTicks: 2,
  maxFixAttempts: 3,
  innerLoopMax: 3,
  phaseRetries: 1,
};

/** Fixed facts of a run that `decide` reads but never changes. */
export interface LoopConfig {
  /** The first tick's gather phase; `weed` means "verify first" (no gather). */
  readonly entry: 'elicit' | 'distill' | 'tend' | 'weed';
  readonly mode: LoopMode;
  readonly caps: LoopCaps;
  readonly policy: InvariantPolicy;
  /** Whether blocking questions can be asked on a terminal; otherwise they stop the run (`awaiting_input`). */
  readonly interactive: boolean;
  /** Top-level runs: after the first gather changed the spec, plan slices and run them when there are several. */
  readonly decompose?: boolean;
  /** Slice loops: the spec was already changed by the parent's gather, so tick 1 starts by propagating. */
  readonly startWithPropagate?: boolean;
  /** Flat ticks in a row before the stall warning is shown (upstream `stall_warning_ticks`, default 1). */
  readonly stallWarningTicks?: number;
}

/** A weed divergence, as classified by the weed worker. */
export interface Divergence {
  readonly construct: string;
  readonly classification: 'spec-bug' | 'code-bug' | 'aspirational' | 'intentional-gap';
  readonly detail: string;
}

/** What the next tick should do, decided when the previous tick was evaluated. */
export interface Route {
  readonly gather?: 'tend' | 'distill';
  readonly propagate: boolean;
  readonly implement: boolean;
  /** New tests found already green last tick, for propagate to replace. */
  readonly vacuous?: readonly string[];
  /** Why, one phrase per reason, for the prompt and the journal. */
  readonly reasons: readonly string[];
}

/** Where the loop stands inside a tick. */
export type Stage =
  | 'tick_start'
  | 'gather'
  | 'plan'
  | 'slices'
  | 'propagate'
  | 'red_check'
  | 'implement'
  | 'measure'
  | 'weed'
  | 'evaluate'
  | 'escalate'
  /** The invariant holds: the engine's witness must pass before the loop may declare convergence. */
  | 'witness'
  | 'done';

/** The verdict of a finished tick, as recorded in the ledger. */
export interface TickVerdict {
  readonly tick: number;
  readonly observation: Observation;
  readonly fingerprint: string;
  readonly converged: boolean;
  readonly unmet: readonly UnmetTerm[];
  /** Obligations the last propagate left uncovered, as the engine counted them (absent: no propagate yet). */
  readonly uncovered?: number;
}

/**
 * Everything `decide` needs to pick the next action. It is plain JSON, persisted in the ledger after every
 * decision, so a fresh process continues exactly where the last one stopped.
 */
export interface LoopState {
  readonly tick: number;
  readonly stage: Stage;
  readonly route: Route;
  /** Finished ticks, oldest first, for stall detection. */
  readonly history: readonly TickSummary[];
  readonly verdicts: readonly TickVerdict[];
  /** Retries used per phase in the current tick. */
  readonly phaseFailures: Readonly<Partial<Record<LoopPhase, number>>>;
  /** Implement rounds in the current tick. */
  readonly innerAttempts: number;
  /** The gather phase changed the spec this tick, so tests must be propagated. */
  readonly specChanged: boolean;
  /** Tests propagate generated this tick. */
  readonly newTests: readonly string[];
  /** New tests that were already green at the red-check (spec-first): never carried into implement. */
  readonly vacuous: readonly string[];
  /** Failing tests known from the latest measurement or red-check. */
  readonly failing: readonly string[];
  /** Failing tests at the start of this tick's implement rounds (the fix attempt's targets). */
  readonly fixTargets: readonly string[];
  /** Latest test measurement of this tick, with structural errors and question counts. */
  readonly measured?: Omit<Observation, 'weed' | 'distillNew'>;
  readonly weed?: Observation['weed'];
  readonly divergences: readonly Divergence[];
  /** Tests the implementer contested this tick (routed to tend + re-propagate, never edited). */
  readonly contested: readonly string[];
  readonly distillNew?: number;
  /** Hash of the working tree after the tick's agent actions (for the repeated-action check). */
  readonly actionHash?: string;
  /** Questions waiting for an answer (ids). */
  readonly blocking: readonly string[];
  /** Answered questions to write into the spec by the next tend. */
  readonly answered: readonly string[];
  readonly spentUsd: number;
  readonly elapsedMs: number;
  /** Tokens the run's agent calls used so far (metered by the driver), when known. */
  readonly tokensUsed?: number;
  readonly agentCalls: number;
  readonly terminal?: {
    readonly state: TerminalState;
    readonly reason: string;
    readonly error?: PortFailure;
  };
  /** Intent key of the last agent call whose outcome this state has taken in (set by the driver, not by decide). */
  readonly appliedCall?: string;
  /** Set once the goal was planned: how many slices it split into. */
  readonly slices?: number;
  /**
   * Spec-first: every test name propagate generated during this loop, those a red-check saw fail before implement
   * ran, and those it saw already green (flagged as covered or vacuous) — the witness's red-before-green evidence.
   */
  readonly redBeforeGreen?: RedBeforeGreen;
  /** The parked questions the last gather phase reported (it lists every open question then in the spec). */
  readonly parkedReported?: readonly string[];
  /** Every phase and engine step the loop chose, with its tick and why: the routing half of the trace. */
  readonly phaseLog?: readonly PhaseChoice[];
  /** The last witness verdict at this loop's convergence gate. */
  readonly witness?: WitnessOutcome;
  /** The last propagate's reconciliation, as the engine computed it. */
  readonly reconciliation?: Reconciliation;
}

/** Red-check observations of the tests propagate generated. */
export interface RedBeforeGreen {
  readonly newTests: readonly string[];
  readonly seenRed: readonly string[];
  readonly seenGreen?: readonly string[];
}

/**
 * The engine's reconciliation of the spec's test obligations with the tests a propagate generated (upstream
 * `N obligations, M covered, K uncovered`), with the reason propagate gave for each uncovered one, if any.
 */
export interface Reconciliation {
  readonly line: string;
  readonly obligations: number;
  readonly covered: number;
  readonly uncovered: readonly { readonly id: string; readonly reason?: string }[];
}

/** A phase the loop chose to run, in which tick, and why (a trace entry's `phases[]`). */
export interface PhaseChoice {
  readonly tick: number;
  readonly name: string;
  readonly reason: string;
}

/** The witness's verdict at a convergence gate, as the loop keeps it. */
export interface WitnessOutcome {
  readonly tick: number;
  readonly verdict: 'PASS' | 'FAIL' | 'INCONCLUSIVE';
  readonly summary: string;
}

/** A violation the witness found, and the phase its `routing` names (upstream witness-result `violations[]`). */
export interface WitnessViolationRoute {
  readonly violation: string;
  readonly routing: string;
}

/** The state of a run that has not started. */
export function initialLoopState(): LoopState {
  return {
    tick: 0,
    stage: 'tick_start',
    route: { propagate: false, implement: false, reasons: [] },
    history: [],
    verdicts: [],
    phaseFailures: {},
    innerAttempts: 0,
    specChanged: false,
    newTests: [],
    vacuous: [],
    failing: [],
    fixTargets: [],
    divergences: [],
    contested: [],
    blocking: [],
    answered: [],
    spentUsd: 0,
    elapsedMs: 0,
    agentCalls: 0,
  };
}

/** Re-exported for callers that build caps for the evaluator. */
export type { StallCaps };
