import { readFile } from 'node:fs/promises';
import { Ajv, type ValidateFunction } from 'ajv';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseLoopRecord, parseWorkerResult } from './parse-result.js';
import { RESULT_SCHEMAS, renderResultJsonSchema, UPSTREAM_SCHEMA_FILES } from './result-schemas.js';
import { WORKER_PHASES } from './worker-phase.js';

type UpstreamPhase = keyof typeof UPSTREAM_SCHEMA_FILES;
const UPSTREAM = Object.keys(UPSTREAM_SCHEMA_FILES) as UpstreamPhase[];

/** The upstream schemas as vendored, unchanged, in docs/schemas/upstream (plugin 3.14.0). */
async function upstreamSchema(phase: UpstreamPhase): Promise<Record<string, unknown>> {
  const url = new URL(`../../../docs/schemas/upstream/${UPSTREAM_SCHEMA_FILES[phase]}`, import.meta.url);
  return JSON.parse(await readFile(url, 'utf8')) as Record<string, unknown>;
}

const validators = {} as Record<UpstreamPhase, ValidateFunction>;
const schemas = {} as Record<UpstreamPhase, Record<string, unknown>>;
beforeAll(async () => {
  const ajv = new Ajv({ allErrors: true, strict: false });
  for (const phase of UPSTREAM) {
    schemas[phase] = await upstreamSchema(phase);
    validators[phase] = ajv.compile(schemas[phase]);
  }
});

const valid = {
  elicit: { phase: 'elicit', spec_path: 'spec/a.allium', open_questions: ['Refunds?'], summary: 'drafted' },
  tend: {
    phase: 'tend',
    spec_path: 'spec/a.allium',
    changes: ['rule Refund added'],
    open_questions: [],
    summary: 'one rule',
  },
  distill: { spec_path: 'spec/a.allium', summary: 'loans and returns' },
  propagate: {
    phase: 'propagate',
    obligations: { total: 3, covered: 2, uncovered: 1 },
    uncovered_obligations: [
      { obligation: 'rule-success.Notify', classification: 'infrastructure-gap', reason: 'no mail stub' },
    ],
    generated_tests: [{ path: 'test/a.test.ts', hash: `sha256:${'0'.repeat(64)}` }],
    test_paths: ['test/a.test.ts'],
    summary: '3 obligations, 2 covered, 1 uncovered',
  },
  implement: { phase: 'implement', files_changed: ['src/a.ts'], contested_tests: [], summary: '' },
  weed: {
    phase: 'weed',
    mode: 'check',
    verdict: 'dirty',
    divergences: [
      { subject: 'rule:Borrow', classification: 'code-bug', spec: 'spec/a.allium:7', code: 'src/a.ts:3' },
    ],
    summary: 'one divergence',
  },
} as const;

