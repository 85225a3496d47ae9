import type { TestCase } from '../test-run.js';
import type { PartialCounts } from './parser-types.js';

interface GoEvent {
  readonly Action?: unknown;
  readonly Package?: unknown;
  readonly Test?: unknown;
}

/**
 * Reads `go test -json` output (one JSON event a line): every `pass`/`fail`/`skip` event that names a `Test`
 * (subtests included, as `Parent/Sub`) is one case. `undefined` unless most non-blank lines are such events.
 */
export function parseGoTestJson(text: string): PartialCounts | undefined {
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  const events = lines.flatMap((line) => {
    const event = parseEvent(line);
    return event === undefined ? [] : [event];
  });
  if (events.length === 0 || events.length * 2 < lines.length) return undefined;
  const cases: TestCase[] = [];
  for (const event of events) {
    if (typeof event.Test !== 'string') {
      // A package that failed with no failing test in it did not build (or its test binary did not start).
      const pkg = String(event.Package);
      if (
        event.Action === 'fail' &&
        !cases.some((c) => c.status === 'failed' && c.name.startsWith(`${pkg}.`))
      )
        cases.push({ name: `${pkg} (build failed)`, status: 'failed', loadError: true });
      continue;
    }
    const status =
      event.Action === 'pass'
        ? 'passed'
        : event.Action === 'fail'
          ? 'failed'
          : event.Action === 'skip'
            ? 'skipped'
            : undefined;
    if (status !== undefined) cases.push({ name: `${String(event.Package)}.${event.Test}`, status });
  }
  const count = (status: TestCase['status']) => cases.filter((testCase) => testCase.status === status).length;
  return {
    parser: 'go-test-json',
    passed: count('passed'),
    failed: count('failed'),
    skipped: count('skipped'),
    cases,
  };
}

function parseEvent(line: string): GoEvent | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const value = JSON.parse(line) as GoEvent;
    return typeof value.Action === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}
