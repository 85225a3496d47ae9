import type { TestCase } from '../test-run.js';
import type { PartialCounts } from './parser-types.js';

const TESTCASE = /<testcase\b([^>]*?)(\/>|>([\s\S]*?)<\/testcase>)/g;
const ATTRIBUTE = /([\w:.-]+)\s*=\s*("([^"]*)"|'([^']*)')/g;

/**
 * Reads a JUnit XML report (pytest `--junitxml`, Maven Surefire, Gradle, jest-junit): one case per
 * `<testcase>`, failed when it holds `<failure>` or `<error>`, skipped when it holds `<skipped>`. The name is
 * `classname::name`. Returns `undefined` when the text holds no `<testcase>` and no `<testsuite>`.
 */
export function parseJunitXml(text: string): PartialCounts | undefined {
  if (!/<testsuites?\b/.test(text) && !/<testcase\b/.test(text)) return undefined;
  const cases: TestCase[] = [];
  for (const match of text.matchAll(TESTCASE)) {
    const attributes = readAttributes(match[1] ?? '');
    const body = match[3] ?? '';
    const name = [attributes['classname'], attributes['name']]
      .filter((part) => part !== undefined && part !== '')
      .join('::');
    const testCase = classify(name, body);
    // pytest reports a module it could not import as a case with an empty classname and a collection failure.
    const loadError =
      testCase.status === 'failed' &&
      (testCase.message === 'collection failure' ||
        (attributes['classname'] === '' && /<error\b/.test(body)));
    cases.push(loadError ? { ...testCase, loadError: true } : testCase);
  }
  const count = (status: TestCase['status']) => cases.filter((testCase) => testCase.status === status).length;
  return {
    parser: 'junit-xml',
    passed: count('passed'),
    failed: count('failed'),
    skipped: count('skipped'),
    cases,
  };
}

function classify(name: string, body: string): TestCase {
  const failure = /<(failure|error)\b([^>]*)/.exec(body);
  if (failure !== null) {
    const message = readAttributes(failure[2] ?? '')['message'];
    return message === undefined ? { name, status: 'failed' } : { name, status: 'failed', message };
  }
  if (/<skipped\b/.test(body)) return { name, status: 'skipped' };
  return { name, status: 'passed' };
}

function readAttributes(source: string): Record<string, string> {
  const attributes: Record<string, string> = {};
  for (const match of source.matchAll(ATTRIBUTE)) {
    attributes[match[1]!] = unescapeXml(match[3] ?? match[4] ?? '');
  }
  return attributes;
}

function unescapeXml(value: string): string {
  return value
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&#(\d+);/g, (_all, code: string) => String.fromCodePoint(Number(code)))
    .replace(/&amp;/g, '&');
}
