import type { TestTerm, WeedTerm, WitnessResult } from '@allium-loop/evaluator';
import type { JournalEvent, ProtectedTest, Question } from '@allium-loop/ledger';
import type { ProjectMeasurement } from '@allium-loop/verify';
import type { LoopObservation, PhaseFocus } from '../decide/loop-action.js';
import type { LoopPhase, Reconciliation, RedBeforeGreen } from '../decide/loop-state.js';

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
  /** Runs the test command and says which of the named new tests pass; one that did not run counts as failing. */
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
  /**
   * The convergence gate: the engine's deterministic witness (no model) re-runs the tests, re-hashes the generated
   * tests, compares the claim with that ground truth and writes its record. It fixes nothing.
   */
  witness(request: WitnessRequest): Promise<WitnessReport>;
  /**
   * Restores generated tests from the engine's copies (the loop's answer to a witness that found them edited);
   * returns the paths restored. A copy whose own hash no longer matches is not used.
   */
  restoreTests(tests: readonly ProtectedTest[]): Promise<readonly string[]>;
  /** Replaces the run's trace file (`.allium-loop/<slug>.trace.jsonl`) with `text`, atomically. */
  writeTrace?(text: string): Promise<void>;
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
   * `<slice>/tick-2`); `undefined` outside git. `known` is a tree just measured (and the HEAD it was measured
   * against), reused as is instead of hashing the working tree again.
   */
  checkpoint?(
    name: string,
    known?: { readonly head: string | null; readonly tree: string },
  ): Promise<{ readonly ref: string; readonly object: string } | undefined>;
}

/** What the run itself recorded for the scope being witnessed: the claim the witness checks against ground truth. */
export interface WitnessClaim {
  readonly tick: number;
  readonly mode: 'spec-first' | 'code-first';
  /** The test result the run recorded at its last measure. */
  readonly recorded?: TestTerm;
  /** The weed verdict recorded for the witnessed tick (for a decomposed run, the integration pass's). */
  readonly weed?: WeedTerm;
  /** Code-first: new findings of the last distill pass. */
  readonly distillNew?: number;
  /** The parked questions the run last reported (each gather phase lists all of the spec's). */
  readonly parkedReported: readonly string[];
  /** Spec-first: test names propagate generated, and those a red-check saw fail (or already green) first. */
  readonly redBeforeGreen?: RedBeforeGreen;
  /**
   * Set once a propagate reconciled the spec's obligations: the uncovered ones it reported, with their reasons.
   * The witness recomputes the reconciliation itself over every generated test; absent, coverage is inconclusive.
   */
  readonly reconciliation?: { readonly uncovered: Reconciliation['uncovered'] };
}

/** The witness at one convergence gate: the run's, or a slice's. */
export interface WitnessRequest {
  /** The slice whose gate this is; absent for the run (or the assembled whole of a decomposed run). */
  readonly slice?: string;
  /** The slice's constructs (graph ids): its coverage counts only their obligations. */
  readonly constructs?: readonly string[];
  readonly claim: WitnessClaim;
  readonly signal: AbortSignal;
  /**
   * A measurement of this very tree already taken (a slice's own witness, when its merge left the tree exactly as
   * it was): the witness reads it instead of running the tests again; every other check runs as always.
   */
  readonly measured?: ProjectMeasurement;
}

/** The witness's verdict, the tests its re-run saw failing, and generated tests whose hash changed. */
export interface WitnessReport {
  /** The record, exactly as written to its `record_path` (upstream witness-result schema). */
  readonly result: WitnessResult;
  /** Failing test names on the witness's re-run (empty when the counts were unreadable). */
  readonly failing: readonly string[];
  /** Protected tests whose content no longer matches the hash propagate recorded. */
  readonly tampered: readonly ProtectedTest[];
  /** The measurement the witness read (absent from witnesses that keep none). */
  readonly measured?: ProjectMeasurement;
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
