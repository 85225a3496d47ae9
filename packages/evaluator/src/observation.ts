/**
 * What the engine measured at the end of a tick's verify phase. Every term is the engine's own measurement —
 * never an agent's claim.
 */
export interface Observation {
  /** Test counts from the engine's own run; `counts: 'unknown'` when the runner's output could not be read. */
  readonly tests: TestTerm;
  /** The weed worker's verdict, or `not_run` when weed did not run this tick. */
  readonly weed:
    | { readonly status: 'clean' }
    | { readonly status: 'dirty'; readonly divergences: number }
    | { readonly status: 'not_run' };
  /** Error-severity structural diagnostics in the spec (parser plus the reference CLI when present). */
  readonly structuralErrors: number;
  /** Open questions counted from the spec by the parser, split by classification. */
  readonly openQuestions: { readonly blocking: number; readonly parked: number };
  /** Code-first only: how many new findings the last distill pass surfaced; `undefined` in spec-first runs. */
  readonly distillNew?: number;
}

/** The test term of an observation. */
export type TestTerm =
  | {
      readonly counts: 'known';
      readonly passed: number;
      readonly failed: number;
      readonly skipped: number;
      /** Names of failing tests, when the runner reports them. */
      readonly failing: readonly string[];
    }
  | { readonly counts: 'unknown'; readonly exitCode: number | null };

/** Switches that tighten or relax the invariant. */
export interface InvariantPolicy {
  /** Parked open questions also block convergence (`--strict-questions`). */
  readonly strictQuestions: boolean;
  /** Whether weed must have run and be clean (off for `verify --no-weed`). */
  readonly requireWeed: boolean;
  /** Code-first runs also need a distill pass that found nothing new. */
  readonly codeFirst: boolean;
}
