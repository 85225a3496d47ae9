import type { JournalEvent, ProtectedTest, Question } from '@allium-loop/ledger';
import type { LoopObservation, PhaseFocus } from '../decide/loop-action.js';
import type { LoopPhase } from '../decide/loop-state.js';

/** One agent phase the driver asks its ports to run. */
export interface PhaseRequest {
  readonly phase: LoopPhase;
  readonly focus: PhaseFocus;
  readonly tick: number;
  /** The idempotency key of the intent recorded for this call. */
  readonly key: string;
  /** Budget left for this call, when the run has a budget. */
  readonly budgetUsd?: number;
  readonly signal: AbortSignal;
}

/** What an agent phase produced, as the worker verified it. */
export interface PhaseReport {
  readonly observation: Extract<LoopObservation, { kind: 'phase_done' }>;
  /** Journal events the worker produced (violations, claim notes), without `at`/`tick`. */
  readonly events: readonly Omit<JournalEvent, 'at' | 'tick'>[];
  /** Questions the phase raised, to record in the ledger. */
  readonly questions: readonly Omit<Question, 'raisedAtTick' | 'phase'>[];
  readonly tokens?: {
    readonly input?: number;
    readonly output?: number;
    readonly cacheRead?: number;
    readonly cacheWrite?: number;
  };
  /** Whether the call's cost is known (an unknown cost is never counted as zero). */
  readonly costKnown: boolean;
  readonly durationMs: number;
  /** Generated tests the engine protects after this phase (propagate adds; others pass them through). */
  readonly protectedTests?: readonly ProtectedTest[];
  /** Set when retrying cannot help (the agent's credentials were refused): the run stops `failed` with it. */
  readonly stopReason?: string;
  /** Tend only: answered questions it wrote into the spec. */
  readonly appliedQuestions?: readonly string[];
  /** Set when the agent reported a rate limit: the driver waits it out and runs the phase again (same tick). */
  readonly rateLimited?: { readonly resetAt?: number };
  /** Propagate only: how the new tests behaved when the worker ran them alone (the red-check's evidence). */
  readonly redCheck?: { readonly passing: readonly string[]; readonly failing: readonly string[] };
}

/** The engine's own measurement at the end of a tick. */
export interface MeasureReport {
  readonly observation: Extract<LoopObservation, { kind: 'measured' }>;
  /** Structural error messages, for the ledger verdict. */
  readonly structuralMessages: readonly string[];
  readonly git: { readonly head: string | null; readonly tree: string | null };
}

/**
 * The effects the loop driver needs. `createProjectPorts` implements them over the workers, the verification
 * harness and git; tests pass scripted fakes.
 */
export interface LoopPorts {
  runPhase(request: PhaseRequest): Promise<PhaseReport>;
  /** Runs the named new tests alone and reports which pass and which fail. */
  redCheck(
    tests: readonly string[],
    signal: AbortSignal,
  ): Promise<{ readonly passing: readonly string[]; readonly failing: readonly string[] }>;
  measure(signal: AbortSignal): Promise<MeasureReport>;
  /**
   * Reconciles an agent call whose intent has no outcome (the supervisor died during it): returns its report when
   * the result file it left is valid, so the phase is not run twice; `undefined` to run it again.
   */
  reconcile(request: PhaseRequest): Promise<PhaseReport | undefined>;
  /** Asks blocking questions on a terminal; `undefined` when the user declined. */
  ask?(
    questions: readonly Question[],
  ): Promise<readonly { readonly id: string; readonly answer: string }[] | undefined>;
  /**
   * Plans slices from what the first gather changed in the spec, in run order (producers first), followed by the
   * decomposer's integration pass (id `integration`, with its chains) whenever there is more than one slice.
   */
  plan?(): Promise<readonly PlannedSlice[]>;
  /**
   * Records the working tree as a git object under `refs/allium-loop/<slug>/<name>` (`tick-3`, or
   * `<slice>/tick-2`); `undefined` outside git. `knownTree` is a tree hash just measured, reused as is.
   */
  checkpoint?(
    name: string,
    knownTree?: string,
  ): Promise<{ readonly ref: string; readonly object: string } | undefined>;
}

/** One slice of a decomposed goal, as the driver runs it. */
export interface PlannedSlice {
  readonly id: string;
  readonly constructs: readonly string[];
  readonly dependsOn: readonly string[];
  /**
   * The integration pass only: the decomposer's cross-slice data-flow chains (each a path of construct ids, from
   * the producing slice to the consuming one) that its tests must cover end to end.
   */
  readonly chains?: readonly (readonly string[])[];
}

/** A clock, so the driver never reads the system time directly. */
export interface Clock {
  now(): number;
}
