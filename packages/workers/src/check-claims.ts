import type { ObligationClaimTest, ObligationReconciliation } from '@allium-loop/allium';
import type { AnyPhaseResult, LoopRecord, PropagateResult } from './result-schemas.js';
import type { ConstructDiff, ObservedTestRun, SpecReading } from './worker-ports.js';
import type { PhaseFailureReason } from './worker-types.js';

/** One claim in a result file that the engine's own measurements contradict. */
export interface ClaimFailure {
  readonly reason: PhaseFailureReason;
  readonly detail: string;
}

/** The engine's measurements a result's claims are checked against. */
export interface ClaimEvidence {
  readonly specBefore: SpecReading;
  readonly specAfter: SpecReading;
  readonly diff: ConstructDiff;
  /** Named files that are missing or empty on disk. */
  readonly missingFiles: readonly string[];
  /** propagate only: the engine's run of each listed test file on its own. */
  readonly testRuns?: ReadonlyMap<string, ObservedTestRun>;
  /** propagate only: the source of each listed test file, read when the runner could not load it. */
  readonly testSources?: ReadonlyMap<string, string>;
  /** propagate only: the engine's reconciliation of the claims with the spec's obligations (`checkObligationClaims`). */
  readonly obligationClaims?: ObligationReconciliation;
  /** propagate only: the sha256 (hex) of each generated test file as it is on disk. */
  readonly testHashes?: ReadonlyMap<string, string>;
  /** The engine-side record the agent wrote beside its result, if any. */
  readonly loopRecord?: LoopRecord;
}

/** The files a result names, which must exist and be non-empty. */
export function namedFiles(result: AnyPhaseResult): string[] {
  switch (result.phase) {
    case 'elicit':
    case 'tend':
    case 'distill':
      return [result.spec_path];
    case 'propagate':
      return [...generatedTestPaths(result), ...(result.test_paths ?? [])];
    case 'implement':
      return [...result.files_changed];
    case 'weed':
      return [...(result.artefacts ?? [])];
  }
}

/** The generated test files a propagate record lists, each once, in order. */
export function generatedTestPaths(result: PropagateResult): string[] {
  return [...new Set(result.generated_tests.map((t) => t.path))];
}

const normalise = (text: string) => text.replace(/\s+/g, ' ').trim();
const syntaxErrors = (reading: SpecReading) =>
  reading.diagnostics.filter((d) => d.severity === 'error' && d.code === null);

function checkSpecParses(result: AnyPhaseResult, evidence: ClaimEvidence): ClaimFailure[] {
  const after = syntaxErrors(evidence.specAfter);
  const writesSpec = ['elicit', 'tend', 'distill'].includes(result.phase);
  if (after.length === 0 || (!writesSpec && syntaxErrors(evidence.specBefore).length > 0)) return [];
  const first = after[0]!;
  return [
    {
      reason: 'spec_unparseable',
      detail:
        `the spec no longer parses: ${first.location.file}:${first.location.line} ${first.message}` +
        (after.length > 1 ? ` (and ${after.length - 1} more)` : ''),
    },
  ];
}

function checkOpenQuestions(result: AnyPhaseResult, evidence: ClaimEvidence): ClaimFailure[] {
  if (result.phase !== 'elicit' && result.phase !== 'tend' && result.phase !== 'distill') return [];
  const inSpec = new Set(evidence.specAfter.openQuestions.map((q) => normalise(q.text)));
  const claimed = new Set((result.open_questions ?? []).map(normalise));
  const notInSpec = [...claimed].filter((q) => !inSpec.has(q));
  const unreported = [...inSpec].filter((q) => !claimed.has(q));
  if (notInSpec.length === 0 && unreported.length === 0) return [];
  const parts = [
    `result lists ${claimed.size} open question(s), the spec has ${inSpec.size}`,
    ...(notInSpec.length > 0 ? [`not in the spec: ${notInSpec.map((q) => `"${q}"`).join(', ')}`] : []),
    ...(unreported.length > 0 ? [`not reported: ${unreported.map((q) => `"${q}"`).join(', ')}`] : []),
  ];
  return [{ reason: 'count_mismatch', detail: parts.join('; ') }];
}

