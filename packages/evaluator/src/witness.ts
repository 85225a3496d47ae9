import { evaluateInvariant } from './evaluate-invariant.js';
import { DEFAULT_POLICY, type TestTerm, type WeedTerm } from './observation.js';

/** A check's outcome, as the upstream witness schema spells it. */
export type WitnessCheckResult = 'pass' | 'fail' | 'inconclusive';

/** One check of the witness: its name, its result and the ground truth it read (never an agent's claim). */
export interface WitnessCheck {
  readonly name: WitnessCheckName;
  readonly result: WitnessCheckResult;
  readonly ground_truth: string;
}

/** The checks of the upstream witness procedure, in the order it runs them. */
export type WitnessCheckName =
  | 'tests-pass'
  | 'no-test-weakened'
  | 'coverage'
  | 'weed-verdict'
  | 'open-questions'
  | 'convergence'
  | 'red-before-green';

/** A violation and the phase that resolves it. */
export interface WitnessViolation {
  readonly violation: string;
  readonly routing: string;
}

/**
 * The witness record: exactly the shape of the upstream `witness-result.schema.json` (no other keys), which is
 * also what `.allium-loop/<slug>.witness.json` holds.
 */
export interface WitnessResult {
  readonly phase: 'witness';
  readonly verdict: 'PASS' | 'FAIL' | 'INCONCLUSIVE';
  readonly checks: readonly WitnessCheck[];
  readonly violations: readonly WitnessViolation[];
  readonly record_path: string;
  readonly summary: string;
}

/** A generated test as propagate recorded it, and its content hash now (`null`: the file is gone). */
export interface GeneratedTestHash {
  readonly path: string;
  readonly recordedHash: string;
  readonly currentHash: string | null;
}

/** An obligation propagate could not cover, and the reason it reported (absent: no reason given). */
export interface UncoveredObligation {
  readonly id: string;
  readonly reason?: string;
}

/**
 * The ground truth the witness reads. Every field is optional: a check whose evidence is absent is
 * `inconclusive` and says so. Nothing here is an agent's claim except `recorded`, which is what the run itself
 * wrote down and is compared with the witness's own re-run.
 */
export interface WitnessEvidence {
  /** The goal slug and the tick witnessed, for the summary line. */
  readonly slug: string;
  readonly tick: number;
  /** `.allium-loop/<slug>.witness.json`. */
  readonly recordPath: string;
  readonly mode: 'spec-first' | 'code-first';
  /** The witness's own run of the configured test command. */
  readonly rerun?: TestTerm;
  /** The test result the run recorded at its last verify (what it claims). */
  readonly recorded?: TestTerm;
  /** Generated tests with the hashes propagate recorded. */
  readonly generatedTests?: readonly GeneratedTestHash[];
  /** The reconciliation: obligations in the spec, how many a collected test covers, and the rest. */
  readonly reconciliation?: {
    readonly obligations: number;
    readonly covered: number;
    readonly uncovered: readonly UncoveredObligation[];
  };
  /** The weed verdict recorded for the witnessed tick. */
  readonly weed?: WeedTerm;
  /** Open questions: what the spec holds now and what the run recorded and reported. */
  readonly questions?: {
    /** Question texts the spec classifies as blocking now. */
    readonly blockingInSpec: readonly string[];
    /** Question texts the spec holds as parked now. */
    readonly parkedInSpec: readonly string[];
    /** Questions the run recorded as blocking and that were never answered: each must still be open, as blocking, in the spec (and then fails as open). */
    readonly recordedBlocking: readonly string[];
    /** Questions the run reported as parked. */
    readonly reportedParked: readonly string[];
  };
  /** Error-severity structural diagnostics in the spec now. */
  readonly structuralErrors?: number;
  /** Code-first: new findings of the last distill pass (`undefined`: none ran). */
  readonly distillNew?: number;
  /**
   * Spec-first: the tests propagate generated, those the red-check saw fail before implement, and those it saw
   * already green (the loop flagged them as already covered or vacuous and routed them back to propagate). A test
   * the red-check never observed at all fails the check; the rest is reported, best-effort, as upstream asks.
   */
  readonly redBeforeGreen?: {
    readonly newTests: readonly string[];
    readonly seenRed: readonly string[];
    readonly seenGreen?: readonly string[];
  };
}

/** Uncovered obligations with one of these reasons do not block convergence (they are reported, not hidden). */
export const EXPLAINED_UNCOVERED_REASONS: ReadonlySet<string> = new Set([
  'infrastructure-gap',
  'unmappable-construct',
]);

const ROUTING = {
  tampered: 'revert + propagate',
  failing: 'implement',
  blocking: 'escalate',
  coverage: 'propagate',
  weed: 'tend or implement, per divergence',
  questions: 'tend',
} as const;

interface Outcome {
  readonly check: WitnessCheck;
  readonly violations: readonly WitnessViolation[];
}

