import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { witness, type WitnessEvidence, type WitnessResult } from './witness.js';

/** The upstream schema, vendored unchanged under docs/schemas/upstream. */
const schema = JSON.parse(
  readFileSync(new URL('../../../docs/schemas/upstream/witness-result.schema.json', import.meta.url), 'utf8'),
) as object;
const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);

function valid(result: WitnessResult): WitnessResult {
  if (!validate(result)) throw new Error(JSON.stringify(validate.errors));
  return result;
}

const green = { counts: 'known', passed: 8, failed: 0, skipped: 0, failing: [], exitCode: 0 } as const;

const honest: WitnessEvidence = {
  slug: 'gift-cards',
  tick: 3,
  recordPath: '.allium-loop/gift-cards.witness.json',
  mode: 'spec-first',
  rerun: green,
  recorded: green,
  generatedTests: [{ path: 'test/card.test.js', recordedHash: 'a1', currentHash: 'a1' }],
  reconciliation: {
    obligations: 5,
    covered: 4,
    uncovered: [{ id: 'rule-success.Refund', reason: 'infrastructure-gap' }],
  },
  weed: { status: 'clean' },
  questions: {
    blockingInSpec: [],
    parkedInSpec: ['Can a card expire?'],
    recordedBlocking: [],
    reportedParked: ['Can a card expire?'],
  },
  structuralErrors: 0,
  redBeforeGreen: { newTests: ['card issues'], seenRed: ['card issues'] },
};

function withoutRecorded(): WitnessEvidence {
  const { recorded: _dropped, ...rest } = honest;
  return rest;
}

describe('witness', () => {
  it('passes an honest run, every check with its ground truth, valid against the upstream schema', () => {
    const result = valid(witness(honest));
    expect(result.verdict).toBe('PASS');
    expect(result.violations).toEqual([]);
    expect(result.checks.map((c) => `${c.name}:${c.result}`)).toEqual([
      'tests-pass:pass',
      'no-test-weakened:pass',
      'coverage:pass',
      'weed-verdict:pass',
      'open-questions:pass',
      'convergence:pass',
      'red-before-green:pass',
    ]);
    expect(result.checks[0]?.ground_truth).toBe('runner exit 0, 8/8 passed');
    expect(result.summary).toBe('witness: PASS · checks 7/7 · gift-cards tick 3');
  });

  it('fails a generated test edited or deleted after propagate, routed to revert + propagate', () => {
    const result = valid(
      witness({
        ...honest,
        generatedTests: [
          { path: 'test/card.test.js', recordedHash: 'a1', currentHash: 'b2' },
          { path: 'test/refund.test.js', recordedHash: 'c3', currentHash: null },
        ],
      }),
    );
    expect(result.verdict).toBe('FAIL');
    expect(result.violations).toEqual([
      { violation: 'test/card.test.js edited after propagate', routing: 'revert + propagate' },
      { violation: 'test/refund.test.js deleted after propagate', routing: 'revert + propagate' },
    ]);
  });

  it('trusts the runner, not the record: a recorded 8/8 with a red re-run fails to implement', () => {
    const red = { ...green, passed: 6, failed: 2, exitCode: 1 } as const;
    const result = valid(witness({ ...honest, rerun: red }));
    expect(result.verdict).toBe('FAIL');
    expect(result.violations.map((v) => v.routing)).toEqual(['implement', 'implement']);
    // A zero exit with no test run is no evidence of passing either.
    const none = valid(witness({ ...withoutRecorded(), rerun: { ...green, passed: 0 } }));
    expect(none.checks[0]).toMatchObject({ name: 'tests-pass', result: 'fail' });
  });

  it('fails uncovered obligations without a reason, and a downgraded blocking question, each routed', () => {
    const result = valid(
      witness({
        ...honest,
        reconciliation: { obligations: 3, covered: 2, uncovered: [{ id: 'rule-failure.Refund.1' }] },
        questions: {
          blockingInSpec: [],
          parkedInSpec: ['Who approves refunds?'],
          recordedBlocking: ['Who approves refunds?'],
          reportedParked: [],
        },
      }),
    );
    expect(result.verdict).toBe('FAIL');
    expect(result.violations).toEqual([
      { violation: 'obligation rule-failure.Refund.1 uncovered with no reason', routing: 'propagate' },
      { violation: 'blocking question downgraded to parked: Who approves refunds?', routing: 'escalate' },
    ]);
  });

  it('fails a blocking question that was never answered and is gone from the spec (reworded or deleted)', () => {
    const result = valid(
      witness({
        ...honest,
        questions: {
          blockingInSpec: [],
          parkedInSpec: ['Can a card expire?', 'Who approves refunds, maybe?'],
          recordedBlocking: ['Who approves refunds?'],
          reportedParked: ['Can a card expire?'],
        },
      }),
    );
    expect(result.verdict).toBe('FAIL');
    expect(result.violations).toEqual([
      {
        violation: 'blocking question unanswered and gone from the spec: Who approves refunds?',
        routing: 'escalate',
      },
    ]);
  });

  it('red-before-green: a test first seen green is reported (flagged by the loop), one never red-checked fails', () => {
    const flagged = valid(
      witness({ ...honest, redBeforeGreen: { newTests: ['a', 'b'], seenRed: ['a'], seenGreen: ['b'] } }),
    );
    expect(flagged.verdict).toBe('PASS');
    expect(flagged.checks.find((c) => c.name === 'red-before-green')).toEqual({
      name: 'red-before-green',
      result: 'pass',
      ground_truth:
        'best-effort: 1/2 new test(s) seen red before green, 1 green at the red-check (flagged already covered or vacuous)',
    });
    const skipped = valid(witness({ ...honest, redBeforeGreen: { newTests: ['a', 'c'], seenRed: ['a'] } }));
    expect(skipped.verdict).toBe('FAIL');
    expect(skipped.violations).toEqual([
      { violation: 'c was never red-checked before implement', routing: 'propagate' },
    ]);
  });

  it('fails a dirty weed and structural errors, and says which terms of the invariant are unmet', () => {
    const result = valid(
      witness({ ...honest, weed: { status: 'dirty', divergences: 2 }, structuralErrors: 1 }),
    );
    expect(result.verdict).toBe('FAIL');
    expect(result.checks.find((c) => c.name === 'convergence')?.ground_truth).toBe(
      'invariant unmet: weed_dirty, structural_errors',
    );
  });

  it('is INCONCLUSIVE without a test re-run, and says which evidence was missing', () => {
    const result = valid(
      witness({ slug: 's', tick: 1, recordPath: '.allium-loop/s.witness.json', mode: 'code-first' }),
    );
    expect(result.verdict).toBe('INCONCLUSIVE');
    expect(
      result.checks.every((c) => c.result === 'inconclusive' && c.ground_truth.startsWith('no evidence')),
    ).toBe(true);
    // Code-first runs have no red-before-green check.
    expect(result.checks.map((c) => c.name)).not.toContain('red-before-green');
    const { rerun: _dropped, ...withoutRerunEvidence } = honest;
    const withoutRerun = valid(witness(withoutRerunEvidence));
    expect(withoutRerun.verdict).toBe('INCONCLUSIVE');
  });

  it('rejects a record with a key the upstream schema does not allow (the validator is live)', () => {
    expect(validate({ ...witness(honest), extra: 1 })).toBe(false);
  });
});
