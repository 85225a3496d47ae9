import { describe, expect, it } from 'vitest';
import { analyzeSpecs, countOpenQuestions } from './analyze-specs.js';
import { readFixture, readReference, V3_FIXTURES } from './fixtures.test-helpers.js';
import { ruleDependencies } from './rule-info.js';

interface PlanObligation {
  id: string;
  dependencies?: Record<string, string[] | string>;
}

const analyse = (name: string) => analyzeSpecs([{ path: `${name}.allium`, text: readFixture(name) }]);

describe('rules as data: per-rule dependencies include the reference plan', () => {
  it.each(V3_FIXTURES)('%s', (name) => {
    const analysis = analyse(name);
    const plan = readReference(name, 'plan') as { obligations: PlanObligation[] };
    const checked = new Set<string>();
    for (const obligation of plan.obligations) {
      const ruleName = obligation.id.split('.')[1] ?? '';
      const deps = obligation.dependencies;
      if (deps === undefined || checked.has(ruleName)) continue;
      checked.add(ruleName);
      const rule = analysis.rules.find((r) => r.name === ruleName);
      expect(rule, ruleName).toBeDefined();
      if (rule === undefined) continue;
      const ours = ruleDependencies(rule);
      const pairs: [string, readonly string[]][] = [
        ['entities_read', ours.entitiesRead],
        ['entities_written', ours.entitiesWritten],
        ['entities_created', ours.entitiesCreated],
        ['trigger_emissions', ours.triggerEmissions],
      ];
      for (const [key, list] of pairs) {
        for (const entity of (deps[key] as string[] | undefined) ?? [])
          expect(list, `${ruleName} ${key}`).toContain(entity);
      }
      expect(ours.triggerSource, ruleName).toBe(deps['trigger_source']);
    }
    expect(checked.size).toBeGreaterThan(5);
  });

  it('finds more than the reference: `not exists` removals and derived triggers', () => {
    const text = [
      '-- allium: 3',
      'entity Hold {',
      '  status: open | closed',
      '  expired: status = closed',
      '}',
      'rule Release {',
      '  when: ReleaseHold(hold)',
      '  ensures: not exists hold',
      '}',
      'rule OnExpiry {',
      '  when: hold: Hold.expired',
      '  ensures: Notified(hold: hold)',
      '}',
      '',
    ].join('\n');
    const analysis = analyzeSpecs([{ path: 'h.allium', text }]);
    const release = analysis.rules.find((r) => r.name === 'Release');
    const onExpiry = analysis.rules.find((r) => r.name === 'OnExpiry');
    expect(release && ruleDependencies(release).entitiesRemoved).toEqual(['Hold']);
    expect(onExpiry?.triggers[0]).toMatchObject({ kind: 'derived', entity: 'Hold', field: 'expired' });
    expect(analysis.graph.edges).toContainEqual(
      expect.objectContaining({ from: 'rule:Release', to: 'entity:Hold', kind: 'removes' }),
    );
  });
});

describe('the dependency graph', () => {
  it('v3-lifecycle: surface → rule trigger edges and rule → rule data/trigger edges with evidence', () => {
    const { graph } = analyse('v3-lifecycle');
    const ids = graph.nodes.map((n) => n.id);
    expect(ids).toEqual(expect.arrayContaining(['rule:ShipOrder', 'entity:Order', 'surface:OrderDashboard']));
    expect(graph.edges).toContainEqual(
      expect.objectContaining({
        from: 'surface:OrderDashboard',
        to: 'rule:ShipOrder',
        kind: 'trigger',
        via: 'ShipOrder',
      }),
    );
    const toNotify = graph.edges.find((e) => e.from === 'rule:ShipOrder' && e.to === 'rule:NotifyOnShipment');
    expect(toNotify).toMatchObject({ kind: 'trigger', via: 'Order.status' });
    expect(toNotify?.evidence.from).toEqual({ file: 'v3-lifecycle.allium', line: 88, col: 9 });
    expect(toNotify?.evidence.to.line).toBe(115);
    expect(graph.edges).toContainEqual(
      expect.objectContaining({
        from: 'rule:ConfirmOrder',
        to: 'rule:ShipOrder',
        kind: 'data',
        via: 'Order.status',
      }),
    );
  });

  it('orders the lending example of ALLIUM.md: creation feeds temporal and chained rules', () => {
    const text = [
      '-- allium: 3',
      'entity Loan {',
      '  due_at: Timestamp',
      '  status: active | overdue | returned',
      '}',
      'rule LendBook {',
      '  when: LendRequested(member, book)',
      '  ensures: Loan.created(book: book, due_at: now, status: active)',
      '}',
      'rule MarkOverdue {',
      '  when: loan: Loan.due_at <= now',
      '  requires: loan.status = active',
      '  ensures: loan.status = overdue',
      '}',
      'rule ReturnBook {',
      '  when: ReturnRequested(loan)',
      '  requires: loan.status in {active, overdue}',
      '  ensures:',
      '    loan.status = returned',
      '    LoanClosed(loan: loan)',
      '}',
      'rule ThankBorrower {',
      '  when: LoanClosed(loan)',
      '  ensures: Thanked(loan: loan)',
      '}',
      'surface Counter {',
      '  provides: LendRequested(member, book)',
      '  timeout: MarkOverdue',
      '}',
      '',
    ].join('\n');
    const { graph } = analyzeSpecs([{ path: 'l.allium', text }]);
    const edge = (from: string, to: string) =>
      graph.edges.filter((e) => e.from === from && e.to === to).map((e) => `${e.kind}:${e.via}`);
    expect(edge('rule:LendBook', 'rule:MarkOverdue')).toEqual(
      expect.arrayContaining(['trigger:Loan.due_at', 'data:Loan.status']),
    );
    expect(edge('rule:LendBook', 'rule:ReturnBook')).toContain('data:Loan.status');
    expect(edge('rule:ReturnBook', 'rule:ThankBorrower')).toEqual(['trigger:LoanClosed']);
    const thank = analyzeSpecs([{ path: 'l.allium', text }]).rules.find((r) => r.name === 'ThankBorrower');
    expect(thank?.triggers[0]).toMatchObject({ kind: 'chained', name: 'LoanClosed' });
    expect(edge('surface:Counter', 'rule:LendBook')).toEqual(['trigger:LendRequested']);
    expect(edge('surface:Counter', 'rule:MarkOverdue')).toEqual(['timeout:MarkOverdue']);
  });
});

