import { describe, expect, it } from 'vitest';
import { graphOf } from './graph-builder.test-helpers.js';
import { planSlices } from './index.js';

const summary = (plan: ReturnType<typeof planSlices>) =>
  plan.slices.map((slice) => `${slice.wave} ${slice.id} [${slice.constructs.join(' ')}]`);

describe('planSlices: forming slices', () => {
  it('keeps one entity with the rules that create and transition it as one slice, without a split', () => {
    const plan = planSlices(
      graphOf([
        'rule:Open creates entity:Loan',
        'rule:Close writes entity:Loan Loan.status',
        'rule:Open data rule:Close Loan.status',
      ]),
    );
    expect(summary(plan)).toEqual(['0 entity-lifecycle:Loan [entity:Loan rule:Close rule:Open]']);
    expect(plan.split).toBe(false);
    expect(plan.integration).toBeNull();
    expect(plan.waves).toEqual([['entity-lifecycle:Loan']]);
  });

  it('puts a rule with the entity it transitions rather than one it creates on the side', () => {
    const plan = planSlices(
      graphOf([
        'rule:MarkOverdue writes entity:Loan Loan.status',
        'rule:MarkOverdue creates entity:Reminder',
      ]),
    );
    expect(summary(plan)).toEqual([
      '0 entity-lifecycle:Loan [entity:Loan rule:MarkOverdue]',
      '1 entity-lifecycle:Reminder [entity:Reminder]',
    ]);
  });

  it('breaks a tie between two transitioned entities by name, and a wider write wins over a narrower one', () => {
    const tie = planSlices(graphOf(['rule:R writes entity:Zeta', 'rule:R writes entity:Alpha']));
    expect(tie.slices.find((slice) => slice.constructs.includes('rule:R'))?.id).toBe(
      'entity-lifecycle:Alpha',
    );
    const wider = planSlices(
      graphOf([
        'rule:R writes entity:Zeta Zeta.a',
        'rule:R writes entity:Zeta Zeta.b',
        'rule:R writes entity:Alpha',
      ]),
    );
    expect(wider.slices.find((slice) => slice.constructs.includes('rule:R'))?.id).toBe(
      'entity-lifecycle:Zeta',
    );
  });

  it('gives a surface the rules only it triggers, but leaves rules that transition an entity to the entity', () => {
    const plan = planSlices(
      graphOf([
        'surface:Desk trigger rule:Ping Ping',
        'surface:Desk trigger rule:Ship Ship',
        'rule:Ship writes entity:Order Order.status',
      ]),
    );
    expect(summary(plan)).toEqual([
      '0 surface:Desk [rule:Ping surface:Desk]',
      '1 entity-lifecycle:Order [entity:Order rule:Ship]',
    ]);
  });

  it('groups loose rules into chains named after their first rule, separate chains kept apart', () => {
    const plan = planSlices(
      graphOf([
        'rule:Start trigger rule:Middle',
        'rule:Middle trigger rule:End',
        'rule:Other data rule:Alone',
      ]),
    );
    expect(summary(plan)).toEqual([
      '0 rule-chain:Other [rule:Alone rule:Other]',
      '0 rule-chain:Start [rule:End rule:Middle rule:Start]',
    ]);
    expect(plan.waves).toEqual([['rule-chain:Other', 'rule-chain:Start']]);
  });

  it('names a chain that loops on itself after its smallest rule', () => {
    const plan = planSlices(graphOf(['rule:B trigger rule:C', 'rule:C trigger rule:B']));
    expect(plan.slices.map((slice) => slice.id)).toEqual(['rule-chain:B']);
  });
});

