import type { LoopMode } from './phase-context.js';
import type { ObservedTestRun } from './worker-ports.js';

/**
 * How one new test behaved before implementation. Spec-first: `red` is the goal; `already_covered` (green, with
 * assertions: existing code already does it) and `vacuous` (green, asserts nothing) are routed back. Code-first:
 * `green` is the goal; `diverges` (fails against existing code) is triaged. `skipped` is routed back in both.
 */
export type RedCheckClass = 'red' | 'already_covered' | 'vacuous' | 'green' | 'diverges' | 'skipped';

/** Where a test that is not the goal goes next. */
export type RedCheckRoute = 'propagate' | 'tend' | 'weed';

/** The classification of one new test. */
export interface RedCheckVerdict {
  readonly file: string;
  readonly test: string;
  readonly classification: RedCheckClass;
  /** Absent for tests that behaved as the mode expects. */
  readonly route?: RedCheckRoute;
  readonly message?: string;
}

/** The red-check over every new test of a propagate pass. */
export interface RedCheckReport {
  readonly mode: LoopMode;
  readonly verdicts: readonly RedCheckVerdict[];
  /** Tests the implement phase may work on: spec-first, the red ones; code-first, none need implementing. */
  readonly carryIntoImplement: readonly string[];
  /** Verdicts routed back (everything not the mode's goal). */
  readonly routed: readonly RedCheckVerdict[];
}

const TEST_START = /\b(?:it|test|specify)(?:\.\w+)?\s*\(|\bdef test_\w+|\bfunc Test\w+/g;
const ASSERTION = /\b(?:expect|assert\w*|should|fc\.assert|t\.(?:Error|Fatal|Fail)\w*)\b/;

function titleCandidates(name: string): string[] {
  const parts = name.split(/\s+>\s+/);
  const last = parts[parts.length - 1]!;
  const words = last.split(' ');
  // Runners join describe blocks and titles with spaces or ` > `; try the name, then ever shorter tails.
  const tails = words.slice(1, -2).map((_, i) => words.slice(i + 1).join(' '));
  return [name, last, ...tails].filter((t) => t.length >= 3);
}

/**
 * Whether the test titled `name` asserts anything, judged from its source: the text from its title to the next
 * test declaration must contain an assertion (`expect`, `assert…`, `should`, `t.Error…`). `undefined` when the
 * title cannot be found in the source.
 */
export function testHasAssertion(source: string, name: string): boolean | undefined {
  for (const title of titleCandidates(name)) {
    const at = source.indexOf(title);
    if (at < 0) continue;
    TEST_START.lastIndex = at + title.length;
    const next = TEST_START.exec(source);
    return ASSERTION.test(source.slice(at + title.length, next === null ? source.length : next.index));
  }
  return undefined;
}

function classify(
  mode: LoopMode,
  status: 'passed' | 'failed' | 'skipped',
  hasAssertion: boolean | undefined,
): { classification: RedCheckClass; route?: RedCheckRoute } {
  if (status === 'skipped') return { classification: 'skipped', route: 'propagate' };
  if (mode === 'code-first') {
    return status === 'passed' ? { classification: 'green' } : { classification: 'diverges', route: 'weed' };
  }
  if (status === 'failed') return { classification: 'red' };
  return hasAssertion === false
    ? { classification: 'vacuous', route: 'propagate' }
    : { classification: 'already_covered', route: 'tend' };
}

/**
 * Classifies every new test from the engine's run of each new test file on its own. Spec-first: a test already
 * green is `vacuous` when its source has no assertion (back to propagate to write a real one), otherwise
 * `already_covered` (back to tend: the spec change may restate behaviour the code has); neither is carried into
 * implement. Code-first inverts: passing is the goal, a failing test is triaged by weed. Pure.
 */
export function classifyRedCheck(
  mode: LoopMode,
  runs: ReadonlyMap<string, ObservedTestRun>,
  sources: ReadonlyMap<string, string>,
): RedCheckReport {
  const verdicts: RedCheckVerdict[] = [];
  for (const [file, run] of runs) {
    for (const test of run.cases) {
      const asserts =
        test.status === 'passed' ? testHasAssertion(sources.get(file) ?? '', test.name) : undefined;
      const { classification, route } = classify(mode, test.status, asserts);
      verdicts.push({
        file,
        test: test.name,
        classification,
        ...(route === undefined ? {} : { route }),
        ...(test.message === undefined ? {} : { message: test.message }),
      });
    }
  }
  return {
    mode,
    verdicts,
    carryIntoImplement: verdicts.filter((v) => v.classification === 'red').map((v) => v.test),
    routed: verdicts.filter((v) => v.route !== undefined),
  };
}
