import type { InvariantPolicy, Observation, TestTerm } from './observation.js';

/** Which term of the convergence invariant is not met. */
export type UnmetTermKind =
  | 'tests_failing'
  | 'tests_unknown'
  | 'tests_none'
  | 'tests_exit_code'
  | 'weed_dirty'
  | 'weed_not_run'
  | 'questions_blocking'
  | 'questions_parked'
  | 'structural_errors'
  | 'distill_new'
  | 'distill_not_run'
  /** Set by `verifyProject`, not by the evaluator: the harness changed since a run recorded it. */
  | 'harness_changed';

/** One failing term of the invariant, with a one-line explanation a person can act on. */
export interface UnmetTerm {
  readonly term: UnmetTermKind;
  /** One line, e.g. `tests: 2 failing (a > b, c)`. */
  readonly message: string;
  /** The count behind the term (failing tests, divergences, questions, errors), when there is one. */
  readonly count?: number;
  /** Names behind the term (failing test names), when known. */
  readonly names?: readonly string[];
}

/** The verdict of {@link evaluateInvariant}: converged exactly when nothing is unmet. */
export interface InvariantVerdict {
  readonly converged: boolean;
  readonly unmet: readonly UnmetTerm[];
}

const NAMES_SHOWN = 5;

/**
 * Evaluates the convergence invariant: tests pass ∧ weed clean ∧ no blocking open questions (parked ones too
 * under `strictQuestions`) ∧ no structural errors ∧ (code-first) the last distill pass found nothing new.
 *
 * Unknown test counts, a run in which no test ran, and a non-zero exit code with zero failures are all unmet:
 * the invariant never passes on a measurement it could not make. Pure and total; never throws.
 */
export function evaluateInvariant(observation: Observation, policy: InvariantPolicy): InvariantVerdict {
  const unmet = [
    ...testTerms(observation.tests),
    ...weedTerms(observation, policy),
    ...questionTerms(observation, policy),
    ...structureTerms(observation),
    ...distillTerms(observation, policy),
  ];
  return { converged: unmet.length === 0, unmet };
}

function testTerms(tests: TestTerm): UnmetTerm[] {
  if (tests.counts === 'unknown') {
    const how = tests.timedOut ? 'timed out' : `exit code ${String(tests.exitCode)}`;
    return [
      {
        term: 'tests_unknown',
        message: `tests: counts unknown (${how}); the runner's output could not be read`,
      },
    ];
  }
  if (tests.failed > 0) return [failingTerm(tests.failed, tests.failing)];
  if (tests.passed === 0) {
    return [{ term: 'tests_none', message: 'tests: no test passed (0 ran, or all were skipped)', count: 0 }];
  }
  if (tests.exitCode !== 0) {
    return [
      {
        term: 'tests_exit_code',
        message: `tests: 0 failing but the test command exited ${String(tests.exitCode)}`,
      },
    ];
  }
  return [];
}

function failingTerm(failed: number, failing: readonly string[]): UnmetTerm {
  const shown = failing.slice(0, NAMES_SHOWN).join(', ');
  const more = failing.length > NAMES_SHOWN ? `, … ${String(failing.length - NAMES_SHOWN)} more` : '';
  const names = failing.length > 0 ? ` (${shown}${more})` : '';
  return {
    term: 'tests_failing',
    message: `tests: ${String(failed)} failing${names}`,
    count: failed,
    names: failing,
  };
}

function weedTerms(observation: Observation, policy: InvariantPolicy): UnmetTerm[] {
  if (!policy.requireWeed) return [];
  const weed = observation.weed;
  if (weed.status === 'not_run') {
    return [
      {
        term: 'weed_not_run',
        message: 'weed: not run (no weed verdict for this state; use --no-weed to skip)',
      },
    ];
  }
  if (weed.status === 'dirty') {
    return [
      {
        term: 'weed_dirty',
        message: `weed: ${String(weed.divergences)} divergence(s) between spec and code`,
        count: weed.divergences,
      },
    ];
  }
  return [];
}

function questionTerms(observation: Observation, policy: InvariantPolicy): UnmetTerm[] {
  const { blocking, parked } = observation.openQuestions;
  const terms: UnmetTerm[] = [];
  if (blocking > 0) {
    terms.push({
      term: 'questions_blocking',
      message: `open questions: ${String(blocking)} blocking`,
      count: blocking,
    });
  }
  if (policy.strictQuestions && parked > 0) {
    terms.push({
      term: 'questions_parked',
      message: `open questions: ${String(parked)} parked (--strict-questions)`,
      count: parked,
    });
  }
  return terms;
}

function structureTerms(observation: Observation): UnmetTerm[] {
  const errors = observation.structuralErrors;
  if (errors <= 0) return [];
  return [
    { term: 'structural_errors', message: `spec: ${String(errors)} structural error(s)`, count: errors },
  ];
}

function distillTerms(observation: Observation, policy: InvariantPolicy): UnmetTerm[] {
  if (!policy.codeFirst) return [];
  const found = observation.distillNew;
  if (found === undefined) {
    return [
      {
        term: 'distill_not_run',
        message: 'distill: no distill pass yet (code-first needs one that finds nothing new)',
      },
    ];
  }
  if (found > 0) {
    return [
      {
        term: 'distill_new',
        message: `distill: the last pass found ${String(found)} new construct(s)`,
        count: found,
      },
    ];
  }
  return [];
}
