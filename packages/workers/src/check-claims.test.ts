import { describe, expect, it } from 'vitest';
import { checkClaims, namedFiles, type ClaimEvidence } from './check-claims.js';
import type { AnyPhaseResult } from './result-schemas.js';
import type { SpecReading } from './worker-ports.js';

const reading = (overrides: Partial<SpecReading> = {}): SpecReading => ({
  diagnostics: [],
  openQuestions: [{ text: 'May a worn tool be lent?', file: 'spec/a.allium', line: 9 }],
  constructs: new Map([['rule:Borrow', 'rule Borrow {}']]),
  graph: { nodes: [], edges: [] },
  ...overrides,
});
const evidence = (overrides: Partial<ClaimEvidence> = {}): ClaimEvidence => ({
  specBefore: reading(),
  specAfter: reading(),
  diff: { added: [], removed: [], changed: [] },
  missingFiles: [],
  ...overrides,
});
const tend: AnyPhaseResult = {
  phase: 'tend',
  specFiles: ['spec/a.allium'],
  openQuestions: [{ text: 'May a  worn tool be lent?', classification: 'parked', assumption: 'yes' }],
  summary: '',
};

describe('checkClaims', () => {
  it('accepts claims the measurements support', () => {
    expect(checkClaims(tend, evidence())).toEqual([]);
  });

  it('reports missing files', () => {
    expect(checkClaims(tend, evidence({ missingFiles: ['spec/a.allium'] }))).toEqual([
      {
        reason: 'claim_file_missing',
        detail: 'spec/a.allium is named in the result but is missing or empty',
      },
    ]);
  });

  it('fails a spec phase that leaves a syntax error, but not a checker error', () => {
    const syntax = {
      code: null,
      severity: 'error',
      message: 'expected }',
      location: { file: 'spec/a.allium', line: 3, col: 1 },
    } as const;
    const checker = { ...syntax, code: 'allium.rule.undefinedBinding' };
    expect(checkClaims(tend, evidence({ specAfter: reading({ diagnostics: [syntax] }) }))[0]).toMatchObject({
      reason: 'spec_unparseable',
      detail: 'the spec no longer parses: spec/a.allium:3 expected }',
    });
    expect(checkClaims(tend, evidence({ specAfter: reading({ diagnostics: [checker] }) }))).toEqual([]);
  });

  it('compares listed open questions with the spec', () => {
    const failures = checkClaims({ ...tend, openQuestions: [] }, evidence());
    expect(failures).toEqual([
      {
        reason: 'count_mismatch',
        detail: 'result lists 0 open question(s), the spec has 1; not reported: "May a worn tool be lent?"',
      },
    ]);
  });

  it('checks distill findings against the spec diff', () => {
    const distill: AnyPhaseResult = { ...tend, phase: 'distill', newFindings: 0, findings: [] };
    expect(checkClaims(distill, evidence())).toEqual([]);
    const questionOnly = {
      added: ['question:Is a worn tool lent?', 'suppression:spec/a.allium:line:3:all'],
      removed: [],
      changed: [],
    };
    expect(checkClaims(distill, evidence({ diff: questionOnly }))).toEqual([]);
    expect(
      checkClaims(distill, evidence({ diff: { added: ['rule:Refund'], removed: [], changed: [] } })),
    ).toMatchObject([{ reason: 'count_mismatch' }]);
    const claimsOne = { ...distill, newFindings: 1, findings: ['refunds'] };
    expect(checkClaims(claimsOne, evidence())).toMatchObject([{ reason: 'count_mismatch' }]);
  });

  it('checks that propagated files are collected and name the rules they cover', () => {
    const propagate: AnyPhaseResult = {
      phase: 'propagate',
      testFiles: [
        { path: 'test/a.test.ts', covers: ['Borrow', 'GiveBack'] },
        { path: 'test/b.test.ts', covers: ['Borrow'] },
      ],
      summary: '',
    };
    const testRuns = new Map([
      [
        'test/a.test.ts',
        { collected: true, exitCode: 1, cases: [{ name: 'Borrow: marks out', status: 'failed' as const }] },
      ],
      ['test/b.test.ts', { collected: false, exitCode: 2, cases: [] }],
    ]);
    expect(checkClaims(propagate, evidence({ testRuns }))).toEqual([
      { reason: 'coverage_unproven', detail: 'test/a.test.ts: no test title names GiveBack' },
      { reason: 'tests_not_collected', detail: 'the test runner collected no tests from test/b.test.ts' },
    ]);
  });

  it('names the files each phase claims', () => {
    const weed: AnyPhaseResult = {
      phase: 'weed',
      clean: false,
      divergences: [
        {
          construct: 'rule:A',
          spec: { file: 'spec/a.allium', line: 1 },
          code: null,
          classification: 'aspirational',
          description: 'x',
        },
      ],
      summary: '',
    };
    expect(namedFiles(weed)).toEqual(['spec/a.allium']);
  });
});
