import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseTestOutput } from './parse-test-output.js';

const sample = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');

describe('parseTestOutput on hand-written samples (runners not installed here)', () => {
  it('jest text footer: counts and the failing test', () => {
    const parsed = parseTestOutput(sample('jest-output.txt'));
    expect(parsed.counts).toEqual({
      kind: 'known',
      passed: 4,
      failed: 1,
      skipped: 2,
      parser: 'jest-summary',
    });
    expect(parsed.cases).toEqual([{ name: 'cart › rejects an expired gift card', status: 'failed' }]);
  });

  it('jest JSON report: counts and every case', () => {
    const parsed = parseTestOutput('', { format: 'jest-json', text: sample('jest-report.json') });
    expect(parsed.counts).toEqual({ kind: 'known', passed: 4, failed: 1, skipped: 2, parser: 'jest-json' });
    expect(parsed.cases).toHaveLength(7);
    expect(parsed.cases[0]).toEqual({
      name: 'cart rejects an expired gift card',
      status: 'failed',
      message: 'Error: expect(received).toBe(expected)',
    });
  });

  it('go test -json events, ignoring the embedded verbose lines', () => {
    const parsed = parseTestOutput(sample('go-test.jsonl'));
    expect(parsed.counts).toEqual({
      kind: 'known',
      passed: 1,
      failed: 1,
      skipped: 1,
      parser: 'go-test-json',
    });
    expect(parsed.cases.find((testCase) => testCase.status === 'failed')?.name).toBe(
      'example.com/cart.TestExpired',
    );
  });

  it('go test -v lines', () => {
    expect(parseTestOutput(sample('go-test-verbose.txt')).counts).toEqual({
      kind: 'known',
      passed: 1,
      failed: 1,
      skipped: 1,
      parser: 'go-test-verbose',
    });
  });

  it('mocha footer', () => {
    expect(parseTestOutput(sample('mocha-output.txt')).counts).toEqual({
      kind: 'known',
      passed: 1,
      failed: 1,
      skipped: 1,
      parser: 'mocha-summary',
    });
  });
});

describe('parseTestOutput degrades loudly', () => {
  it.each([
    ['empty output', ''],
    // A compiler error (`error: could not compile …`) is a failed load error: see parse-load-errors.test.ts.
    ['make chatter', 'make: *** [Makefile:3: test] Error 1'],
    ['plain go test', 'ok  \texample.com/cart\t0.004s\n'],
  ])('%s → counts unknown', (_name, text) => {
    const parsed = parseTestOutput(text);
    expect(parsed.counts.kind).toBe('unknown');
    expect(parsed.cases).toEqual([]);
  });

  it('a report that cannot be read, with no summary in the output → unknown, saying so', () => {
    const parsed = parseTestOutput('boom', { format: 'junit', text: 'not xml' });
    expect(parsed.counts).toEqual({
      kind: 'unknown',
      reason: 'the junit report could not be read and no known test runner summary is in the output',
    });
  });

  it('a report that cannot be read falls back to the closing line', () => {
    const parsed = parseTestOutput('==== 2 passed in 0.01s ====\n', { format: 'junit', text: '' });
    expect(parsed.counts).toMatchObject({ kind: 'known', passed: 2, parser: 'pytest-summary' });
  });
});

describe('parseTestOutput closing lines', () => {
  it('sums the footers of several packages and of several runners', () => {
    const text = [
      '      Tests  3 passed (3)',
      '      Tests  1 failed | 2 passed | 1 todo (4)',
      '=== 1 failed, 2 passed, 1 skipped, 1 error, 1 xfailed, 3 warnings in 0.50s ===',
    ].join('\n');
    expect(parseTestOutput(text).counts).toEqual({
      kind: 'known',
      passed: 7,
      failed: 3,
      skipped: 3,
      parser: 'vitest-summary+pytest-summary',
    });
  });

  it('strips colour before matching', () => {
    const text =
      '\u001b[2m      Tests \u001b[22m \u001b[1m\u001b[32m5 passed\u001b[39m\u001b[22m\u001b[90m (5)\u001b[39m';
    expect(parseTestOutput(text).counts).toMatchObject({ kind: 'known', passed: 5, failed: 0 });
  });

  it('pytest "no tests ran" is a known zero', () => {
    expect(parseTestOutput('=== no tests ran in 0.01s ===').counts).toEqual({
      kind: 'known',
      passed: 0,
      failed: 0,
      skipped: 0,
      parser: 'pytest-summary',
    });
  });

  it('plain TAP without node summary lines counts its cases', () => {
    const parsed = parseTestOutput('TAP version 13\nok 1 - a\nnot ok 2 - b\nok 3 - c # SKIP later\n1..3\n');
    expect(parsed.counts).toMatchObject({ kind: 'known', passed: 1, failed: 1, skipped: 1, parser: 'tap' });
  });
});
