import { describe, expect, it } from 'vitest';
import { checkClaims, namedFiles, significantChanges, type ClaimEvidence } from './check-claims.js';
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
  spec_path: 'spec/a.allium',
  open_questions: ['May a  worn tool be lent?'],
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
    const failures = checkClaims({ ...tend, open_questions: [] }, evidence());
    expect(failures).toEqual([
      {
        reason: 'count_mismatch',
        detail: 'result lists 0 open question(s), the spec has 1; not reported: "May a worn tool be lent?"',
      },
    ]);
  });

  it('counts distill findings from the spec diff, never from the record', () => {
    expect(significantChanges({ added: [], removed: [], changed: [] })).toEqual([]);
    const questionOnly = {
      added: ['question:Is a worn tool lent?', 'suppression:spec/a.allium:line:3:all'],
      removed: [],
      changed: [],
    };
    expect(significantChanges(questionOnly)).toEqual([]);
    expect(significantChanges({ added: ['rule:Refund'], removed: ['entity:X'], changed: [] })).toEqual([
      'rule:Refund',
      'entity:X',
    ]);
  });

  it('fails a loop record that classifies a question the result does not list', () => {
    const loopRecord = {
      open_questions: [{ text: 'Who pays?', classification: 'blocking' as const, why: 'prices' }],
    };
    expect(checkClaims(tend, evidence({ loopRecord }))).toEqual([
      {
        reason: 'count_mismatch',
        detail: 'the loop record classifies question(s) the result does not list: "Who pays?"',
      },
    ]);
    const listed = {
      open_questions: [
        { text: 'May a worn tool be lent?', classification: 'parked' as const, assumption: 'yes' },
      ],
    };
    expect(checkClaims(tend, evidence({ loopRecord: listed }))).toEqual([]);
  });

  it("checks each generated test's recorded hash against the file", () => {
    const propagate: AnyPhaseResult = {
      phase: 'propagate',
      obligations: { total: 1, covered: 1, uncovered: 0 },
      uncovered_obligations: [],
      generated_tests: [
        { path: 'test/a.test.ts', hash: `sha256:${'a'.repeat(64)}` },
        { path: 'test/b.test.ts', hash: 'B'.repeat(64) },
      ],
      summary: '1 obligations, 1 covered, 0 uncovered',
    };
    const run = { collected: true, exitCode: 0, cases: [{ name: 'Borrow', status: 'passed' as const }] };
    const testRuns = new Map([
      ['test/a.test.ts', run],
      ['test/b.test.ts', run],
    ]);
    const testHashes = new Map([
      ['test/a.test.ts', 'a'.repeat(64)],
      ['test/b.test.ts', 'c'.repeat(64)],
    ]);
    expect(checkClaims(propagate, evidence({ testRuns, testHashes }))).toEqual([
      {
        reason: 'count_mismatch',
        detail: `test/b.test.ts: the record's hash ${'B'.repeat(64)} is not the file's (sha256:${'c'.repeat(64)})`,
      },
    ]);
  });

  it('checks that propagated files are collected and name the rules they cover', () => {
    const propagate: AnyPhaseResult = {
      phase: 'propagate',
      obligations: { total: 2, covered: 2, uncovered: 0 },
      uncovered_obligations: [],
      generated_tests: [
        { path: 'test/a.test.ts', hash: 'sha256:x' },
        { path: 'test/b.test.ts', hash: 'sha256:y' },
      ],
      summary: '2 obligations, 2 covered, 0 uncovered',
    };
    const loopRecord = {
      covers: [
        { path: 'test/a.test.ts', obligations: ['Borrow', 'GiveBack'] },
        { path: 'test/b.test.ts', obligations: ['Borrow'] },
      ],
    };
    const testRuns = new Map([
      [
        'test/a.test.ts',
        { collected: true, exitCode: 1, cases: [{ name: 'Borrow: marks out', status: 'failed' as const }] },
      ],
      ['test/b.test.ts', { collected: false, exitCode: 2, cases: [] }],
    ]);
    expect(checkClaims(propagate, evidence({ testRuns, loopRecord }))).toEqual([
      { reason: 'coverage_unproven', detail: 'test/a.test.ts: no test title names GiveBack' },
      { reason: 'tests_not_collected', detail: 'the test runner collected no tests from test/b.test.ts' },
    ]);
  });

  it('names the files each phase claims', () => {
    const weed: AnyPhaseResult = {
      phase: 'weed',
      mode: 'update-spec',
      verdict: 'dirty',
      divergences: [
        { subject: 'rule:A', classification: 'aspirational', spec: 'spec/a.allium:1', code: 'none' },
      ],
      artefacts: ['spec/a.allium'],
      summary: '',
    };
    expect(namedFiles(weed)).toEqual(['spec/a.allium']);
    expect(namedFiles(tend)).toEqual(['spec/a.allium']);
    const propagate: AnyPhaseResult = {
      phase: 'propagate',
      obligations: { total: 0, covered: 0, uncovered: 0 },
      uncovered_obligations: [],
      generated_tests: [{ path: 'test/a.test.ts', hash: 'h' }],
      test_paths: ['test/a.test.ts', 'test/helpers.ts'],
      summary: '',
    };
    expect(namedFiles(propagate)).toEqual(['test/a.test.ts', 'test/a.test.ts', 'test/helpers.ts']);
  });
});
