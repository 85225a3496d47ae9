import { describe, expect, it } from 'vitest';
import { buildPlan } from './build-plan.js';
import { checkObligationClaims, type ObligationClaimTest } from './check-obligation-claims.js';
import { parseSpec } from './parse-spec.js';

const SPEC = `-- allium: 3
entity Tally {
  count: Integer
  status: open | closed
}
rule CloseTally {
  when: Close(tally)
  requires: tally.status = open
  ensures: tally.status = closed
}
rule Bump {
  when: BumpTally(tally)
  ensures: tally.count = tally.count + 1
}
`;
const plan = buildPlan(parseSpec(SPEC, 'tally.allium'));
const test = (over: Partial<ObligationClaimTest>): ObligationClaimTest => ({
  path: 'test/tally.test.ts',
  covers: [],
  ran: true,
  titles: [],
  ...over,
});

describe('checkObligationClaims: the engine reconciles obligations with the generated tests itself', () => {
  it('the plan has the obligations the claims refer to', () => {
    expect(plan.obligations.map((o) => o.id)).toEqual([
      'entity-fields.Tally',
      'rule-success.CloseTally',
      'rule-failure.CloseTally.1',
      'rule-success.Bump',
    ]);
  });

  it('counts a claim proven when a test that ran names the obligation id or its construct', () => {
    const r = checkObligationClaims(plan, [
      test({
        covers: ['rule-success.CloseTally', 'rule-failure.CloseTally.1'],
        titles: ['close tally closes an open tally', 'rejects closing a closed one'],
      }),
      test({
        path: 'test/bump.test.ts',
        covers: ['rule-success.Bump'],
        titles: ['rule_success_bump adds one'],
      }),
    ]);
    expect(r.line).toBe('4 obligations, 3 covered, 1 uncovered');
    expect(r.uncovered).toEqual([{ id: 'entity-fields.Tally' }]);
    expect(r.coveredBy.get('rule-success.Bump')).toEqual(['test/bump.test.ts']);
    expect(r.rejected).toEqual([]);
  });

  it('reads a construct name as a claim on every obligation of that construct', () => {
    const r = checkObligationClaims(plan, [test({ covers: ['CloseTally'], titles: ['CloseTally works'] })]);
    expect([...r.coveredBy.keys()]).toEqual(['rule-success.CloseTally', 'rule-failure.CloseTally.1']);
    expect(r.line).toBe('4 obligations, 2 covered, 2 uncovered');
  });

  it('rejects a claim of an unknown obligation, by a test that did not run, or that no test name backs', () => {
    const r = checkObligationClaims(plan, [
      test({ covers: ['rule-success.Ghost'], titles: ['rule-success.Ghost'] }),
      test({ path: 'test/skipped.test.ts', covers: ['rule-success.Bump'], ran: false, titles: ['Bump'] }),
      test({ path: 'test/vague.test.ts', covers: ['rule-success.CloseTally'], titles: ['it works'] }),
    ]);
    expect(r.rejected.map((c) => [c.path, c.claim, c.reason])).toEqual([
      ['test/tally.test.ts', 'rule-success.Ghost', 'unknown_obligation'],
      ['test/skipped.test.ts', 'rule-success.Bump', 'test_not_run'],
      ['test/vague.test.ts', 'rule-success.CloseTally', 'not_named'],
    ]);
    expect(r.covered).toBe(0);
    expect(r.line).toBe('4 obligations, 0 covered, 4 uncovered');
  });

  it('keeps the classification propagate reported for an uncovered obligation', () => {
    const r = checkObligationClaims(
      plan,
      [],
      [
        {
          obligation: 'entity-fields.Tally',
          classification: 'infrastructure-gap',
          reason: 'no ORM in tests',
        },
      ],
    );
    expect(r.uncovered[0]).toEqual({ id: 'entity-fields.Tally', reason: 'infrastructure-gap' });
    expect(r.uncovered[1]).toEqual({ id: 'rule-success.CloseTally' });
  });
});
