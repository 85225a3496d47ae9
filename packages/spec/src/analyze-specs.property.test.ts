import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { analyzeSpecs } from './analyze-specs.js';
import { fixtureNames, readFixture } from './fixtures.test-helpers.js';

const FIXTURES = fixtureNames().map(readFixture);

/** analyzeSpecs must return a well-formed result: diagnostics with 1-based positions in the file. */
function assertTotal(text: string): void {
  const analysis = analyzeSpecs([{ path: 'p.allium', text }]);
  expect(Array.isArray(analysis.diagnostics)).toBe(true);
  for (const d of analysis.diagnostics) {
    expect(d.location.file).toBe('p.allium');
    expect(d.location.line).toBeGreaterThanOrEqual(1);
    expect(d.location.col).toBeGreaterThanOrEqual(1);
  }
  expect(Array.isArray(analysis.graph.edges)).toBe(true);
}

const mutatedFixture = fc
  .tuple(
    fc.constantFrom(...FIXTURES),
    fc.constantFrom('delete-lines', 'swap-tokens', 'truncate', 'duplicate-lines'),
    fc.array(fc.nat(), { minLength: 1, maxLength: 12 }),
  )
  .map(([text, mutation, picks]) => mutate(text, mutation, picks));

function mutate(text: string, mutation: string, picks: readonly number[]): string {
  if (mutation === 'truncate') return text.slice(0, (picks[0] ?? 0) % (text.length + 1));
  if (mutation === 'swap-tokens') {
    const tokens = text.split(/(\s+)/);
    for (let i = 0; i + 1 < picks.length; i += 2) {
      const a = (picks[i] ?? 0) % tokens.length;
      const b = (picks[i + 1] ?? 0) % tokens.length;
      [tokens[a], tokens[b]] = [tokens[b] ?? '', tokens[a] ?? ''];
    }
    return tokens.join('');
  }
  const lines = text.split('\n');
  for (const pick of picks) {
    const at = pick % Math.max(lines.length, 1);
    if (mutation === 'delete-lines') lines.splice(at, 1);
    else lines.splice(at, 0, lines[(pick * 7) % Math.max(lines.length, 1)] ?? '');
  }
  return lines.join('\n');
}

describe('analyzeSpecs is total', () => {
  it('never throws on random text', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 400 }), (text) => assertTotal(text)),
      { numRuns: 300 },
    );
  });

  it('never throws on random text made of Allium tokens', () => {
    const word = fc.constantFrom(
      'entity',
      'rule',
      'when',
      ':',
      'requires',
      'ensures',
      '{',
      '}',
      '(',
      ')',
      'Order',
      'order',
      '.',
      'status',
      '=',
      '|',
      'for',
      'in',
      'if',
      'else',
      'let',
      '\n',
      '    ',
      '"s"',
      '`b`',
      '3.days',
      'not',
      'exists',
      '->',
      '<',
      '>',
      'transitions',
      'terminal',
      'open',
      'question',
      '-- allium: 3',
      '-- allium-ignore all',
      'with',
      'where',
      ',',
    );
    fc.assert(
      fc.property(fc.array(word, { maxLength: 200 }), (words) => assertTotal(words.join(' '))),
      {
        numRuns: 300,
      },
    );
  });

  it('never throws on mutated fixtures (deleted lines, swapped tokens, truncation, duplicated lines)', () => {
    fc.assert(
      fc.property(mutatedFixture, (text) => assertTotal(text)),
      { numRuns: 150 },
    );
  });
});

describe('analyzeSpecs scales linearly', () => {
  const median = (values: number[]): number =>
    [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
  const time = (text: string): number =>
    median(
      [0, 1, 2].map(() => {
        const started = performance.now();
        analyzeSpecs([{ path: 'big.allium', text }]);
        return performance.now() - started;
      }),
    );

  it('8× the input costs under 20× the time (linear is 8×, quadratic 64×; generous for a shared machine)', () => {
    const unit = readFixture('comprehensive-edge-cases').replace(/^-- allium: 3\n/, '');
    const small = `-- allium: 3\n${unit.repeat(2)}`;
    const large = `-- allium: 3\n${unit.repeat(16)}`;
    time(small);
    const ratio = time(large) / time(small);
    expect(ratio).toBeLessThan(20);
  });
});
