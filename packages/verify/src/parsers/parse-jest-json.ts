import type { TestCase } from '../test-run.js';
import type { PartialCounts } from './parser-types.js';

interface AssertionResult {
  readonly fullName?: unknown;
  readonly title?: unknown;
  readonly status?: unknown;
  readonly failureMessages?: unknown;
}

/**
 * Reads the JSON document of jest's `--json` reporter and vitest's `json` reporter (vitest writes jest's
 * shape): `numPassedTests`, `numFailedTests`, `numPendingTests` + `numTodoTests`, and per test `fullName` and
 * `status`. Returns `undefined` when the text is not such a document.
 */
export function parseJestJson(text: string): PartialCounts | undefined {
  let document: Record<string, unknown>;
  try {
    document = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const {
    numPassedTests: passed,
    numFailedTests: failed,
    numPendingTests: pending,
    numTodoTests: todo,
  } = document;
  if (typeof passed !== 'number' || typeof failed !== 'number') return undefined;
  const skipped = (typeof pending === 'number' ? pending : 0) + (typeof todo === 'number' ? todo : 0);
  const cases = jestCases(document['testResults']);
  const unloaded = cases.filter((c) => c.loadError === true).length;
  return { parser: 'jest-json', passed, failed: failed + unloaded, skipped, cases };
}

interface FileResult {
  readonly assertionResults?: unknown;
  readonly status?: unknown;
  readonly message?: unknown;
  readonly name?: unknown;
}

// A file whose suite failed without running a test could not be loaded (jest: "Test suite failed to run").
function jestCases(testResults: unknown): TestCase[] {
  if (!Array.isArray(testResults)) return [];
  return testResults.flatMap((file: FileResult): TestCase[] => {
    const assertions = Array.isArray(file.assertionResults) ? file.assertionResults : [];
    if (assertions.length > 0 || file.status !== 'failed') return assertions.map(toCase);
    const message = typeof file.message === 'string' ? loadMessage(file.message) : '';
    return [
      {
        name: String(file.name),
        status: 'failed',
        loadError: true,
        ...(message === '' ? {} : { message }),
      },
    ];
  });
}

function loadMessage(text: string): string {
  return (
    text
      .split('\n')
      .map((line) => line.trim())
      .find((line) => line !== '' && !line.startsWith('●')) ?? ''
  );
}

function toCase(result: AssertionResult): TestCase {
  const name = typeof result.fullName === 'string' ? result.fullName : String(result.title);
  const status = result.status === 'passed' ? 'passed' : result.status === 'failed' ? 'failed' : 'skipped';
  const messages = Array.isArray(result.failureMessages) ? (result.failureMessages as unknown[]) : [];
  const first = messages[0];
  return typeof first === 'string' && status === 'failed'
    ? { name, status, message: firstLine(first) }
    : { name, status };
}

function firstLine(text: string): string {
  return text.split('\n', 1)[0] ?? '';
}
