import type { TestCase } from '../test-run.js';
import { toInt, type PartialCounts } from './parser-types.js';

const RESULT = /^( *)(not )?ok \d+(?: - (.*?))?(?: # (SKIP|TODO)\b.*)?$/i;
const SUBTEST = /^( *)# Subtest: (.*)$/;
const SUMMARY = /^# (pass|fail|skipped|todo|cancelled) (\d+)$/gm;

/**
 * Reads TAP as node:test prints it (`node --test`, and `--test-reporter=tap`): the closing `# pass N`,
 * `# fail N`, `# skipped N`, `# todo N`, `# cancelled N` lines give the counts (cancelled counts as failed, todo as
 * skipped); every `ok`/`not ok` line gives a case, named after its `# Subtest:` ancestors joined by ` > `.
 * Without node's summary lines (plain TAP), the cases are counted instead. `undefined` when the text is not TAP.
 */
export function parseTap(text: string): PartialCounts | undefined {
  const cases = tapCases(text);
  const summary = new Map<string, number>();
  for (const match of text.matchAll(SUMMARY)) summary.set(match[1]!, toInt(match[2]));
  if (summary.has('pass') && summary.has('fail')) {
    return {
      parser: 'tap',
      passed: summary.get('pass')!,
      failed: summary.get('fail')! + (summary.get('cancelled') ?? 0),
      skipped: (summary.get('skipped') ?? 0) + (summary.get('todo') ?? 0),
      cases,
    };
  }
  if (!/^1\.\.\d+$/m.test(text) || cases.length === 0) return undefined;
  const count = (status: TestCase['status']) => cases.filter((testCase) => testCase.status === status).length;
  return {
    parser: 'tap',
    passed: count('passed'),
    failed: count('failed'),
    skipped: count('skipped'),
    cases,
  };
}

function tapCases(text: string): TestCase[] {
  const ancestors: string[] = [];
  const cases: TestCase[] = [];
  for (const line of text.split('\n')) {
    const subtest = SUBTEST.exec(line);
    if (subtest !== null) {
      const depth = Math.floor(subtest[1]!.length / 4);
      ancestors.length = depth;
      ancestors[depth] = subtest[2]!;
      continue;
    }
    const result = RESULT.exec(line);
    if (result === null) continue;
    const depth = Math.floor(result[1]!.length / 4);
    const name = [...ancestors.slice(0, depth), result[3] ?? ''].join(' > ');
    const status = result[4] !== undefined ? 'skipped' : result[2] !== undefined ? 'failed' : 'passed';
    // node --test reports a file it could not load as one failing top-level "test" named after the file.
    const file = depth === 0 && status === 'failed' && /\.[cm]?[jt]sx?$/.test(name) && !name.includes(' ');
    cases.push(file ? { name, status, loadError: true } : { name, status });
  }
  return cases;
}
