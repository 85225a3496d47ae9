import { describe, expect, it } from 'vitest';
import { countSuppressions, countTestMarkers, testStrength } from './count-test-markers.js';
import {
  detectViolations,
  isAllowedTestChange,
  type FileSnapshot,
  type GuardInput,
} from './detect-violations.js';
import { sha256 } from './take-snapshot.js';

const file = (text: string): FileSnapshot => ({ text, sha256: sha256(text) });
const files = (entries: Record<string, string>) =>
  new Map(Object.entries(entries).map(([p, t]) => [p, file(t)]));

/** A user-written (not generated) test: the guards must keep it from being weakened. */
const USER_TEST = `import assert from 'node:assert/strict';
import { test } from 'node:test';
import { add, sub } from '../src/math.js';
test('adds', () => { assert.equal(add(1, 2), 3); });
test('subtracts', () => { assert.equal(sub(3, 2), 1); });
`;
const PY_TEST = 'from calc import add\n\ndef test_add():\n    assert add(1, 2) == 3\n';
const CODE = 'export function add(a, b) {\n  return a + b;\n}\n';

function guard(
  after: Record<string, string>,
  extra: Partial<GuardInput> = {},
  code?: Record<string, string>,
) {
  const tests = { 'test/math.test.js': USER_TEST, 'tests/test_calc.py': PY_TEST };
  return detectViolations({
    phase: 'implement',
    before: { spec: new Map(), tests: files(tests), code: files({ 'src/math.js': CODE }) },
    after: {
      spec: new Map(),
      tests: files({ ...tests, ...after }),
      code: files({ 'src/math.js': CODE, ...code }),
    },
    protectedTests: [],
    removedConstructs: [],
    ...extra,
  });
}

