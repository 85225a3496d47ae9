import { describe, expect, it } from 'vitest';
import { evaluateInvariant, type UnmetTermKind } from './evaluate-invariant.js';
import type { InvariantPolicy, Observation } from './observation.js';

const green: Observation = {
  tests: { counts: 'known', passed: 5, failed: 0, skipped: 0, failing: [], exitCode: 0 },
  weed: { status: 'clean' },
  structuralErrors: 0,
  openQuestions: { blocking: 0, parked: 0 },
};
const policy: InvariantPolicy = { strictQuestions: false, requireWeed: true, codeFirst: false };
const terms = (observation: Observation, over: Partial<InvariantPolicy> = {}): UnmetTermKind[] =>
  evaluateInvariant(observation, { ...policy, ...over }).unmet.map((unmet) => unmet.term);

describe('evaluateInvariant', () => {
  it('converges when every term holds', () => {
    expect(evaluateInvariant(green, policy)).toEqual({ converged: true, unmet: [] });
  });

  const cases: {
    name: string;
    observation: Observation;
    policy?: Partial<InvariantPolicy>;
    unmet: UnmetTermKind[];
  }[] = [
    {
      name: 'one failing test',
      observation: {
        ...green,
        tests: { ...green.tests, failed: 1, failing: ['a > b'] } as Observation['tests'],
      },
      unmet: ['tests_failing'],
    },
    {
      name: 'counts unknown with exit 0',
      observation: { ...green, tests: { counts: 'unknown', exitCode: 0, timedOut: false } },
      unmet: ['tests_unknown'],
    },
    {
      name: 'counts unknown after a timeout',
      observation: { ...green, tests: { counts: 'unknown', exitCode: null, timedOut: true } },
      unmet: ['tests_unknown'],
    },
    {
      name: 'no test ran',
      observation: {
        ...green,
        tests: { counts: 'known', passed: 0, failed: 0, skipped: 0, failing: [], exitCode: 0 },
      },
      unmet: ['tests_none'],
    },
    {
      name: 'all skipped',
      observation: {
        ...green,
        tests: { counts: 'known', passed: 0, failed: 0, skipped: 3, failing: [], exitCode: 0 },
      },
      unmet: ['tests_none'],
    },
    {
      name: 'zero failures but exit 1',
      observation: { ...green, tests: { ...green.tests, exitCode: 1 } as Observation['tests'] },
      unmet: ['tests_exit_code'],
    },
    {
      name: 'skipped tests beside passing ones are fine',
      observation: { ...green, tests: { ...green.tests, skipped: 2 } as Observation['tests'] },
      unmet: [],
    },
    {
      name: 'weed dirty',
      observation: { ...green, weed: { status: 'dirty', divergences: 1 } },
      unmet: ['weed_dirty'],
    },
    { name: 'weed not run', observation: { ...green, weed: { status: 'not_run' } }, unmet: ['weed_not_run'] },
    {
      name: 'weed not run, weed not required',
      observation: { ...green, weed: { status: 'not_run' } },
      policy: { requireWeed: false },
      unmet: [],
    },
    {
      name: 'weed dirty, weed not required',
      observation: { ...green, weed: { status: 'dirty', divergences: 4 } },
      policy: { requireWeed: false },
      unmet: [],
    },
    {
      name: 'one blocking question',
      observation: { ...green, openQuestions: { blocking: 1, parked: 0 } },
      unmet: ['questions_blocking'],
    },
    {
      name: 'parked questions allowed',
      observation: { ...green, openQuestions: { blocking: 0, parked: 2 } },
      unmet: [],
    },
    {
      name: 'parked questions under strict',
      observation: { ...green, openQuestions: { blocking: 0, parked: 1 } },
      policy: { strictQuestions: true },
      unmet: ['questions_parked'],
    },
    {
      name: 'strict with no parked question',
      observation: green,
      policy: { strictQuestions: true },
      unmet: [],
    },
    {
      name: 'one structural error',
      observation: { ...green, structuralErrors: 1 },
      unmet: ['structural_errors'],
    },
    {
      name: 'code-first without a distill pass',
      observation: green,
      policy: { codeFirst: true },
      unmet: ['distill_not_run'],
    },
    {
      name: 'code-first, distill found 1 new',
      observation: { ...green, distillNew: 1 },
      policy: { codeFirst: true },
      unmet: ['distill_new'],
    },
    {
      name: 'code-first, distill found nothing',
      observation: { ...green, distillNew: 0 },
      policy: { codeFirst: true },
      unmet: [],
    },
    {
      name: 'spec-first ignores distill findings',
      observation: { ...green, distillNew: 3 },
      unmet: [],
    },
    {
      name: 'every term at once, in order',
      observation: {
        tests: { counts: 'known', passed: 1, failed: 2, skipped: 0, failing: ['x', 'y'], exitCode: 1 },
        weed: { status: 'dirty', divergences: 2 },
        structuralErrors: 3,
        openQuestions: { blocking: 1, parked: 1 },
        distillNew: 1,
      },
      policy: { strictQuestions: true, codeFirst: true },
      unmet: [
        'tests_failing',
        'weed_dirty',
        'questions_blocking',
        'questions_parked',
        'structural_errors',
        'distill_new',
      ],
    },
  ];

  it.each(cases)('$name', ({ observation, policy: over, unmet }) => {
    expect(terms(observation, over)).toEqual(unmet);
    expect(evaluateInvariant(observation, { ...policy, ...over }).converged).toBe(unmet.length === 0);
  });

  it('names failing tests and counts in the message, eliding past five', () => {
    const failing = ['t1', 't2', 't3', 't4', 't5', 't6', 't7'];
    const [term] = evaluateInvariant(
      { ...green, tests: { counts: 'known', passed: 0, failed: 7, skipped: 0, failing, exitCode: 1 } },
      policy,
    ).unmet;
    expect(term).toMatchObject({ term: 'tests_failing', count: 7, names: failing });
    expect(term!.message).toBe('tests: 7 failing (t1, t2, t3, t4, t5, … 2 more)');
  });

  it('says counts unknown loudly, with the exit code', () => {
    const [term] = evaluateInvariant(
      { ...green, tests: { counts: 'unknown', exitCode: 0, timedOut: false } },
      policy,
    ).unmet;
    expect(term!.message).toContain('counts unknown (exit code 0)');
  });
});
