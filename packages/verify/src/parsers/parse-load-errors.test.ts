import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseTestOutput, type TestReport } from './parse-test-output.js';

const fixture = (name: string) =>
  readFileSync(new URL(`./fixtures/load-errors/${name}`, import.meta.url), 'utf8');

/**
 * A test file the runner cannot load (it imports a name not written yet) is a failing test, never "no tests":
 * real output of node 20, vitest 4, pytest 9 and cargo here; hand-written samples for jest and go (not
 * installed). Mocha prints only the error, with no summary: the counts stay unknown and the worker's runner
 * treats the files as not loaded (see create-test-runner.test.ts).
 */
describe('a test file that cannot be loaded is a failed case, for every runner we parse', () => {
  it.each<[string, string, TestReport | undefined, string]>([
    ['node:test (TAP, real)', fixture('node-tap.txt'), undefined, 'tally.test.js'],
    ['vitest (JSON reporter, real)', '', { format: 'jest-json', text: fixture('vitest.json') }, 'v.test.js'],
    ['vitest (summary, real)', fixture('vitest-summary.txt'), undefined, 'test/v.test.js'],
    ['jest (JSON, sample)', '', { format: 'jest-json', text: fixture('jest.json') }, 'test/tally.test.js'],
    ['jest (summary, sample)', fixture('jest-summary.txt'), undefined, 'test/tally.test.js'],
    [
      'pytest (JUnit XML, real)',
      '',
      { format: 'junit', text: fixture('pytest-junit.xml') },
      'tests.test_tally',
    ],
    ['pytest (summary, real)', fixture('pytest-summary.txt'), undefined, 'tests/test_tally.py'],
    ['go test -json (sample)', fixture('go.jsonl'), undefined, 'example.com/tally'],
    ['go test -v (sample)', fixture('go-verbose.txt'), undefined, 'example.com/tally'],
    ['cargo test (real)', fixture('cargo.txt'), undefined, 'tally'],
  ])('%s', (_runner, output, report, name) => {
    const parsed = parseTestOutput(output, report);
    expect(parsed.counts).toMatchObject({ kind: 'known', passed: 0, failed: 1 });
    const failed = parsed.cases.filter((c) => c.status === 'failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ status: 'failed', loadError: true });
    expect(failed[0]!.name).toContain(name);
  });

  it('names the cause where the runner prints it', () => {
    const vitest = parseTestOutput('', { format: 'jest-json', text: fixture('vitest.json') });
    expect(vitest.cases[0]?.message).toContain("Cannot find module '../src/tally.js'");
    const jest = parseTestOutput(fixture('jest-summary.txt'));
    expect(jest.cases[0]?.message).toContain("Cannot find module '../src/tally'");
    expect(
      parseTestOutput('', { format: 'junit', text: fixture('pytest-junit.xml') }).cases[0]?.message,
    ).toBe('collection failure');
    expect(parseTestOutput(fixture('cargo.txt')).cases[0]?.message).toContain('unresolved import');
  });

  it('mocha: no summary, so the counts stay unknown (never "0 tests")', () => {
    expect(parseTestOutput(fixture('mocha.txt')).counts.kind).toBe('unknown');
  });
});
