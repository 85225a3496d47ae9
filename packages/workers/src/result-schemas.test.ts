import { describe, expect, it } from 'vitest';
import { parseWorkerResult } from './parse-result.js';
import { renderResultJsonSchema } from './result-schemas.js';
import { WORKER_PHASES } from './worker-phase.js';

const valid = {
  elicit: {
    phase: 'elicit',
    specFiles: ['spec/a.allium'],
    openQuestions: [
      { text: 'Refunds?', classification: 'parked', assumption: 'no refunds' },
      { text: 'Currency?', classification: 'blocking', why: 'prices depend on it' },
    ],
    summary: 'drafted',
  },
  tend: { phase: 'tend', specFiles: ['spec/a.allium'], openQuestions: [], summary: '' },
  distill: {
    phase: 'distill',
    specFiles: [],
    openQuestions: [],
    newFindings: 1,
    findings: ['refund rule'],
    summary: '',
  },
  propagate: { phase: 'propagate', testFiles: [{ path: 'test/a.test.ts', covers: ['Borrow'] }], summary: '' },
  implement: { phase: 'implement', filesChanged: ['src/a.ts'], contestedTests: [], summary: '' },
  weed: { phase: 'weed', clean: true, divergences: [], summary: '' },
} as const;

describe('parseWorkerResult', () => {
  it.each(WORKER_PHASES)('accepts a well-formed %s result', (phase) => {
    const parsed = parseWorkerResult(phase, JSON.stringify(valid[phase]));
    expect(parsed.ok).toBe(true);
  });

  it('rejects text that is not JSON', () => {
    const parsed = parseWorkerResult('weed', '{ clean: yes');
    expect(parsed).toMatchObject({ ok: false, issues: [expect.stringMatching(/^not valid JSON/)] });
  });

  it.each([
    ['weed', { ...valid.weed, clean: false }, 'clean'],
    [
      'weed',
      {
        ...valid.weed,
        divergences: [
          { construct: 'rule:A', spec: null, code: null, classification: 'code-bug', description: 'x' },
        ],
        clean: false,
      },
      'divergences.0',
    ],
    ['distill', { ...valid.distill, newFindings: 2 }, 'newFindings'],
    [
      'elicit',
      { ...valid.elicit, openQuestions: [{ text: 'q', classification: 'parked' }] },
      'openQuestions.0',
    ],
    [
      'propagate',
      { ...valid.propagate, testFiles: [{ path: '../outside.test.ts', covers: ['A'] }] },
      'testFiles.0.path',
    ],
    [
      'propagate',
      { ...valid.propagate, testFiles: [{ path: 'a.test.ts', covers: [] }] },
      'testFiles.0.covers',
    ],
    ['implement', { ...valid.implement, extra: 1 }, '(root)'],
    ['tend', { ...valid.tend, phase: 'elicit' }, 'phase'],
  ] as const)('rejects a %s result that breaks its contract (%#)', (phase, body, path) => {
    const parsed = parseWorkerResult(phase, JSON.stringify(body));
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.issues.some((issue) => issue.startsWith(path))).toBe(true);
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
