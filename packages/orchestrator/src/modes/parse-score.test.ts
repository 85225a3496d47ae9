import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isImprovement, parseScore, reachesTarget } from './parse-score.js';

describe('parseScore', () => {
  it.each([
    ['score: 41\nscore: 45\n', 'score: (\\S+)', 45],
    ['accuracy=0.913', 'accuracy=([0-9.]+)', 0.913],
    ['coverage 87.5%', 'coverage (\\S+)', 87.5],
    ['loss -1.5e-3 done', 'loss (\\S+)', -0.0015],
    ['42', '\\d+', 42],
    ['score: n/a', 'score: (\\S+)', undefined],
    ['nothing here', 'score: (\\S+)', undefined],
  ])('reads %j with /%s/ as %s', (output, pattern, expected) => {
    expect(parseScore(output, pattern)).toBe(expected);
  });

  it('reads back any finite number it is given', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (value) => {
        expect(parseScore(`progress\nSCORE ${String(value)}\n`, 'SCORE (\\S+)')).toBe(
          value === 0 ? 0 : value,
        );
      }),
      { numRuns: 200 },
    );
  });

  it('rejects an invalid pattern', () => {
    expect(() => parseScore('x', '(')).toThrow(SyntaxError);
  });
});

describe('isImprovement and reachesTarget', () => {
  it('compares in the climb direction', () => {
    expect(isImprovement(5, 4, 'max')).toBe(true);
    expect(isImprovement(4, 4, 'max')).toBe(false);
    expect(isImprovement(3, 4, 'min')).toBe(true);
    expect(isImprovement(undefined, null, 'max')).toBe(false);
    expect(isImprovement(1, null, 'min')).toBe(true);
    expect(reachesTarget(90, 90, 'max')).toBe(true);
    expect(reachesTarget(91, 90, 'min')).toBe(false);
    expect(reachesTarget(null, 90, 'max')).toBe(false);
  });
});