describe('existing tests are protected like generated ones', () => {
  it.each([
    ['rewritten to assert nothing', USER_TEST.replace('assert.equal(add(1, 2), 3);', ''), 'test_weakened'],
    [
      'assert.ok(true) in place of the check',
      USER_TEST.replace('assert.equal(add(1, 2), 3)', 'assert.ok(true)'),
      'test_weakened',
    ],
    ['a case removed', USER_TEST.replace(/test\('subtracts'.*\n/, ''), 'test_weakened'],
    [
      '{ todo: true }',
      USER_TEST.replace("test('adds', ()", "test('adds', { todo: true }, ()"),
      'test_markers_rose',
    ],
    [
      "{ skip: 'later' }",
      USER_TEST.replace("test('adds', ()", "test('adds', { skip: 'later' }, ()"),
      'test_markers_rose',
    ],
    ['.only', USER_TEST.replace("test('adds'", "test.only('adds'"), 'test_markers_rose'],
    ['eslint-disable', `/* eslint-disable */\n${USER_TEST}`, 'lint_suppression_added'],
    ['@ts-ignore', USER_TEST.replace("test('adds'", "// @ts-ignore\ntest('adds'"), 'lint_suppression_added'],
  ])('%s: a violation, restored to the text before the phase', (_name, text, kind) => {
    const report = guard({ 'test/math.test.js': text });
    expect(report.violations.map((v) => v.kind)).toContain(kind);
    expect(report.reverts).toEqual([{ kind: 'restore_text', path: 'test/math.test.js', text: USER_TEST }]);
  });

  it.each([
    ['assert True', PY_TEST.replace('assert add(1, 2) == 3', 'assert True')],
    ['pytest.mark.xfail', PY_TEST.replace('def test_add', '@pytest.mark.xfail\ndef test_add')],
    ['pragma: no cover', PY_TEST.replace('def test_add():', 'def test_add():  # pragma: no cover')],
  ])('python: %s is caught', (_name, text) => {
    expect(guard({ 'tests/test_calc.py': text }).violations).not.toEqual([]);
  });

  it('strengthening or renaming a test is not a violation', () => {
    const stronger = USER_TEST.replace("test('adds'", "test('adds two numbers'").replace(
      'assert.equal(add(1, 2), 3);',
      'assert.equal(add(1, 2), 3); assert.equal(add(0, 0), 0);',
    );
    expect(guard({ 'test/math.test.js': stronger }).violations).toEqual([]);
  });

  it('a suppression added to code under work is a violation; the revert strips only the suppression', () => {
    const suppressed =
      'export function add(a, b) {\n  // istanbul ignore next\n  return a + b; // @ts-ignore\n}\n';
    const report = guard({}, {}, { 'src/math.js': suppressed });
    expect(report.violations).toEqual([
      { kind: 'lint_suppression_added', path: 'src/math.js', before: 0, after: 2 },
    ]);
    expect(report.reverts).toEqual([{ kind: 'restore_text', path: 'src/math.js', text: CODE }]);
  });

  it('allowTestChanges turns a weakening into an allowed, reported change', () => {
    const weakened = USER_TEST.replace(/test\('subtracts'.*\n/, '');
    const report = guard({ 'test/math.test.js': weakened }, { allowedTestChanges: ['test/**'] });
    expect(report.violations).toEqual([]);
    expect(report.reverts).toEqual([]);
    expect(report.allowed).toEqual([
      { path: 'test/math.test.js', detail: 'cases fell from 2 to 1' },
      { path: 'test/math.test.js', detail: 'assertions fell from 2 to 1' },
    ]);
    expect(isAllowedTestChange('tests/test_calc.py', ['test/**'])).toBe(false);
    expect(isAllowedTestChange('test/a/b.test.js', ['test/*.test.js'])).toBe(false);
    expect(isAllowedTestChange('test/b.test.js', ['test/*.test.js'])).toBe(true);
  });

  it('a deleted user test is a violation in every phase, propagate included', () => {
    const { spec, tests, code } = {
      spec: new Map(),
      tests: files({ 'test/math.test.js': USER_TEST }),
      code: new Map(),
    };
    const report = detectViolations({
      phase: 'propagate',
      before: { spec, tests, code },
      after: { spec, tests: new Map(), code },
      protectedTests: [],
      removedConstructs: [],
      propagatedFiles: [],
    });
    expect(report.violations).toEqual([{ kind: 'test_file_deleted', path: 'test/math.test.js' }]);
  });

  it('harness changes are violations restored to the recorded state, ahead of any other revert of the file', () => {
    const report = guard(
      { 'test/math.test.js': `${USER_TEST}// touched\n` },
      {
        harness: {
          changed: [
            {
              label: 'test/math.test.js',
              path: 'test/math.test.js',
              part: { kind: 'file' },
              sha256: 'x',
              why: 'named by `node --test test/math.test.js`',
            },
          ],
          restore: [{ path: 'test/math.test.js', text: 'RECORDED' }],
        },
      },
    );
    expect(report.violations).toMatchObject([{ kind: 'harness_changed', label: 'test/math.test.js' }]);
    expect(report.reverts).toEqual([{ kind: 'restore_text', path: 'test/math.test.js', text: 'RECORDED' }]);
  });
});

describe('counts', () => {
  it('markers: options, rust and python skips', () => {
    expect(countTestMarkers("test('a', { todo: true }, () => {}); test('b', { skip: false }, f)")).toEqual({
      skip: 0,
      only: 0,
      todo: 1,
    });
    expect(countTestMarkers('#[test]\n#[ignore]\nfn a() {}\npytest.skip("no")\nt.Skip()')).toMatchObject({
      skip: 3,
    });
  });

  it('strength: trivial assertions do not count', () => {
    expect(
      testStrength(
        "it('a', () => { expect(add(1)).toBe(2); expect(true).toBe(true); expect(1).toEqual(1); })",
      ),
    ).toEqual({ cases: 1, assertions: 1 });
    expect(testStrength('def test_a():\n    assert True\n\ndef test_b():\n    assert f() == 1\n')).toEqual({
      cases: 2,
      assertions: 1,
    });
    expect(testStrength('func TestA(t *testing.T) {\n  if f() != 1 { t.Errorf("x") }\n}\n')).toEqual({
      cases: 1,
      assertions: 1,
    });
    expect(testStrength('#[test]\nfn a() { assert_eq!(f(), 1); assert!(true); }\n')).toEqual({
      cases: 1,
      assertions: 1,
    });
  });

  it('suppressions', () => {
    expect(
      countSuppressions(
        '// eslint-disable-next-line\n/* istanbul ignore next */\nx = 1  # type: ignore\n/* c8 ignore start */',
      ),
    ).toBe(4);
    expect(countSuppressions('const eslint = 1; // disable nothing')).toBe(0);
  });
});