/**
 * The constructs a spec diff added, changed or removed that are behaviour — suppressions and open questions are
 * bookkeeping. distill's "new findings" are these, measured by the engine, never taken from the record.
 */
export function significantChanges(diff: ConstructDiff): string[] {
  return [...diff.added, ...diff.changed, ...diff.removed].filter(
    (id) => !id.startsWith('suppression:') && !id.startsWith('question:'),
  );
}

function checkQuestionClaims(result: AnyPhaseResult, evidence: ClaimEvidence): ClaimFailure[] {
  const classified = evidence.loopRecord?.open_questions ?? [];
  if (classified.length === 0) return [];
  const listed = new Set(('open_questions' in result ? (result.open_questions ?? []) : []).map(normalise));
  const stray = classified.map((q) => normalise(q.text)).filter((q) => !listed.has(q));
  if (stray.length === 0) return [];
  return [
    {
      reason: 'count_mismatch',
      detail: `the loop record classifies question(s) the result does not list: ${stray.map((q) => `"${q}"`).join(', ')}`,
    },
  ];
}

function checkTestHashes(result: AnyPhaseResult, evidence: ClaimEvidence): ClaimFailure[] {
  if (result.phase !== 'propagate') return [];
  const failures: ClaimFailure[] = [];
  for (const test of result.generated_tests) {
    const actual = evidence.testHashes?.get(test.path);
    if (actual === undefined) continue; // a missing file is reported by claim_file_missing
    const claimed = test.hash
      .trim()
      .toLowerCase()
      .replace(/^sha256:/, '');
    if (claimed === actual) continue;
    failures.push({
      reason: 'count_mismatch',
      detail: `${test.path}: the record's hash ${test.hash} is not the file's (sha256:${actual})`,
    });
  }
  return failures;
}

function checkPropagateRuns(result: AnyPhaseResult, evidence: ClaimEvidence): ClaimFailure[] {
  if (result.phase !== 'propagate') return [];
  const failures: ClaimFailure[] = [];
  const claims = new Map((evidence.loopRecord?.covers ?? []).map((c) => [c.path, c.obligations]));
  for (const path of generatedTestPaths(result)) {
    const file = { path, covers: claims.get(path) ?? [] };
    const run = evidence.testRuns?.get(file.path);
    if (run === undefined || !run.collected || run.cases.length === 0) {
      failures.push({
        reason: 'tests_not_collected',
        detail: `the test runner collected no tests from ${file.path}`,
      });
      continue;
    }
    const unloaded = run.cases.find((c) => c.loadError === true);
    // The runner could not load the file (in spec-first, often an import of what is not written yet): its tests
    // are read from the source instead.
    const source = evidence.testSources?.get(file.path) ?? '';
    const unproven = file.covers.filter((name) => {
      const verdict = obligationVerdict(evidence.obligationClaims, file.path, name);
      if (verdict !== undefined) return !verdict;
      return unloaded === undefined
        ? !run.cases.some((c) => c.loadError !== true && c.name.includes(name))
        : !declaresTestNaming(source, name);
    });
    if (unproven.length === 0) continue;
    failures.push({
      reason: 'coverage_unproven',
      detail:
        unloaded === undefined
          ? `${file.path}: no test title names ${unproven.join(', ')}`
          : `${file.path} could not be loaded by the test runner (${unloaded.message ?? 'no message'}), and no test declared in its source names ${unproven.join(', ')}`,
    });
  }
  return failures;
}

/**
 * Whether the reconciliation proved a claim (`undefined` when it is not a claim on the spec's obligations — no
 * plan, or a name that is neither an obligation id nor a construct — and the test titles decide).
 */
function obligationVerdict(
  claims: ObligationReconciliation | undefined,
  path: string,
  claim: string,
): boolean | undefined {
  if (claims === undefined) return undefined;
  const rejected = claims.rejected.find((r) => r.path === path && r.claim === claim);
  if (rejected?.reason === 'unknown_obligation') return undefined;
  return rejected === undefined;
}

/**
 * What {@link checkObligationClaims} needs to know of each generated test file: its claims, whether the runner
 * collected and ran it, and its test names (for a file the runner could not load, the test declarations of its
 * source). Pure.
 */
