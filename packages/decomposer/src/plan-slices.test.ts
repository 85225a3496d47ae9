import type { DependencyGraph } from '@allium-loop/allium';
import { describe, expect, it } from 'vitest';
import { graphOf } from './graph-builder.test-helpers.js';
import { MAX_BUNDLE_CONSTRUCTS, MIN_SLICE_CONSTRUCTS, planSlices as planWithMerging } from './index.js';

/** These tests look at how slices are formed and ordered, so every anchor keeps its own slice (no merging). */
const planSlices = (graph: DependencyGraph, touched?: Iterable<string>) =>
  planWithMerging(graph, touched, { mergeSmallSlices: false });

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

  it('gives a surface the rules only it triggers, leaves rules that transition an entity to the entity, and runs the surface after the rules it offers', () => {
    const plan = planSlices(
      graphOf([
        'surface:Desk trigger rule:Ping Ping',
        'surface:Desk trigger rule:Ship Ship',
        'rule:Ship writes entity:Order Order.status',
      ]),
    );
    expect(summary(plan)).toEqual([
      '0 entity-lifecycle:Order [entity:Order rule:Ship]',
      '1 surface:Desk [rule:Ping surface:Desk]',
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
      context: [],
    });
    const dangling = planSlices({ nodes: graphOf(['rule:A writes entity:B']).nodes, edges: [] });
    expect(dangling.slices.map((slice) => slice.id)).toEqual(['entity-lifecycle:B', 'rule-chain:A']);
  });
});

describe('planSlices: small slices, context and the ordering graph', () => {
  const merging = (graph: DependencyGraph, touched?: Iterable<string>) => planWithMerging(graph, touched);

  it('plans neither external nor undeclared entities: they are context', () => {
    const graph = graphOf(['rule:Ship writes entity:Order Order.status', 'rule:Ship creates entity:Email']);
    const withContext: DependencyGraph = {
      ...graph,
      nodes: graph.nodes.map((n) => (n.id === 'entity:Email' ? { ...n, context: 'undeclared' as const } : n)),
    };
    const plan = merging(withContext);
    expect(plan.context).toEqual(['entity:Email']);
    expect(plan.slices.map((slice) => slice.id)).toEqual(['entity-lifecycle:Order']);
    // A rule that only creates context entities is not anchored by them.
    const lone = merging({ ...withContext, edges: withContext.edges.filter((e) => e.kind === 'creates') }, [
      'rule:Ship',
      'entity:Email',
    ]);
    expect(lone.slices.map((slice) => slice.id)).toEqual(['rule-chain:Ship']);
  });

  it('puts a variant in its base entity’s lifecycle', () => {
    const plan = merging(
      graphOf([
        'entity:Document extends entity:TechnicalDoc',
        'rule:Publish writes entity:Document Document.status',
      ]),
    );
    expect(plan.slices.map((slice) => `${slice.id} [${slice.constructs.join(' ')}]`)).toEqual([
      'entity-lifecycle:Document [entity:Document entity:TechnicalDoc rule:Publish]',
    ]);
  });

  it('runs a surface after the entity it exposes and the rules it offers', () => {
    const plan = planSlices(
      graphOf([
        'entity:Order exposes surface:Desk Order.status',
        'rule:Ship writes entity:Order Order.status',
        'surface:Desk trigger rule:Ship Ship',
        'surface:Desk trigger rule:Ping Ping',
      ]),
    );
    expect(plan.slices.map((slice) => `${slice.wave} ${slice.id}`)).toEqual([
      '0 entity-lifecycle:Order',
      '1 surface:Desk',
    ]);
    expect(plan.slices.some((slice) => slice.kind === 'cycle')).toBe(false);
  });

  it('merges a lone surface or rule into the neighbour it is linked to most', () => {
    const plan = merging(
      graphOf([
        'rule:Lend writes entity:Book Book.status',
        'rule:Lend creates entity:Loan',
        'rule:Return writes entity:Loan Loan.status',
        'entity:Book exposes surface:Shelf Book.status',
        'entity:Book reads rule:Audit Book.status',
        'entity:Loan reads rule:Audit Loan.status',
        'entity:Loan reads rule:Audit Loan.due',
      ]),
    );
    const byId = new Map(plan.slices.map((slice) => [slice.id, slice]));
    expect(byId.get('entity-lifecycle:Book')?.absorbed).toEqual(['surface:Shelf']);
    // Audit reads Loan twice and Book once: it joins Loan.
    expect(byId.get('entity-lifecycle:Loan')?.absorbed).toEqual(['rule-chain:Audit']);
    expect(byId.has('rule-chain:Audit')).toBe(false);
  });

  it('never merges a lone slice where the merge would make a cycle, and keeps a linked lone entity', () => {
    // Mid feeds EA twice and EB once, and EB feeds EA. Joining EA (its strongest link) would make EA feed EB feed
    // EA, so Mid joins EB instead.
    const graph = graphOf([
      'rule:A writes entity:EA EA.x',
      'rule:A2 writes entity:EA EA.y',
      'rule:Mid trigger rule:A Go',
      'rule:Mid trigger rule:A2 Go',
      'rule:Mid trigger rule:B Went',
      'rule:B writes entity:EB EB.x',
      'rule:B trigger rule:A Done',
    ]);
    const plan = merging(graph);
    expect(
      plan.slices.map((slice) => `${slice.wave} ${slice.id} ${(slice.absorbed ?? []).join(',')}`),
    ).toEqual(['0 entity-lifecycle:EB rule-chain:Mid', '1 entity-lifecycle:EA ']);
    // A lone entity that others are linked to keeps its own slice.
    const lone = merging(
      graphOf(['entity:Notice reads rule:Send Notice.body', 'rule:Send writes entity:Mail Mail.x']),
    );
    expect(lone.slices.map((slice) => slice.id)).toEqual([
      'entity-lifecycle:Notice',
      'entity-lifecycle:Mail',
    ]);
  });

  it('bundles lone unlinked constructs into as few even bundles as the limit allows', () => {
    const ids = Array.from(
      { length: 2 * MAX_BUNDLE_CONSTRUCTS + 1 },
      (_, i) => `rule:R${String(i).padStart(2, '0')}`,
    );
    const plan = merging(graphOf([], ids));
    expect(plan.slices.every((slice) => slice.kind === 'bundle')).toBe(true);
    const sizes = plan.slices.map((slice) => slice.constructs.length);
    expect(sizes.length).toBe(3);
    expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
    expect(sizes.reduce((a, b) => a + b)).toBe(ids.length);
    expect(MIN_SLICE_CONSTRUCTS).toBe(2);
  });
});