const outcome = (
  name: WitnessCheckName,
  result: WitnessCheckResult,
  groundTruth: string,
  violations: readonly WitnessViolation[] = [],
): Outcome => ({ check: { name, result, ground_truth: groundTruth }, violations });

const absent = (name: WitnessCheckName, what: string): Outcome =>
  outcome(name, 'inconclusive', `no evidence: ${what}`);

function testsLine(tests: TestTerm): string {
  const exit = tests.exitCode === null ? 'killed' : `exit ${tests.exitCode}`;
  if (tests.counts === 'unknown')
    return `runner ${exit}, counts unreadable${tests.timedOut ? ' (timed out)' : ''}`;
  return `runner ${exit}, ${tests.passed}/${tests.passed + tests.failed} passed`;
}

function testsPass(evidence: WitnessEvidence): Outcome {
  const { rerun, recorded } = evidence;
  if (rerun === undefined) return absent('tests-pass', 'the test command was not re-run');
  const line = testsLine(rerun);
  const violations: WitnessViolation[] = [];
  const green = rerun.counts === 'known' && rerun.exitCode === 0 && rerun.failed === 0 && rerun.passed > 0;
  if (!green)
    violations.push({ violation: `tests do not pass on re-run (${line})`, routing: ROUTING.failing });
  if (
    recorded?.counts === 'known' &&
    rerun.counts === 'known' &&
    (recorded.passed !== rerun.passed || recorded.failed !== rerun.failed)
  )
    violations.push({
      violation: `recorded ${recorded.passed}/${recorded.passed + recorded.failed} but the re-run gives ${line}`,
      routing: ROUTING.failing,
    });
  return outcome('tests-pass', violations.length === 0 ? 'pass' : 'fail', line, violations);
}

function noTestWeakened(evidence: WitnessEvidence): Outcome {
  const tests = evidence.generatedTests;
  if (tests === undefined || tests.length === 0)
    return absent('no-test-weakened', 'propagate recorded no generated-test hashes');
  const changed = tests.filter((t) => t.currentHash !== t.recordedHash);
  const violations = changed.map((t) => ({
    violation:
      t.currentHash === null ? `${t.path} deleted after propagate` : `${t.path} edited after propagate`,
    routing: ROUTING.tampered,
  }));
  const truth =
    changed.length === 0
      ? `sha256 of ${tests.length} generated test file(s) equal to propagate's`
      : `sha256 mismatch on ${changed.map((t) => t.path).join(', ')}`;
  return outcome('no-test-weakened', changed.length === 0 ? 'pass' : 'fail', truth, violations);
}

function coverage(evidence: WitnessEvidence): Outcome {
  const r = evidence.reconciliation;
  if (r === undefined) return absent('coverage', 'no reconciliation line');
  const line = `${r.obligations} obligations, ${r.covered} covered, ${r.uncovered.length} uncovered`;
  const unexplained = r.uncovered.filter(
    (o) => o.reason === undefined || !EXPLAINED_UNCOVERED_REASONS.has(o.reason),
  );
  const violations = unexplained.map((o) => ({
    violation: `obligation ${o.id} uncovered${o.reason === undefined ? ' with no reason' : ` (${o.reason})`}`,
    routing: ROUTING.coverage,
  }));
  if (r.covered + r.uncovered.length !== r.obligations)
    violations.push({
      violation: `reconciliation does not add up: ${line}`,
      routing: ROUTING.coverage,
    });
  return outcome('coverage', violations.length === 0 ? 'pass' : 'fail', line, violations);
}

function weedVerdict(evidence: WitnessEvidence): Outcome {
  const weed = evidence.weed;
  if (weed === undefined || weed.status === 'not_run')
    return absent('weed-verdict', 'no weed verdict recorded');
  if (weed.status === 'clean') return outcome('weed-verdict', 'pass', 'weed verdict: clean');
  const truth = `weed verdict: ${weed.divergences} divergence(s)`;
  return outcome('weed-verdict', 'fail', truth, [{ violation: truth, routing: ROUTING.weed }]);
}

function openQuestions(evidence: WitnessEvidence): Outcome {
  const q = evidence.questions;
  if (q === undefined) return absent('open-questions', 'the spec was not read');
  const violations: WitnessViolation[] = [];
  const blocking = new Set(q.blockingInSpec);
  const parked = new Set(q.parkedInSpec);
  for (const text of q.blockingInSpec)
    violations.push({ violation: `blocking question open: ${text}`, routing: ROUTING.blocking });
  for (const text of q.recordedBlocking) {
    if (blocking.has(text)) continue;
    violations.push({
      violation: parked.has(text)
        ? `blocking question downgraded to parked: ${text}`
        : `blocking question unanswered and gone from the spec: ${text}`,
      routing: ROUTING.blocking,
    });
  }
  for (const text of q.reportedParked)
    if (!parked.has(text))
      violations.push({
        violation: `reported parked but not in the spec: ${text}`,
        routing: ROUTING.questions,
      });
  const truth = `spec: ${q.blockingInSpec.length} blocking, ${q.parkedInSpec.length} parked; run recorded ${q.recordedBlocking.length} blocking, reported ${q.reportedParked.length} parked`;
  return outcome('open-questions', violations.length === 0 ? 'pass' : 'fail', truth, violations);
}

