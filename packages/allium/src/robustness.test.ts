import { describe, expect, it } from 'vitest';
import { MAX_DEPTH, MAX_NESTING } from './parser-state.js';
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

/** Chains of infix operators, read in the parser's loop as postfix chains are. */
const OPERATOR_CHAINS: Record<string, (n: number) => string> = {
  'an inline enum': (n) =>
    `-- allium: 3\nentity A {\n  status: ${Array.from({ length: n }, (_, i) => `s${i}`).join(' | ')}\n}\n`,
  'or of comparisons': (n) => rule(Array.from({ length: n }, (_, i) => `x.a = ${i}`).join(' or ')),
  sums: (n) => ensures(`x.a${' + x.a'.repeat(n)}`),
  'a derived field': (n) => `-- allium: 3\nentity A {\n  x: Integer\n  y: x${' + x'.repeat(n)}\n}\n`,
  wheres: (n) => ensures(`x.items${' where i.ok'.repeat(n)}`),
};

const syntaxErrors = (text: string): string[] =>
  (checkReports([{ path: 'f.allium', text }], 'check').reports[0]?.diagnostics ?? [])
    .filter((d) => d.severity === 'error')
    .map((d) => d.message);

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
      // An operator chain is a loop of the parser, held to the tree's limit; the others nest the parser.
      const limit = shape === 'chain' ? MAX_DEPTH : MAX_NESTING;
      expect(errors.map((d) => d.message)).toContain(`nested too deeply (more than ${limit} levels)`);
    }
  });

  it.each(Object.keys(CHAINS))(
    '%s, 20,000 links: a syntax error, every command answers, no exception',
    (shape) => {
      const text = (CHAINS[shape] as (n: number) => string)(20_000);
      expect(() => run(text)).not.toThrow();
      const { reports } = checkReports([{ path: 'f.allium', text }], 'check');
      expect(reports[0]?.diagnostics.map((d) => d.message)).toContain(
        `nested too deeply (more than ${MAX_DEPTH} levels)`,
      );
    },
  );

  // Chains as long as the limit allows are valid specs (the reference reads 20,000 links): every command and the
  // loop's analysis walk their trees without running out of stack.
  it.each([...Object.keys(CHAINS), ...Object.keys(OPERATOR_CHAINS)])(
    '%s, just under the limit: no syntax error, every command answers',
    (shape) => {
      // A method call is two links (`.f`, then the call).
      const links = ['method calls', 'deferred calls'].includes(shape)
        ? (MAX_DEPTH - 16) / 2
        : MAX_DEPTH - 16;
      const text = ({ ...CHAINS, ...OPERATOR_CHAINS }[shape] as (n: number) => string)(links);
      expect(() => run(text)).not.toThrow();
      expect(syntaxErrors(text)).toEqual([]);
    },
  );

  it('an inline enum of 300 values is a valid spec (the nesting limit, 256, does not apply to a chain)', () => {
    const values = Array.from({ length: 300 }, (_, i) => `s${i}`);
    const text = `-- allium: 3\nentity Order {\n  status: ${values.join(' | ')}\n}\n`;
    expect(syntaxErrors(text)).toEqual([]);
    expect(JSON.stringify(modelReport({ path: 'f.allium', text }).report)).toContain('"s299"');
  });

  it('chains inside chains, each within the limits, make a tree too deep to walk: a syntax error, no exception', () => {
    // Each level a parenthesised operand, then a chain: 100 levels of 900 links (about 90,000 levels in all), and 250
    // levels each with a chain as long as the nesting limit once allowed (about 31,000; this overflowed the stack of
    // check, analyse, model and plan when chains were held to that limit level by level).
    const nested = (level: number): string =>
      level === 100 ? 'x.a' : `(${nested(level + 1)})${' + x.a'.repeat(900)}`;
    const shorter = (level: number): string =>
      level === 250 ? 'x.a' : `(${shorter(level + 1)})${' + x.a'.repeat(Math.max(0, 248 - level))}`;
    for (const text of [nested(0), shorter(0)].flatMap((e) => [rule(`${e} > 0`), ensures(e)])) {
      expect(() => run(text)).not.toThrow();
      expect(syntaxErrors(text)).toContain(`nested too deeply (more than ${MAX_DEPTH} levels)`);
    }
    // Each of its chains within the limit, the shorter tree is measured once parsed and dropped whole: the error
    // stands at the expression's first token (`requires: ` ends at column 12, `ensures: ` at 11).
    const at = (text: string) =>
      checkReports([{ path: 'f.allium', text }], 'check')
        .reports[0]?.diagnostics.filter(
          (d) => d.message === `nested too deeply (more than ${MAX_DEPTH} levels)`,
        )
        .map((d) => [d.location.line, d.location.col]);
    expect(at(rule(`${shorter(0)} > 0`))).toEqual([[4, 13]]);
    expect(at(ensures(shorter(0)))).toEqual([[4, 12]]);
    // Just under the limit: four levels of chains, 240 links each, plus a few for the parentheses.
    const under = (level: number): string =>
      level === 4 ? 'x.a' : `(${under(level + 1)})${' + x.a'.repeat(240)}`;
    expect(syntaxErrors(rule(`${under(0)} > 0`))).toEqual([]);
    expect(() => run(rule(`${under(0)} > 0`))).not.toThrow();
  });

  it('an expression with many links but a shallow tree is not refused', () => {
    // 10,000 links in all (two per element), none of them deeper than three levels.
    const text = ensures(`{${Array.from({ length: 5_000 }, () => 'x.a + 1').join(', ')}}`);
    expect(syntaxErrors(text)).toEqual([]);
    expect(() => run(text)).not.toThrow();
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

  it('a check set of files, each importing the next: 32× the files cost about 32× the CPU time', () => {
    // Every file was once asked about every other, for each of its names and for what its importers give it: a folder
    // of 3,000 such files took 7.7 s (tools/bench/spec/folders.bench.ts), and this ratio was 7–9.
    const entities = (i: number): string =>
      [0, 1, 2, 3].map((k) => `entity E${i}x${k} {\n  x: Integer\n}\n`).join('');
    const files = (n: number) => () =>
      checkReports(
        Array.from({ length: n }, (_, i) => ({
          path: `f${i}.allium`,
          text: `-- allium: 3\nuse "./f${(i + 1) % n}.allium" as next\n${entities(i)}rule R${i} {\n  when: next/Go${(i + 1) % n}(a)\n  ensures: Go${i}(a)\n}\n`,
        })),
        'check',
      );
    expect(perUnitCpuRatio(files(100), files(3_200), 32, 4)).toBeLessThan(4);
  });

  it('one file importing all the others, with a rule, a surface and a field through each alias: 16× the files cost about 16× the CPU time', () => {
    // What the importer gives each imported file was gathered by reading the importer through once per alias: this
    // ratio was 17.8, and a hub of 3,000 files took 15.5 s (tools/bench/spec/folders.bench.ts).
    const files = (n: number) => () => {
      const hub = Array.from(
        { length: n },
        (_, i) =>
          `use "./g${i}.allium" as g${i}\nentity M${i} {\n  y: g${i}/G.x\n}\n` +
          `rule R${i} {\n  when: g${i}/Go(o)\n  requires: o.status = open\n  ensures: o.status = closed\n}\n` +
          `surface S${i} {\n  facing u: User\n  context o: g${i}/G\n  provides: g${i}/Go(o)\n}\n`,
      ).join('');
      return checkReports(
        [
          { path: 'main.allium', text: `-- allium: 3\nactor User {\n  identified_by: email\n}\n${hub}` },
          ...Array.from({ length: n }, (_, i) => ({
            path: `g${i}.allium`,
            text: `-- allium: 3\nentity G {\n  x: Integer\n  status: open | closed | done\n}\nrule Start {\n  when: Go(o)\n  ensures: o.status = done\n}\n`,
          })),
        ],
        'check',
      );
    };
    expect(perUnitCpuRatio(files(100), files(1_600), 16, 4)).toBeLessThan(4);
  });

  it('one file listening for a plain trigger each of the others offers: 32× the files cost about 32× the CPU time', () => {
    // Each plain trigger was looked for in every imported file, and every rule with one was read through once per
    // alias: this ratio was 6.5.
    const files = (n: number) => () =>
      checkReports(
        [
          {
            path: 'main.allium',
            text:
              '-- allium: 3\n' +
              Array.from(
                { length: n },
                (_, i) =>
                  `use "./g${i}.allium" as g${i}\nrule R${i} {\n  when: Go${i}(o)\n  ensures: Done${i}(o)\n}\n`,
              ).join(''),
          },
          ...Array.from({ length: n }, (_, i) => ({
            path: `g${i}.allium`,
            text:
              `-- allium: 3\nactor User {\n  identified_by: email\n}\nentity G {\n  x: Integer\n  status: open | closed\n}\n` +
              `surface S {\n  facing u: User\n  context o: G\n  provides: Go${i}(o)\n}\n`,
          })),
        ],
        'analyse',
      );
    expect(perUnitCpuRatio(files(100), files(3_200), 32, 4)).toBeLessThan(4);
  });

  it.each(['check', 'analyse'] as const)(
    'many files importing one that declares an entity for each (spec %s): 16× the files cost about 16× the CPU time',
    (command) => {
      // The imported file's names were each looked for in every importer, its status enums and commands read again
      // for each importer, and its enum table copied into each: this ratio was 8.8–11.3.
      const files = (n: number) => () =>
        checkReports(
          [
            {
              path: 'common.allium',
              text:
                '-- allium: 3\nactor User {\n  identified_by: email\n}\n' +
                Array.from(
                  { length: n },
                  (_, i) =>
                    `entity C${i} {\n  x: Integer\n  status: open | closed | done\n}\n` +
                    `surface T${i} {\n  facing u: User\n  provides: Cmd${i}(b: C${i})\n}\n` +
                    `rule Q${i} {\n  when: Cmd${i}(b)\n  ensures: Ev${i}(b)\n}\n`,
                ).join(''),
            },
            ...Array.from({ length: n }, (_, i) => ({
              path: `f${i}.allium`,
              text:
                `-- allium: 3\nuse "./common.allium" as c\nrule R {\n  when: c/Cmd${i}(b)\n  requires: b.status = open\n` +
                `  ensures: b.status = closed\n}\nentity F {\n  y: c/C${i}.x\n}\n`,
            })),
          ],
          command,
        );
      expect(perUnitCpuRatio(files(100), files(1_600), 16, 4)).toBeLessThan(4);
    },
  );

  it('a spec with a character flipped every 100: 8× the copies cost about 8× the CPU time', () => {
    // Flips leave unclosed brackets whose look-ahead runs to the end of the file; the parser once moved every token
    // lexed ahead at each declaration after one (a byte-flipped 0.5 MB spec took 8 s).
    expect(perUnitCpuRatio(analyse(flipped(8)), analyse(flipped(64)), 8, 4)).toBeLessThan(4);
  });
});