describe('the phase records are the upstream hand-offs', () => {
  it.each(UPSTREAM)(
    'a %s record the engine accepts is valid against the upstream schema, and back',
    (phase) => {
      expect(validators[phase](valid[phase]), JSON.stringify(validators[phase].errors)).toBe(true);
      expect(parseWorkerResult(phase, JSON.stringify(valid[phase])).ok).toBe(true);
    },
  );

  it.each(UPSTREAM)(
    'the %s schema shown to agents has the upstream fields, required set and closure',
    (phase) => {
      const rendered = JSON.parse(renderResultJsonSchema(phase)) as Record<string, unknown>;
      const upstream = schemas[phase];
      const keys = (s: Record<string, unknown>) => Object.keys(s['properties'] as object).sort();
      expect(keys(rendered)).toEqual(keys(upstream));
      expect([...(rendered['required'] as string[])].sort()).toEqual(
        [...(upstream['required'] as string[])].sort(),
      );
      expect(rendered['additionalProperties']).toBe(false);
    },
  );

  const broken: [UpstreamPhase, Record<string, unknown>][] = [
    ['weed', { ...valid.weed, clean: false }],
    ['weed', { ...valid.weed, verdict: 'mostly' }],
    ['weed', { ...valid.weed, divergences: [{ subject: 'x', classification: 'code-bug', spec: 's' }] }],
    ['weed', { ...valid.weed, divergences: [{ ...valid.weed.divergences[0], description: 'x' }] }],
    ['distill', { ...valid.distill, newFindings: 2 }],
    ['distill', { summary: 'no path' }],
    ['distill', { ...valid.distill, phase: 'elicit' }],
    ['tend', { ...valid.tend, open_questions: [{ text: 'q', classification: 'parked' }] }],
    ['tend', { ...valid.tend, specFiles: ['spec/a.allium'] }],
    ['propagate', { ...valid.propagate, obligations: { total: 1, covered: 1 } }],
    ['propagate', { ...valid.propagate, obligations: { total: 1.5, covered: 1, uncovered: 0 } }],
    [
      'propagate',
      {
        ...valid.propagate,
        uncovered_obligations: [{ obligation: 'x', classification: 'too-hard', reason: 'r' }],
      },
    ],
    ['propagate', { ...valid.propagate, generated_tests: [{ path: 'a.test.ts', covers: ['A'] }] }],
    ['propagate', { ...valid.propagate, testFiles: [] }],
  ];
  it.each(broken)('a %s record the upstream schema rejects is rejected too (%#)', (phase, body) => {
    // The weed rule `clean exactly when no divergences` is stated in words upstream; the engine holds it at run time.
    expect(parseWorkerResult(phase, JSON.stringify(body)).ok).toBe(false);
  });

  it('agrees with the upstream schemas on generated records, field for field (differential)', () => {
    const str = fc.oneof(fc.string({ maxLength: 6 }), fc.constant('spec/a.allium'));
    const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
    const junk = fc.oneof(str, fc.integer(), fc.double({ noNaN: true }), fc.boolean(), fc.constant(null));
    const anyOf = <T>(arb: fc.Arbitrary<T>) =>
      fc.oneof({ weight: 4, arbitrary: arb }, { weight: 1, arbitrary: junk });
    const strings = anyOf(fc.array(anyOf(str), { maxLength: 2 }));
    const record = (fields: Record<string, fc.Arbitrary<unknown>>) =>
      fc
        .record({ ...fields, extra: maybe(junk) }, { requiredKeys: [] })
        .map((r) => Object.fromEntries(Object.entries(r).filter(([, v]) => v !== undefined)));
    const arbitraries: Record<UpstreamPhase, fc.Arbitrary<Record<string, unknown>>> = {
      distill: record({
        phase: anyOf(fc.constant('distill')),
        spec_path: anyOf(str),
        open_questions: strings,
        summary: anyOf(str),
      }),
      tend: record({
        phase: anyOf(fc.constant('tend')),
        spec_path: anyOf(str),
        changes: strings,
        open_questions: strings,
        summary: anyOf(str),
      }),
      propagate: record({
        phase: anyOf(fc.constant('propagate')),
        obligations: anyOf(
          record({ total: anyOf(fc.nat()), covered: anyOf(fc.nat()), uncovered: anyOf(fc.nat()) }),
        ),
        uncovered_obligations: anyOf(
          fc.array(
            anyOf(
              record({
                obligation: anyOf(str),
                classification: anyOf(fc.constantFrom('infrastructure-gap', 'unmappable-construct')),
                reason: anyOf(str),
              }),
            ),
            { maxLength: 2 },
          ),
        ),
        generated_tests: anyOf(
          fc.array(anyOf(record({ path: anyOf(str), hash: anyOf(str) })), { maxLength: 2 }),
        ),
        test_paths: strings,
        open_questions: strings,
        summary: anyOf(str),
      }),
      weed: record({
        phase: anyOf(fc.constant('weed')),
        mode: anyOf(fc.constantFrom('check', 'update-spec', 'update-code')),
        verdict: anyOf(fc.constantFrom('clean', 'dirty')),
        divergences: anyOf(
          fc.array(
            anyOf(
              record({
                subject: anyOf(str),
                classification: anyOf(
                  fc.constantFrom('spec-bug', 'code-bug', 'aspirational', 'intentional-gap'),
                ),
                spec: anyOf(str),
                code: anyOf(str),
              }),
            ),
            { maxLength: 2 },
          ),
        ),
        open_questions: strings,
        artefacts: strings,
        summary: anyOf(str),
      }),
    };
    for (const phase of UPSTREAM) {
      fc.assert(
        fc.property(arbitraries[phase], (value) => {
          const upstream = validators[phase](value) === true;
          let expected = upstream;
          // The rules the engine adds at run time. Weed: one the upstream schema states in words only.
          if (phase === 'weed' && upstream) {
            const w = value as { verdict: string; divergences: unknown[] };
            expected = (w.verdict === 'clean') === (w.divergences.length === 0);
          }
          // Propagate: its counts are integers JavaScript reads exactly (|n| < 2^53); the upstream `integer` has no bound.
          if (phase === 'propagate' && upstream) {
            const counts = Object.values((value as { obligations: Record<string, number> }).obligations);
            expected = counts.every((n) => Number.isSafeInteger(n));
          }
          expect(RESULT_SCHEMAS[phase].safeParse(value).success).toBe(expected);
        }),
        { numRuns: 400 },
      );
    }
  });
});

