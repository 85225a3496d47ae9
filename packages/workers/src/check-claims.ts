import type { AnyPhaseResult } from './result-schemas.js';
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
}

/** The files a result names, which must exist and be non-empty. */
export function namedFiles(result: AnyPhaseResult): string[] {
  switch (result.phase) {
    case 'elicit':
    case 'tend':
    case 'distill':
      return [...result.specFiles];
    case 'propagate':
      return result.testFiles.map((t) => t.path);
    case 'implement':
      return [...result.filesChanged];
    case 'weed':
      return result.divergences.flatMap((d) => [d.spec?.file, d.code?.file].filter((f) => f !== undefined));
  }
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
  const claimed = new Set(result.openQuestions.map((q) => normalise(q.text)));
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

function checkDistillCount(result: AnyPhaseResult, evidence: ClaimEvidence): ClaimFailure[] {
  if (result.phase !== 'distill') return [];
  // Suppressions and open questions are bookkeeping, not behaviour: they do not count as findings.
  const significant = (ids: readonly string[]) =>
    ids.filter((id) => !id.startsWith('suppression:') && !id.startsWith('question:'));
  const changes = significant([
    ...evidence.diff.added,
    ...evidence.diff.changed,
    ...evidence.diff.removed,
  ]).length;
  if ((result.newFindings === 0) === (changes === 0)) return [];
  return [
    {
      reason: 'count_mismatch',
      detail: `distill reports ${result.newFindings} new finding(s) but the spec diff has ${changes} changed construct(s)`,
    },
  ];
}

function checkPropagateRuns(result: AnyPhaseResult, evidence: ClaimEvidence): ClaimFailure[] {
  if (result.phase !== 'propagate') return [];
  const failures: ClaimFailure[] = [];
  for (const file of result.testFiles) {
    const run = evidence.testRuns?.get(file.path);
    if (run === undefined || !run.collected || run.cases.length === 0) {
      failures.push({
        reason: 'tests_not_collected',
        detail: `the test runner collected no tests from ${file.path}`,
      });
      continue;
    }
    const uncovered = file.covers.filter(
      (name) => !run.cases.some((c) => c.loadError !== true && c.name.includes(name)),
    );
    const unloaded = run.cases.find((c) => c.loadError === true);
    if (unloaded === undefined) {
      if (uncovered.length > 0)
        failures.push({
          reason: 'coverage_unproven',
          detail: `${file.path}: no test title names ${uncovered.join(', ')}`,
        });
      continue;
    }
    // The runner could not load the file (in spec-first, often an import of what is not written yet): its tests
    // are read from the source instead.
    const source = evidence.testSources?.get(file.path) ?? '';
    const unnamed = uncovered.filter((name) => !declaresTestNaming(source, name));
    if (unnamed.length > 0) {
      failures.push({
        reason: 'coverage_unproven',
        detail: `${file.path} could not be loaded by the test runner (${unloaded.message ?? 'no message'}), and no test declared in its source names ${unnamed.join(', ')}`,
      });
    }
  }
  return failures;
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
  return [...source.matchAll(TEST_DECLARATION)].some((m) => squash(m[0]).includes(wanted));
}

/**
 * Checks a parsed result's claims against the engine's measurements: named files exist and are non-empty; the
 * spec still parses; the open questions listed are exactly those in the spec; distill's finding count agrees
 * with the spec diff (zero exactly when nothing changed); each propagated test file is collected by the runner
 * and names every rule it claims to cover in a test title — or, when the runner could not load the file, in a
 * test declared in its source. Pure; an empty list means every claim held.
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
    ...checkDistillCount(result, evidence),
    ...checkPropagateRuns(result, evidence),
  ];
}