export function obligationClaimTests(
  result: PropagateResult,
  covers: ReadonlyMap<string, readonly string[]>,
  testRuns: ReadonlyMap<string, ObservedTestRun>,
  testSources: ReadonlyMap<string, string>,
): ObligationClaimTest[] {
  return generatedTestPaths(result).map((path) => {
    const file = { path, covers: covers.get(path) ?? [] };
    const run = testRuns.get(file.path);
    const ran = run !== undefined && run.collected && run.cases.length > 0;
    const loaded = run?.cases.every((c) => c.loadError !== true) ?? false;
    const titles = loaded
      ? (run?.cases ?? []).map((c) => c.name)
      : declaredTests(testSources.get(file.path) ?? '');
    return { path: file.path, covers: file.covers, ran, titles };
  });
}

const TEST_DECLARATION =
  /^.*(?:\b(?:it|test|describe|suite|specify|context)(?:\.\w+)*\s*\(|\bdef\s+test\w*|\bfunc\s+Test\w*|\bfn\s+\w+|\bclass\s+Test\w*).*$/gm;
const squash = (text: string) => text.toLowerCase().replace(/[^a-z0-9]/g, '');

/**
 * Whether a test declared in `source` names `name`: a line declaring a test (`it(`, `test(`, `describe(`,
 * `def test_…`, `func Test…`, `fn …`, `class Test…`) that contains it, compared without case and punctuation
 * (`CloseTally` matches `def test_close_tally_closes`). Pure.
 */
export function declaresTestNaming(source: string, name: string): boolean {
  const wanted = squash(name);
  if (wanted === '') return false;
  return declaredTests(source).some((line) => squash(line).includes(wanted));
}

/**
 * The obligations a slice answers for: those of its constructs (`rule:CloseTally` owns `CloseTally`'s obligations,
 * `entity:Loan` those of `Loan` and `Loan.status`); all of them without a slice. Pure.
 */
export function sliceObligations<O extends { readonly source_construct: string }>(
  obligations: readonly O[],
  constructs: readonly string[] | undefined,
): readonly O[] {
  if (constructs === undefined) return obligations;
  const names = new Set(constructs.map((id) => id.slice(id.indexOf(':') + 1)));
  return obligations.filter((o) => names.has(o.source_construct.split('.')[0] ?? ''));
}

/**
 * A generated test file as the reconciliation sees it from its source alone (an earlier propagate's test, or every
 * generated test at the witness): it claims every obligation in `ids`, counts as run when it declares a test, and
 * proves the obligations a declared test names. Pure.
 */
export function declaredCoverage(path: string, source: string, ids: readonly string[]): ObligationClaimTest {
  const titles = declaredTests(source);
  return { path, covers: ids, ran: titles.length > 0, titles };
}

/** The lines of `source` that declare a test (see {@link declaresTestNaming}). Pure. */
export function declaredTests(source: string): string[] {
  return [...source.matchAll(TEST_DECLARATION)].map((m) => m[0]);
}

/**
 * Checks a parsed result's claims against the engine's measurements: named files exist and are non-empty; the
 * spec still parses; the open questions listed are exactly those in the spec; distill's finding count agrees
 * with the spec diff (zero exactly when nothing changed); each propagated test file is collected by the runner
 * and names every rule it claims to cover in a test title — or, when the runner could not load the file, in a
 * test declared in its source; a claim on the spec's obligations (an obligation id, or a construct standing for
 * its obligations) holds when the engine's reconciliation proved it. Pure; an empty list means every claim held.
 */
export function checkClaims(result: AnyPhaseResult, evidence: ClaimEvidence): ClaimFailure[] {
  const missing: ClaimFailure[] = evidence.missingFiles.map((file) => ({
    reason: 'claim_file_missing',
    detail: `${file} is named in the result but is missing or empty`,
  }));
  return [
    ...missing,
    ...checkSpecParses(result, evidence),
    ...checkOpenQuestions(result, evidence),
    ...checkQuestionClaims(result, evidence),
    ...checkTestHashes(result, evidence),
    ...checkPropagateRuns(result, evidence),
  ];
}