describe('parseWorkerResult', () => {
  it.each(WORKER_PHASES)('accepts a well-formed %s result and sets its phase', (phase) => {
    const parsed = parseWorkerResult(phase, JSON.stringify(valid[phase]));
    expect(parsed).toMatchObject({ ok: true, value: { phase } });
  });

  it('rejects text that is not JSON', () => {
    const parsed = parseWorkerResult('weed', '{ clean: yes');
    expect(parsed).toMatchObject({ ok: false, issues: [expect.stringMatching(/^not valid JSON/)] });
  });

  it.each([
    ['implement', { ...valid.implement, extra: 1 }, '(root)'],
    ['implement', { ...valid.implement, filesChanged: [] }, '(root)'],
    ['elicit', { ...valid.elicit, phase: 'distill' }, 'phase'],
    ['weed', { ...valid.weed, divergences: [] }, 'verdict'],
  ] as const)('rejects a %s result that breaks its contract (%#)', (phase, body, path) => {
    const parsed = parseWorkerResult(phase, JSON.stringify(body));
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.issues.some((issue) => issue.startsWith(path))).toBe(true);
  });
});

describe('parseLoopRecord', () => {
  it('accepts classified questions and coverage claims, and nothing else', () => {
    const record = {
      open_questions: [
        { text: 'Refunds?', classification: 'parked', assumption: 'no refunds' },
        { text: 'Currency?', classification: 'blocking', why: 'prices depend on it' },
      ],
      covers: [{ path: 'test/a.test.ts', obligations: ['rule-success.Borrow'] }],
    };
    expect(parseLoopRecord(JSON.stringify(record)).ok).toBe(true);
    expect(parseLoopRecord(JSON.stringify({})).ok).toBe(true);
    expect(parseLoopRecord(JSON.stringify({ ...record, clean: true })).ok).toBe(false);
    const unexplained = { open_questions: [{ text: 'q', classification: 'parked' }] };
    expect(parseLoopRecord(JSON.stringify(unexplained)).ok).toBe(false);
    expect(parseLoopRecord(JSON.stringify({ covers: [{ path: 'a', obligations: [] }] })).ok).toBe(false);
  });
});

describe('renderResultJsonSchema', () => {
  it.each(WORKER_PHASES)('renders a closed JSON Schema for %s naming its phase', (phase) => {
    const schema = JSON.parse(renderResultJsonSchema(phase)) as {
      properties: { phase: { const: string } };
      additionalProperties: boolean;
      required: string[];
    };
    expect(schema.properties.phase.const).toBe(phase);
    expect(schema.additionalProperties).toBe(false);
    expect(schema.required).toContain('summary');
  });
});
