/**
 * What the engine measured at the end of a tick's verify phase. Every term is the engine's own measurement —
 * never an agent's claim.
 */
export interface Observation {
  /** Test counts from the engine's own run; `counts: 'unknown'` when the runner's output could not be read. */
  readonly tests: TestTerm;
  /** The weed worker's verdict, or `not_run` when weed did not run (or its result could not be found). */
  readonly weed: WeedTerm;
  /** Error-severity structural diagnostics in the spec (parser plus the reference CLI when present). */
  readonly structuralErrors: number;
  /** Open questions counted from the spec by the parser, split by classification. */
  readonly openQuestions: { readonly blocking: number; readonly parked: number };
  /** Code-first only: how many new findings the last distill pass surfaced; `undefined` when none ran. */
  readonly distillNew?: number;
}

/** The weed term of an observation. */
export type WeedTerm =
  | { readonly status: 'clean' }
  | { readonly status: 'dirty'; readonly divergences: number }
  | { readonly status: 'not_run' };

/**
 * The test term of an observation. Counts are either read from the runner (`known`) or not (`unknown`); an
 * unknown count is never replaced by a guess.
 */
export type TestTerm =
  | {
      readonly counts: 'known';
      readonly passed: number;
      readonly failed: number;
      readonly skipped: number;
      /** Names of failing tests, when the runner reports them (may be shorter than `failed`). */
      readonly failing: readonly string[];
      /** The test command's exit code; `null` when it was killed (timeout). A non-zero code blocks convergence. */
      readonly exitCode: number | null;
    }
  | { readonly counts: 'unknown'; readonly exitCode: number | null; readonly timedOut: boolean };

/** Switches that tighten or relax the invariant. */
export interface InvariantPolicy {
  /** Parked open questions also block convergence (`--strict-questions`). */
  readonly strictQuestions: boolean;
  /** Whether weed must have run and be clean (off for `verify --no-weed`). */
  readonly requireWeed: boolean;
  /** Code-first runs also need a distill pass that found nothing new. */
  readonly codeFirst: boolean;
}

/** The default policy: parked questions allowed, weed required, spec-first. */
export const DEFAULT_POLICY: InvariantPolicy = {
  strictQuestions: false,
  requireWeed: true,
  codeFirst: false,
};