describe('the dependency graph: surfaces, variants and context', () => {
  const text = [
    '-- allium: 3',
    'external entity Member {',
    '  name: String',
    '}',
    'entity Document {',
    '  title: String',
    '  status: draft | published',
    '}',
    'variant Manual : Document {',
    '  pages: Integer',
    '}',
    'rule Publish {',
    '  when: PublishRequested(doc)',
    '  requires: doc.status = draft',
    '  ensures:',
    '    doc.status = published',
    '    Receipt.created(doc: doc)',
    '}',
    'surface Library {',
    '  facing reader: Member',
    '  context doc: Document',
    '  exposes:',
    '    doc.title',
    '    doc.status',
    '  provides: PublishRequested(doc)',
    '}',
    '',
  ].join('\n');
  const { graph } = analyzeSpecs([{ path: 'd.allium', text }]);
  const edge = (from: string, to: string) =>
    graph.edges.filter((e) => e.from === from && e.to === to).map((e) => `${e.kind}:${e.via}`);

  it('links the entities a surface binds and exposes to the surface', () => {
    expect(edge('entity:Document', 'surface:Library')).toEqual([
      'exposes:Document',
      'exposes:Document.status',
      'exposes:Document.title',
    ]);
    expect(edge('entity:Member', 'surface:Library')).toEqual(['exposes:Member']);
  });

  it('links a variant to its base', () => {
    expect(edge('entity:Document', 'entity:Manual')).toEqual(['extends:Document']);
  });

  it('marks external entities and names no file declares as context', () => {
    const context = (id: string) => graph.nodes.find((n) => n.id === id)?.context;
    expect(context('entity:Member')).toBe('external');
    expect(context('entity:Receipt')).toBe('undeclared');
    expect(context('entity:Document')).toBeUndefined();
    expect(context('entity:Manual')).toBeUndefined();
  });
});

describe('surfaces and questions', () => {
  it('extracts a surface: actor, context, provides, exposes', () => {
    const surface = analyse('v3-lifecycle').surfaces[0];
    expect(surface).toMatchObject({
      name: 'OrderDashboard',
      actor: { binding: 'viewer', type: 'Admin' },
      context: { binding: 'order', type: 'Order' },
      exposes: ['order.status', 'order.tracking_number'],
    });
    expect(surface?.provides.map((p) => p.name)).toEqual(['CancelByCustomer', 'ShipOrder']);
  });

  it('lists open questions with their locations and counts them', () => {
    const analysis = analyse('comprehensive-edge-cases');
    expect(analysis.openQuestions).toEqual([
      {
        text: 'Should archived projects be permanently deleted after a retention period?',
        location: { file: 'comprehensive-edge-cases.allium', line: 387, col: 1 },
      },
      {
        text: 'How should task dependencies handle circular references?',
        location: { file: 'comprehensive-edge-cases.allium', line: 388, col: 1 },
      },
    ]);
    expect(
      countOpenQuestions([
        { path: 'a', text: readFixture('comprehensive-edge-cases') },
        { path: 'b', text: readFixture('v3-lifecycle') },
      ]),
    ).toBe(3);
  });

  it('returns the reference-shaped model over the set', () => {
    const reference = readReference('v3-lifecycle', 'model') as Record<string, unknown>;
    expect(analyse('v3-lifecycle').model.entities).toEqual(reference['entities']);
  });
});
