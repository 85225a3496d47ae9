/** How many tests a file switches off, focuses or leaves unwritten, by marker. */
export interface TestMarkerCounts {
  readonly skip: number;
  readonly only: number;
  readonly todo: number;
}

const TEST_FNS = '(?:it|test|describe|suite|context|specify|bench)';
const PATTERNS: Record<keyof TestMarkerCounts, readonly RegExp[]> = {
  skip: [
    new RegExp(`\\b${TEST_FNS}\\.(?:skip|skipIf|fixme|runIf)\\b`, 'g'),
    /\bx(?:it|describe|test|context|specify)\s*\(/g,
    /@pytest\.mark\.(?:skip|skipif|xfail)\b/g,
    /\bpytest\.(?:skip|xfail|importorskip)\s*\(/g,
    /@unittest\.(?:skip\w*|expectedFailure)/g,
    /\bself\.skipTest\s*\(/g,
    /\bt\.Skip(?:Now|f)?\s*\(/g,
    /#\[ignore\b/g,
    // node:test and vitest options: `test('x', { skip: true }, fn)`.
    /[{,]\s*skip\s*:\s*(?!false\b|undefined\b|0\b)[^,}\s]/g,
  ],
  only: [
    new RegExp(`\\b${TEST_FNS}\\.only\\b`, 'g'),
    /\bf(?:it|describe)\s*\(/g,
    /[{,]\s*only\s*:\s*true\b/g,
  ],
  todo: [
    new RegExp(`\\b${TEST_FNS}\\.todo\\b`, 'g'),
    /[{,]\s*todo\s*:\s*(?!false\b|undefined\b|0\b)[^,}\s]/g,
  ],
};

/**
 * Lint, type-check and coverage suppressions: a check the test command may run, switched off in a comment.
 * `-- allium-ignore` in the spec has its own guard.
 */
const SUPPRESSIONS: readonly RegExp[] = [
  /\beslint-disable(?:-next-line|-line)?\b/g,
  /@ts-(?:ignore|expect-error|nocheck)\b/g,
  /\b(?:istanbul|c8|v8)\s+ignore\b/g,
  /#\s*pragma:\s*no\s*cover\b/g,
  /#\s*type:\s*ignore\b/g,
  /#\s*noqa\b/g,
  /#\s*pylint:\s*disable\b/g,
  /\/\/\s*nolint\b/g,
  /#!?\[allow\(/g,
  /\bbiome-ignore\b/g,
  /\bprettier-ignore\b/g,
  /\$FlowFixMe\b/g,
];

function countMatches(text: string, patterns: readonly RegExp[]): number {
  return patterns.reduce((sum, pattern) => sum + (text.match(pattern)?.length ?? 0), 0);
}

/**
 * Counts the markers that switch tests off (`.skip`, `xit`, `{ skip: true }`, `@pytest.mark.skip`/`xfail`,
 * `pytest.skip()`, `t.Skip()`, `#[ignore]`), focus them (`.only`, `fit`) or leave them unwritten (`.todo`,
 * `{ todo: true }`) in a test file's text. A textual count: it does not parse the language, and it is only ever
 * compared with the same file's earlier count.
 */
export function countTestMarkers(text: string): TestMarkerCounts {
  return {
    skip: countMatches(text, PATTERNS.skip),
    only: countMatches(text, PATTERNS.only),
    todo: countMatches(text, PATTERNS.todo),
  };
}

/** Lint, type and coverage suppressions in a file's text (`eslint-disable`, `@ts-ignore`, `istanbul ignore`, …). */
export function countSuppressions(text: string): number {
  return countMatches(text, SUPPRESSIONS);
}

/** Whether a line carries a lint, type or coverage suppression. */
export function hasSuppression(line: string): boolean {
  return SUPPRESSIONS.some((pattern) => new RegExp(pattern.source).test(line));
}

/** How much a test file checks: its test declarations and its non-trivial assertions. */
export interface TestStrength {
  readonly cases: number;
  readonly assertions: number;
}

const CASES: readonly RegExp[] = [
  /\b(?:it|test|specify)(?:\.(?:each|concurrent|sequential|skip|only|todo|fails)\b[^(]*)?\s*\(/g,
  /^\s*(?:async\s+)?def\s+test\w*\s*\(/gm,
  /^\s*func\s+(?:Test|Fuzz|Example)\w*\s*\(/gm,
  /#\[(?:tokio::)?test\b/g,
];
const ASSERTIONS: readonly RegExp[] = [
  /\bexpect\s*[.(]/g,
  /\bassert(?:\w*)?\s*[.(!]/g,
  /^\s*assert\s+\S/gm,
  /\bself\.fail\w*\s*\(/g,
  /\bpytest\.raises\s*\(/g,
  /\bt\.(?:Error|Errorf|Fatal|Fatalf|Fail|FailNow)\s*\(/g,
  /\b(?:require|assert)\.\w+\s*\(\s*t\b/g,
  /\.should\b/g,
  /\bshould\.\w+/g,
  /#\[should_panic\b/g,
];
/** Assertions that cannot fail: a literal compared with itself, `assert True`, `expect(true).toBe(true)`. */
const TRIVIAL: readonly RegExp[] = [
  /^\s*assert\s+(?:True|1|not\s+(?:False|None|0))\s*(?:#.*)?$/gm,
  /\bassert(?:\.ok)?\s*\(\s*(?:true|1|!0|!false)\s*[,)]/g,
  /\bexpect\s*\(\s*(true|false|null|undefined|-?\d+(?:\.\d+)?|'[^']*'|"[^"]*")\s*\)\s*\.\s*(?:not\s*\.\s*)?to(?:Be|Equal|StrictEqual|BeTruthy|BeFalsy|BeDefined|BeNull)\s*\(\s*(?:\1)?\s*\)/g,
  /\bassert\.(?:equal|strictEqual|deepEqual|deepStrictEqual)\s*\(\s*(true|false|-?\d+|'[^']*'|"[^"]*")\s*,\s*\1\s*[,)]/g,
  /\bself\.assert(?:True|Equal)\s*\(\s*(True|1)\s*(?:,\s*\1\s*)?\)/g,
  /\bassert!\s*\(\s*true\s*\)/g,
  /\bassert_eq!\s*\(\s*(-?\d+|true|false)\s*,\s*\1\s*\)/g,
];

/**
 * Counts a test file's test declarations (`it(`, `test(`, `def test_…`, `func Test…`, `#[test]`) and its assertions
 * (`expect`, `assert…`, `self.assert…`, `t.Error…`, `should`, …) minus those that cannot fail (`assert True`,
 * `assert.ok(true)`, `expect(1).toBe(1)`). Textual; only compared with the same file's earlier count.
 */
export function testStrength(text: string): TestStrength {
  const assertions = countMatches(text, ASSERTIONS) - countMatches(text, TRIVIAL);
  return { cases: countMatches(text, CASES), assertions: Math.max(0, assertions) };
}
