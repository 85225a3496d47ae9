import { describe, expect, it } from 'vitest';
import { MAX_NESTING } from './parser-state.js';
import { analyzeSpecs } from './analyze-specs.js';
import { readFixture } from './fixtures.test-helpers.js';
import { perUnitCpuRatio } from './linearity.test-helpers.js';
import { checkReports, modelReport, planReport, referenceJson } from './reports.js';

const rule = (requires: string): string =>
  `-- allium: 3\nrule R {\n  when: Go(x)\n  requires: ${requires}\n  ensures: Done()\n}\n`;

/** Hostile shapes of size `n`: deep nesting of every bracket kind, long operator chains, a long single line. */
const SHAPES: Record<string, (n: number) => string> = {
  parentheses: (n) => rule(`${'('.repeat(n)}x${')'.repeat(n)}`),
  calls: (n) => rule(`${'f('.repeat(n)}x${')'.repeat(n)}`),
  sets: (n) => rule(`${'{'.repeat(n)}x${'}'.repeat(n)}`),
  lists: (n) => rule(`${'['.repeat(n)}x${']'.repeat(n)}`),
  negations: (n) => rule(`${'not '.repeat(n)}x`),
  chain: (n) => rule(`x${' and x.a'.repeat(n)}`),
  blocks: (n) => `-- allium: 3\n${'entity A {\n'.repeat(n)}${'}\n'.repeat(n)}`,
  unclosed: (n) => `-- allium: 3\n${'rule R { when: Go(x) requires: ('.repeat(n)}`,
};

/**
 * Postfix chains: the parser reads them in a loop, and each link counts against the nesting limit (the reference reads
 * 50,000 links of most of them), so that no walk of the tree meets a chain deeper than the limit.
 */
const ensures = (value: string): string =>
  `-- allium: 3\nrule R {\n  when: Go(x)\n  ensures: x.y = ${value}\n}\n`;
const CHAINS: Record<string, (n: number) => string> = {
  members: (n) => rule(`x${'.a'.repeat(n)}`),
  'members in ensures': (n) => ensures(`x${'.a'.repeat(n)}`),
  'optional members': (n) => ensures(`x${'?.a'.repeat(n)}`),
  'calls of calls': (n) => ensures(`f${'(x)'.repeat(n)}`),
  'calls of calls in requires': (n) => rule(`f${'(x.a)'.repeat(n)}`),
  'method calls': (n) => ensures(`x${'.f(x.a)'.repeat(n)}`),
  projections: (n) => ensures(`x${'->a'.repeat(n)}`),
  'deferred calls': (n) => `-- allium: 3\ndeferred D.f\n${ensures(`D${'.f(1)'.repeat(n)}`).slice(13)}`,
};

/** Every command's answer and the analysis the loop reads (the dependency graph and inventory included). */
const run = (text: string): string => {
  const analysed = checkReports([{ path: 'f.allium', text }], 'analyse');
  const model = modelReport({ path: 'f.allium', text });
  const plan = planReport({ path: 'f.allium', text });
  analyzeSpecs([{ path: 'f.allium', text }]);
  return referenceJson(analysed.reports) + referenceJson(model.report) + referenceJson(plan.report);
};

describe('hostile input never crashes the checker', () => {
  it.each(Object.keys(SHAPES))('%s nested 10,000 deep: a syntax error, no exception', (shape) => {
    const text = (SHAPES[shape] as (n: number) => string)(10_000);
    const { reports } = checkReports([{ path: 'f.allium', text }], 'check');
    expect(() => run(text)).not.toThrow();
    const errors = reports[0]?.diagnostics.filter((d) => d.severity === 'error') ?? [];
    if (!['negations', 'blocks', 'unclosed'].includes(shape)) {
      expect(errors.map((d) => d.message)).toContain(`nested too deeply (more than ${MAX_NESTING} levels)`);
    }
  });

  it.each(Object.keys(CHAINS))(
    '%s, 20,000 links: a syntax error, every command answers, no exception',
    (shape) => {
      const text = (CHAINS[shape] as (n: number) => string)(20_000);
      expect(() => run(text)).not.toThrow();
      const { reports } = checkReports([{ path: 'f.allium', text }], 'check');
      expect(reports[0]?.diagnostics.map((d) => d.message)).toContain(
        `nested too deeply (more than ${MAX_NESTING} levels)`,
      );
    },
  );

  it('a chain of links just under the limit still parses cleanly', () => {
    const links = MAX_NESTING - 16;
    const text = `-- allium: 3\nentity E { a: E? }\nrule R {\n  when: Go(x)\n  requires: x${'.a'.repeat(links)} = x\n  ensures: Done()\n}\n`;
    const errors = checkReports([{ path: 'f.allium', text }], 'check').reports[0]?.diagnostics.filter(
      (d) => d.severity === 'error',
    );
    expect(errors).toEqual([]);
  });

  it('a 1 MB single line and invalid UTF-8 (replacement characters) give diagnostics, not exceptions', () => {
    const line = `-- allium: 3\nrule R { when: Go(x) requires: ${'x.a + '.repeat(175_000)}1 ensures: Done() }\n`;
    expect(line.length).toBeGreaterThan(1_000_000);
    expect(() => run(line)).not.toThrow();
    const invalid = Buffer.from([
      0x2d, 0x2d, 0x20, 0xff, 0xfe, 0x0a, 0x65, 0x6e, 0xc3, 0x28, 0x80, 0x7b, 0xed, 0xa0, 0x80,
    ]);
    expect(() => run(invalid.toString('utf8'))).not.toThrow();
  });

  it('nesting just under the limit still parses cleanly', () => {
    const depth = MAX_NESTING - 16;
    const { reports } = checkReports(
      [{ path: 'f.allium', text: rule(`${'('.repeat(depth)}x.ok${')'.repeat(depth)}`) }],
      'check',
    );
    expect(reports[0]?.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  });
});

/**
 * `copies` copies of a fixture with one character in every 100 replaced, deterministically, by one of the
 * characters that break structure most (brackets, braces, a colon, a quote, a line break, a letter).
 */
function flipped(copies: number): string {
  const text = readFixture('comprehensive-edge-cases').repeat(copies);
  const replacements = '(){}[]:"\n`x';
  const chars = text.split('');
  let seed = 19;
  for (let i = 0; i + 100 <= chars.length; i += 100) {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    chars[i + (seed % 100)] = replacements[seed % replacements.length] as string;
  }
  return chars.join('');
}

describe('hostile input stays linear', () => {
  const analyse = (text: string) => () => checkReports([{ path: 'f.allium', text }], 'analyse');

  it.each(['parentheses', 'calls', 'chain', 'blocks', 'unclosed'])(
    '%s: 8× the size costs about 8× the CPU time',
    (shape) => {
      const make = SHAPES[shape] as (n: number) => string;
      expect(perUnitCpuRatio(analyse(make(2_000)), analyse(make(16_000)), 8, 6)).toBeLessThan(4);
    },
  );

  it('a spec with a character flipped every 100: 8× the copies cost about 8× the CPU time', () => {
    // Flips leave unclosed brackets whose look-ahead runs to the end of the file; the parser once moved every token
    // lexed ahead at each declaration after one (a byte-flipped 0.5 MB spec took 8 s).
    expect(perUnitCpuRatio(analyse(flipped(8)), analyse(flipped(64)), 8, 4)).toBeLessThan(4);
  });
});
