import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { analyzeSpecs } from './analyze-specs.js';
import { parseSpec } from './parse-spec.js';
import { analyseFindings, checkReports } from './reports.js';
import { indexSpec } from './spec-index.js';
import { fixtureNames, readFixture } from './fixtures.test-helpers.js';
import { perUnitCpuRatio } from './linearity.test-helpers.js';

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
  // Only a guard against a superlinear step (a quadratic one would make the ratio about 8).
  const analyze = (text: string) => () => analyzeSpecs([{ path: 'big.allium', text }]);

  it('8× the input costs about 8× the CPU time, not 64×', () => {
    const unit = readFixture('comprehensive-edge-cases').replace(/^-- allium: 3\n/, '');
    const small = analyze(`-- allium: 3\n${unit.repeat(4)}`);
    const large = analyze(`-- allium: 3\n${unit.repeat(32)}`);
    expect(perUnitCpuRatio(small, large, 8, 8)).toBeLessThan(4);
  });
});

describe('spec analyse scales linearly on shapes that once did not', () => {
  // The same CPU-time comparison (perUnitCpuRatio), on many copies of a small unit, sized so that a step quadratic
  // in the number of units dominates the large input. Each shape below was quadratic once: an annotation counted
  // lines from the top of the file to find its body (timed: the whole of `spec analyse`); conflict findings compared
  // every pair of rules (timed: the findings of an indexed spec, where that step is most of the work); after a
  // look-ahead to the end of the file (an unclosed parenthesis) the parser moved every token lexed ahead at each
  // declaration (timed: `spec check`). 16× the units must cost well under 64× the CPU time; against the old code
  // the ratio was over 9×, over 6× and a minutes-long run.
  const header = '-- allium: 3\nentity Invitation {\n  status: pending | sent\n}\n';
  const SHAPES: Record<string, { unit: string; step: (text: string) => () => unknown; prefix?: string }> = {
    'a rule with an annotation (spec analyse)': {
      unit: 'rule R {\n  when: Go()\n  ensures: Done()\n  @guidance\n    -- off-peak only\n}\n',
      step: (text) => () => checkReports([{ path: 'many.allium', text }], 'analyse'),
    },
    'a rule that sets a status and requires none (analyse findings)': {
      unit: 'rule R {\n  when: i: Invitation.created\n  ensures: i.status = sent\n}\n',
      step: (text) => {
        const index = indexSpec(parseSpec(text, 'many.allium'));
        return () => analyseFindings(index);
      },
    },
    'declarations after an unclosed parenthesis (spec check)': {
      prefix: 'entity Broken {\n  f(x\n}\n',
      unit: 'rule R {\n  when: Go()\n  ensures: Done()\n}\n',
      step: (text) => () => checkReports([{ path: 'many.allium', text }], 'check'),
    },
  };

  it.each(Object.entries(SHAPES))(
    '%s, 16× the copies: about 16× the CPU time, not 256×',
    (_, { unit, step, prefix = '' }) => {
      const small = step(header + prefix + unit.repeat(1_000));
      const large = step(header + prefix + unit.repeat(16_000));
      expect(perUnitCpuRatio(small, large, 16, 4)).toBeLessThan(4);
    },
  );
});
