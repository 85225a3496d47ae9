import type { TestCase } from '../test-run.js';
import { toInt, type OutputParser, type PartialCounts } from './parser-types.js';

type Bucket = 'passed' | 'failed' | 'skipped' | 'ignore';

/** Adds up `N word` pairs of one summary line into buckets. */
function tally(
  parts: string,
  buckets: Readonly<Record<string, Bucket>>,
): Record<Exclude<Bucket, 'ignore'>, number> {
  const totals = { passed: 0, failed: 0, skipped: 0 };
  for (const match of parts.matchAll(/(\d+) ([a-z]+)/g)) {
    const bucket = buckets[match[2]!];
    if (bucket !== undefined && bucket !== 'ignore') totals[bucket] += toInt(match[1]);
  }
  return totals;
}

/** Sums every summary line `pattern` finds (several packages or runs print one each); `undefined` when none. */
function sumLines(
  text: string,
  parser: string,
  pattern: RegExp,
  buckets: Readonly<Record<string, Bucket>>,
  cases: readonly TestCase[],
): PartialCounts | undefined {
  let found = false;
  const totals = { passed: 0, failed: 0, skipped: 0 };
  for (const match of text.matchAll(pattern)) {
    found = true;
    const line = tally(match[1]!, buckets);
    totals.passed += line.passed;
    totals.failed += line.failed;
    totals.skipped += line.skipped;
  }
  return found ? { parser, ...totals, cases } : undefined;
}

function failedNames(text: string, pattern: RegExp): TestCase[] {
  return [...new Set([...text.matchAll(pattern)].map((match) => match[1]!.trim()))].map((name) => ({
    name,
    status: 'failed' as const,
  }));
}

/** Adds cases for files the runner could not load; each counts as one failed test. */
function withLoadErrors(counts: PartialCounts | undefined, parser: string, errors: readonly TestCase[]) {
  if (errors.length === 0) return counts;
  const base = counts ?? { parser, passed: 0, failed: 0, skipped: 0, cases: [] };
  return { ...base, failed: base.failed + errors.length, cases: [...base.cases, ...errors] };
}

function loadErrors(text: string, pattern: RegExp, message?: (at: number) => string | undefined): TestCase[] {
  const seen = new Set<string>();
  const errors: TestCase[] = [];
  for (const match of text.matchAll(pattern)) {
    const name = match[1]!.trim();
    if (seen.has(name)) continue;
    seen.add(name);
    const detail = message?.(match.index + match[0].length);
    errors.push({
      name,
      status: 'failed',
      loadError: true,
      ...(detail === undefined ? {} : { message: detail }),
    });
  }
  return errors;
}

/** The first `Error: …` line after `at`, as the load error's message. */
function errorLineAfter(text: string, at: number): string | undefined {
  return /^\s*(?:\w*Error\b.*)$/m.exec(text.slice(at, at + 2000))?.[0].trim();
}

/**
 * vitest's footer, `Tests  1 failed | 3 passed | 1 skipped (5)`; failing names from ` FAIL  file > suite > test`.
 * A file it could not load (` FAIL  file [ file ]`, no test name) is a failed case marked as a load error.
 */
export const parseVitestSummary: OutputParser = (text) =>
  withLoadErrors(
    sumLines(
      text,
      'vitest-summary',
      /^ {0,6}Tests {2}(.*\d.*)\(\d+\)\s*$/gm,
      { passed: 'passed', failed: 'failed', skipped: 'skipped', todo: 'skipped' },
      failedNames(text, /^ FAIL {2}(.+ > .+?)\s*$/gm),
    ),
    'vitest-summary',
    loadErrors(text, /^ FAIL {2}([^>\n]+?) \[ [^\]]+ \]\s*$/gm, (at) => errorLineAfter(text, at)),
  );

/**
 * jest's footer, `Tests:       1 failed, 1 skipped, 2 passed, 4 total`; failing names from `● suite › test`. A file
 * reported as ` FAIL  file` then `● Test suite failed to run` is a failed case marked as a load error.
 */
export const parseJestSummary: OutputParser = (text) =>
  withLoadErrors(
    sumLines(
      text,
      'jest-summary',
      /^Tests:\s+(.*total)\s*$/gm,
      { passed: 'passed', failed: 'failed', skipped: 'skipped', todo: 'skipped', total: 'ignore' },
      failedNames(text, /^\s+● (.+ › .+?)\s*$/gm),
    ),
    'jest-summary',
    loadErrors(text, /^ FAIL {2}(\S+)[^\n]*\n\s+● Test suite failed to run\s*$/gm, (at) =>
      /^\s*(\S.*)$/m.exec(text.slice(at, at + 2000))?.[1]?.trim(),
    ),
  );

/**
 * pytest's closing line, `==== 1 failed, 2 passed, 1 skipped in 0.81s ====` or, with `-q`,
 * `1 failed, 2 passed in 0.81s`; errors count as failed, xfailed as skipped, xpassed as passed. Failing names
 * from the short summary's `FAILED path::test` and `ERROR path::test` lines.
 */
