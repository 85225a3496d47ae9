import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fingerprint } from './fingerprint.js';
import type { Observation } from './observation.js';

const base: Observation = {
  tests: { counts: 'known', passed: 14, failed: 3, skipped: 0, failing: ['a', 'b', 'c'], exitCode: 1 },
  weed: { status: 'dirty', divergences: 2 },
  structuralErrors: 0,
  openQuestions: { blocking: 0, parked: 1 },
};

describe('fingerprint', () => {
  it('renders the progress measures in a fixed order', () => {
    expect(fingerprint(base)).toBe('tests 14/3/0 · weed 2 · q 0/1 · errors 0 · distill -');
    expect(
      fingerprint({
        ...base,
        tests: { counts: 'unknown', exitCode: null, timedOut: true },
        weed: { status: 'not_run' },
        distillNew: 0,
      }),
    ).toBe('tests unknown(timeout) · weed not_run · q 0/1 · errors 0 · distill 0');
  });

  it('ignores which tests fail when the counts are the same', () => {
    const other: Observation = {
      ...base,
      tests: { ...base.tests, failing: ['x', 'y', 'z'] } as Observation['tests'],
    };
    expect(fingerprint(other)).toBe(fingerprint(base));
  });

  const variants: [string, Observation][] = [
    ['passed', { ...base, tests: { ...base.tests, passed: 15 } as Observation['tests'] }],
    ['failed', { ...base, tests: { ...base.tests, failed: 2 } as Observation['tests'] }],
    ['skipped', { ...base, tests: { ...base.tests, skipped: 1 } as Observation['tests'] }],
    ['weed', { ...base, weed: { status: 'clean' } }],
    ['blocking', { ...base, openQuestions: { blocking: 1, parked: 1 } }],
    ['parked', { ...base, openQuestions: { blocking: 0, parked: 0 } }],
    ['errors', { ...base, structuralErrors: 1 }],
    ['distill', { ...base, distillNew: 0 }],
  ];
  it.each(variants)('changes when %s changes', (_name, changed) => {
    expect(fingerprint(changed)).not.toBe(fingerprint(base));
  });

  it('is injective over the counted measures (property)', () => {
    const observation = fc.record({
      passed: fc.nat(50),
      failed: fc.nat(50),
      divergences: fc.nat(5),
      blocking: fc.nat(5),
      errors: fc.nat(5),
    });
    const build = (o: {
      passed: number;
      failed: number;
      divergences: number;
      blocking: number;
      errors: number;
    }): Observation => ({
      tests: { counts: 'known', passed: o.passed, failed: o.failed, skipped: 0, failing: [], exitCode: 0 },
      weed: { status: 'dirty', divergences: o.divergences },
      structuralErrors: o.errors,
      openQuestions: { blocking: o.blocking, parked: 0 },
    });
    fc.assert(
      fc.property(
        observation,
        observation,
        (a, b) =>
          (fingerprint(build(a)) === fingerprint(build(b))) === (JSON.stringify(a) === JSON.stringify(b)),
      ),
      { numRuns: 300 },
    );
  });
});