describe('planSlices: order, cycles and the integration pass', () => {
  it('orders producers before consumers in waves and lists the crossings for the integration pass', () => {
    const plan = planSlices(
      graphOf([
        'rule:Lend creates entity:Loan',
        'rule:Lend trigger rule:Thank LoanClosed',
        'rule:Thank creates entity:Reminder',
        'rule:Lend data rule:Audit Loan.status',
      ]),
    );
    expect(plan.waves).toEqual([
      ['entity-lifecycle:Loan'],
      ['entity-lifecycle:Reminder', 'rule-chain:Audit'],
    ]);
    expect(plan.slices.find((slice) => slice.id === 'entity-lifecycle:Reminder')?.dependsOn).toEqual([
      'entity-lifecycle:Loan',
    ]);
    expect(plan.integration).toEqual({
      weed: 'whole-spec',
      crossings: [
        {
          fromSlice: 'entity-lifecycle:Loan',
          toSlice: 'entity-lifecycle:Reminder',
          links: [{ from: 'rule:Lend', to: 'rule:Thank', kind: 'trigger', via: 'LoanClosed', through: [] }],
        },
        {
          fromSlice: 'entity-lifecycle:Loan',
          toSlice: 'rule-chain:Audit',
          links: [{ from: 'rule:Lend', to: 'rule:Audit', kind: 'data', via: 'Loan.status', through: [] }],
        },
      ],
    });
  });

  it('condenses two lifecycles that feed each other into one cycle slice and reports the node cycle', () => {
    const plan = planSlices(
      graphOf([
        'rule:Lend writes entity:Book Book.status',
        'rule:Lend creates entity:Loan',
        'rule:Return writes entity:Loan Loan.status',
        'rule:Return writes entity:Loan Loan.returned_at',
        'rule:Return data rule:Lend Book.status',
        'rule:Lend data rule:Return Loan.status',
        'rule:Return trigger rule:Thank LoanClosed',
      ]),
    );
    const cycle = plan.slices[0]!;
    expect(cycle).toMatchObject({
      id: 'cycle:entity-lifecycle:Book',
      kind: 'cycle',
      merged: ['entity-lifecycle:Book', 'entity-lifecycle:Loan'],
      constructs: ['entity:Book', 'entity:Loan', 'rule:Lend', 'rule:Return'],
      wave: 0,
    });
    // Lend (Book's lifecycle) feeds Return through Loan.status, Return (Loan's) feeds Lend back through Book.status.
    expect(cycle.cycle).toEqual(['rule:Lend', 'rule:Return', 'rule:Lend']);
    expect(plan.waves).toEqual([['cycle:entity-lifecycle:Book'], ['rule-chain:Thank']]);
  });

  it('falls back to a slice-level walk when the slices feed each other at different constructs', () => {
    const plan = planSlices(
      graphOf([
        'rule:A1 writes entity:A',
        'rule:A2 writes entity:A',
        'rule:B1 writes entity:B',
        'rule:B2 writes entity:B',
        'rule:A1 data rule:B1',
        'rule:B2 data rule:A2',
      ]),
    );
    expect(plan.slices).toHaveLength(1);
    expect(plan.split).toBe(false);
    expect(plan.slices[0]!.cycle).toEqual(['rule:A1', 'rule:B1', 'rule:B2', 'rule:A2', 'rule:A1']);
  });

  it('plans only the touched constructs and still orders two ends joined through untouched ones', () => {
    const graph = graphOf([
      'rule:Make creates entity:Part',
      'rule:Make trigger rule:Pack Made',
      'rule:Pack trigger rule:Ship Packed',
      'rule:Ship writes entity:Crate',
    ]);
    const plan = planSlices(graph, ['rule:Make', 'rule:Ship', 'rule:Gone', 'field:Part.size']);
    expect(summary(plan)).toEqual([
      '0 entity-lifecycle:Part [rule:Make]',
      '1 entity-lifecycle:Crate [rule:Ship]',
    ]);
    expect(plan.ignored).toEqual(['field:Part.size', 'rule:Gone']);
    expect(plan.integration?.crossings[0]?.links).toEqual([
      { from: 'rule:Make', to: 'rule:Ship', kind: 'trigger', via: 'Made', through: ['rule:Pack'] },
    ]);
  });

  it('returns an empty plan when nothing is touched, and drops edges to unknown nodes', () => {
    expect(planSlices(graphOf(['rule:A writes entity:B']), [])).toEqual({
      slices: [],
      waves: [],
      split: false,
      integration: null,
      ignored: [],
    });
    const dangling = planSlices({ nodes: graphOf(['rule:A writes entity:B']).nodes, edges: [] });
    expect(dangling.slices.map((slice) => slice.id)).toEqual(['entity-lifecycle:B', 'rule-chain:A']);
  });
});
