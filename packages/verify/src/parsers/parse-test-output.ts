import type { ParsedTestOutput, TestReportRequest } from '../test-run.js';
import { parseGoTestJson } from './parse-go-test-json.js';
import { parseJestJson } from './parse-jest-json.js';
import { parseJunitXml } from './parse-junit-xml.js';
import {
  parseCargoSummary,
  parseGoVerbose,
  parseJestSummary,
  parseMochaSummary,
  parseNodeSpecSummary,
  parsePytestSummary,
  parseVitestSummary,
} from './parse-summary-lines.js';
import { parseTap } from './parse-tap.js';
import type { OutputParser, PartialCounts } from './parser-types.js';
import { stripAnsi } from './strip-ansi.js';

/** A machine-readable report the runner wrote, with its format. */
export interface TestReport {
  readonly format: TestReportRequest['format'];
  readonly text: string;
}

const TEXT_PARSERS: readonly OutputParser[] = [
  parseTap,
  parseNodeSpecSummary,
  parseVitestSummary,
  parseJestSummary,
  parsePytestSummary,
  parseCargoSummary,
  parseMochaSummary,
  parseGoVerbose,
];

/**
 * Turns a test run's output into counts. A machine-readable report wins when it parses; then `go test -json`
 * events (exclusive: they wrap all other text); otherwise every runner's closing lines found in the output are
 * summed (a script may run several runners), and the parser names are joined with `+`. When nothing matches the
 * counts are `unknown` with the reason — never guessed.
 */
export function parseTestOutput(output: string, report?: TestReport): ParsedTestOutput {
  const fromReport = report === undefined ? undefined : parseReport(report);
  if (fromReport !== undefined) return known([fromReport]);
  const text = stripAnsi(output);
  const goJson = parseGoTestJson(text);
  if (goJson !== undefined) return known([goJson]);
  const found = TEXT_PARSERS.flatMap((parser) => {
    const result = parser(text);
    return result === undefined ? [] : [result];
  });
  if (found.length > 0) return known(found);
  const reason =
    report === undefined
      ? 'no known test runner summary in the output'
      : `the ${report.format} report could not be read and no known test runner summary is in the output`;
  return { counts: { kind: 'unknown', reason }, cases: [] };
}

function parseReport(report: TestReport): PartialCounts | undefined {
  return report.format === 'junit' ? parseJunitXml(report.text) : parseJestJson(report.text);
}

function known(parts: readonly PartialCounts[]): ParsedTestOutput {
  const sum = (key: 'passed' | 'failed' | 'skipped') => parts.reduce((total, part) => total + part[key], 0);
  return {
    counts: {
      kind: 'known',
      passed: sum('passed'),
      failed: sum('failed'),
      skipped: sum('skipped'),
      parser: parts.map((part) => part.parser).join('+'),
    },
    cases: parts.flatMap((part) => part.cases),
  };
}