export const parsePytestSummary: OutputParser = (text) => {
  const noTests = /^=+ no tests ran in [\d.]+s/m.test(text) || /^no tests ran in [\d.]+s/m.test(text);
  const counted = sumLines(
    text,
    'pytest-summary',
    /^=*\s*((?:\d+ (?:passed|failed|skipped|errors?|xfailed|xpassed|deselected|warnings?|rerun)(?:, )?)+) in [\d.]+s\b.*$/gm,
    {
      passed: 'passed',
      failed: 'failed',
      skipped: 'skipped',
      error: 'failed',
      errors: 'failed',
      xfailed: 'skipped',
      xpassed: 'passed',
    },
    failedNames(text, /^(?:FAILED|ERROR) (\S+::\S+)/gm),
  );
  // `ERROR path` with no `::test` is a module pytest could not collect (an import error, a syntax error); the
  // closing line already counts it among the errors.
  const modules = loadErrors(text, /^ERROR (\S+\.py)\b(?!::)(?: - (.*))?$/gm);
  if (counted !== undefined) return { ...counted, cases: [...counted.cases, ...modules] };
  if (!noTests) return withLoadErrors(undefined, 'pytest-summary', modules);
  return { parser: 'pytest-summary', passed: 0, failed: 0, skipped: 0, cases: [] };
};

const CARGO_CASE = /^test (.+?) \.\.\. (ok|FAILED|ignored)\b/gm;

const CARGO_FAILURES = /^failures:\n((?: {4}\S.*\n)+)/gm;

/**
 * cargo test's `test result: FAILED. 1 passed; 1 failed; 1 ignored; …` lines, summed over every test binary.
 * Cases from `test name ... ok|FAILED|ignored` lines; with `--quiet` (no such lines) the failing names come from
 * the closing `failures:` list.
 */
export const parseCargoSummary: OutputParser = (text) => {
  const cases: TestCase[] = [...text.matchAll(CARGO_CASE)].map((match) => ({
    name: match[1]!,
    status: match[2] === 'ok' ? 'passed' : match[2] === 'FAILED' ? 'failed' : 'skipped',
  }));
  if (cases.length === 0) {
    for (const block of text.matchAll(CARGO_FAILURES)) {
      cases.push(
        ...block[1]!
          .trimEnd()
          .split('\n')
          .map((line) => ({ name: line.trim(), status: 'failed' as const })),
      );
    }
  }
  // A crate whose tests do not compile: `error: could not compile `name` (lib test) due to …`.
  return withLoadErrors(
    sumLines(
      text,
      'cargo-summary',
      /^test result: (?:ok|FAILED)\. (.*)$/gm,
      { passed: 'passed', failed: 'failed', ignored: 'skipped' },
      cases,
    ),
    'cargo-summary',
    loadErrors(
      text,
      /^error: could not compile `([^`]+)`.*$/gm,
      () => /^error(?:\[E\d+\])?: (?!could not compile).*$/m.exec(text)?.[0],
    ),
  );
};

/** node:test's spec reporter footer (`ℹ pass 3`, `ℹ fail 1`, …); failing names listed after `✖ failing tests:`. */
export const parseNodeSpecSummary: OutputParser = (text) => {
  const value = (key: string): number | undefined => {
    const match = new RegExp(`^ℹ ${key} (\\d+)$`, 'm').exec(text);
    return match === null ? undefined : toInt(match[1]);
  };
  const passed = value('pass');
  const failed = value('fail');
  if (passed === undefined || failed === undefined) return undefined;
  const failingBlock = text.split('✖ failing tests:')[1] ?? '';
  return {
    parser: 'node-spec-summary',
    passed,
    failed: failed + (value('cancelled') ?? 0),
    skipped: (value('skipped') ?? 0) + (value('todo') ?? 0),
    cases: failedNames(failingBlock, /^\s*✖ (.+?) \([\d.]+m?s\)\s*$/gm),
  };
};

/** mocha's spec reporter footer: `  3 passing (12ms)`, `  1 failing`, `  2 pending`. Counts only. */
export const parseMochaSummary: OutputParser = (text) => {
  const passing = /^\s+(\d+) passing \(/m.exec(text);
  if (passing === null) return undefined;
  const failing = /^\s+(\d+) failing\s*$/m.exec(text);
  const pending = /^\s+(\d+) pending\s*$/m.exec(text);
  return {
    parser: 'mocha-summary',
    passed: toInt(passing[1]),
    failed: toInt(failing?.[1]),
    skipped: toInt(pending?.[1]),
    cases: [],
  };
};

/**
 * `go test -v` per-test lines, `--- PASS: TestX (0.00s)`, `--- FAIL: …`, `--- SKIP: …`; plain `go test` has none.
 * `FAIL\tpkg [build failed]` (or `[setup failed]`) is a package that did not build: a failed load-error case.
 */
export const parseGoVerbose: OutputParser = (text) => {
  const cases: TestCase[] = [...text.matchAll(/^\s*--- (PASS|FAIL|SKIP): (\S+)/gm)].map((match) => ({
    name: match[2]!,
    status: match[1] === 'PASS' ? 'passed' : match[1] === 'FAIL' ? 'failed' : 'skipped',
  }));
  cases.push(...loadErrors(text, /^FAIL\s+(\S+ \[(?:build|setup) failed\])\s*$/gm));
  if (cases.length === 0) return undefined;
  const count = (status: TestCase['status']) => cases.filter((testCase) => testCase.status === status).length;
  return {
    parser: 'go-test-verbose',
    passed: count('passed'),
    failed: count('failed'),
    skipped: count('skipped'),
    cases,
  };
};
