import { describe, expect, it } from 'vitest';
import { classifyRedCheck, testHasAssertion } from './red-check.js';
import type { ObservedTestRun } from './worker-ports.js';

const SOURCE = `import { it, expect } from 'vitest';
describe('Borrow', () => {
  it('Borrow: marks the tool out', () => {
    expect(borrow(tool).status).toBe('out');
  });
  it('Borrow: refuses a tool that is out', () => {
    borrow(tool);
  });
  it('Borrow: creates a borrowing', () => {
    expect(borrowings()).toHaveLength(1);
  });
});
`;

const run: ObservedTestRun = {
  collected: true,
  exitCode: 1,
  cases: [
    { name: 'Borrow > Borrow: marks the tool out', status: 'failed', message: 'expected out' },
    { name: 'Borrow > Borrow: refuses a tool that is out', status: 'passed' },
    { name: 'Borrow Borrow: creates a borrowing', status: 'passed' },
    { name: 'Borrow later', status: 'skipped' },
  ],
};
const runs = new Map([['test/borrow.test.ts', run]]);
const sources = new Map([['test/borrow.test.ts', SOURCE]]);

describe('testHasAssertion', () => {
  it('finds the block of a test by its title and looks for an assertion in it', () => {
    expect(testHasAssertion(SOURCE, 'Borrow: marks the tool out')).toBe(true);
    expect(testHasAssertion(SOURCE, 'Borrow > Borrow: refuses a tool that is out')).toBe(false);
    expect(testHasAssertion(SOURCE, 'Borrow Borrow: creates a borrowing')).toBe(true);
    expect(testHasAssertion(SOURCE, 'something else entirely')).toBeUndefined();
  });
});

describe('classifyRedCheck', () => {
  it('spec-first: carries only red tests into implement and routes green ones back', () => {
    const report = classifyRedCheck('spec-first', runs, sources);
    expect(report.verdicts.map((v) => [v.classification, v.route])).toEqual([
      ['red', undefined],
      ['vacuous', 'propagate'],
      ['already_covered', 'tend'],
      ['skipped', 'propagate'],
    ]);
    expect(report.carryIntoImplement).toEqual(['Borrow > Borrow: marks the tool out']);
    expect(report.routed).toHaveLength(3);
  });

  it('code-first: passing is the goal, failing tests go to weed', () => {
    const report = classifyRedCheck('code-first', runs, sources);
    expect(report.verdicts.map((v) => [v.classification, v.route])).toEqual([
      ['diverges', 'weed'],
      ['green', undefined],
      ['green', undefined],
      ['skipped', 'propagate'],
    ]);
    expect(report.carryIntoImplement).toEqual([]);
  });
});