function convergence(evidence: WitnessEvidence): Outcome {
  const { rerun, weed, questions, structuralErrors } = evidence;
  if (rerun === undefined || weed === undefined || questions === undefined || structuralErrors === undefined)
    return absent('convergence', 'not every term of the invariant has ground truth');
  const codeFirst = evidence.mode === 'code-first';
  const verdict = evaluateInvariant(
    {
      tests: rerun,
      weed,
      structuralErrors,
      openQuestions: { blocking: questions.blockingInSpec.length, parked: questions.parkedInSpec.length },
      ...(evidence.distillNew === undefined ? {} : { distillNew: evidence.distillNew }),
    },
    { ...DEFAULT_POLICY, codeFirst },
  );
  const truth = verdict.converged
    ? 'invariant holds on the re-run, weed verdict, spec questions and structure'
    : `invariant unmet: ${verdict.unmet.map((u) => u.term).join(', ')}`;
  // Each unmet term is already a violation of the check that owns it; only terms no other check reads are added.
  const own = verdict.unmet.filter((u) => u.term === 'structural_errors' || u.term.startsWith('distill'));
  const violations = own.map((u) => ({
    violation: u.message,
    routing: u.term === 'structural_errors' ? 'tend' : 'distill',
  }));
  return outcome('convergence', verdict.converged ? 'pass' : 'fail', truth, violations);
}

function redBeforeGreen(evidence: WitnessEvidence): Outcome | undefined {
  if (evidence.mode !== 'spec-first') return undefined;
  const r = evidence.redBeforeGreen;
  if (r === undefined || r.newTests.length === 0)
    return absent('red-before-green', 'no red observation recorded (best-effort check)');
  const red = new Set(r.seenRed);
  const green = new Set(r.seenGreen ?? []);
  const never = r.newTests.filter((t) => !red.has(t) && !green.has(t));
  const greenFirst = r.newTests.filter((t) => !red.has(t) && green.has(t)).length;
  const truth =
    `best-effort: ${String(r.newTests.filter((t) => red.has(t)).length)}/${String(r.newTests.length)} new test(s) seen red before green` +
    (greenFirst > 0
      ? `, ${String(greenFirst)} green at the red-check (flagged already covered or vacuous)`
      : '') +
    (never.length > 0 ? `, ${String(never.length)} never red-checked` : '');
  const violations = never.map((t) => ({
    violation: `${t} was never red-checked before implement`,
    routing: ROUTING.coverage,
  }));
  return outcome('red-before-green', never.length === 0 ? 'pass' : 'fail', truth, violations);
}

/**
 * The engine's witness (upstream `witness-SKILL.md`): a deterministic pass over ground truth — the runner's exit
 * status and counts from a fresh re-run, generated-test hashes against propagate's, the reconciliation line, the
 * weed verdict, the open questions in the spec against what the run recorded, and the invariant re-evaluated from
 * all of it. No model is asked anything.
 *
 * Verdict: `FAIL` when any check fails; `INCONCLUSIVE` when the tests were not re-run (the one check convergence
 * can never do without) or when no check had evidence; `PASS` otherwise. Pure and total.
 */
export function witness(evidence: WitnessEvidence): WitnessResult {
  const outcomes = [
    testsPass(evidence),
    noTestWeakened(evidence),
    coverage(evidence),
    weedVerdict(evidence),
    openQuestions(evidence),
    convergence(evidence),
    redBeforeGreen(evidence),
  ].filter((o): o is Outcome => o !== undefined);
  const checks = outcomes.map((o) => o.check);
  const violations = outcomes.flatMap((o) => o.violations);
  const failed = checks.filter((c) => c.result === 'fail');
  const testsWitnessed = checks.find((c) => c.name === 'tests-pass')?.result !== 'inconclusive';
  const verdict =
    failed.length > 0
      ? 'FAIL'
      : !testsWitnessed || checks.every((c) => c.result === 'inconclusive')
        ? 'INCONCLUSIVE'
        : 'PASS';
  const passed = checks.filter((c) => c.result === 'pass').length;
  const detail =
    verdict === 'FAIL'
      ? failed.map((c) => c.name).join(', ')
      : `checks ${passed}/${checks.length}${passed < checks.length ? ` (${checks.length - passed} without evidence)` : ''}`;
  return {
    phase: 'witness',
    verdict,
    checks,
    violations,
    record_path: evidence.recordPath,
    summary: `witness: ${verdict} · ${detail} · ${evidence.slug} tick ${evidence.tick}`,
  };
}
