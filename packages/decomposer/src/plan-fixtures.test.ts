import { readFileSync } from 'node:fs';
import { analyzeSpecs, type DependencyGraph } from '@allium-loop/allium';
import { describe, expect, it } from 'vitest';
import { planSlices, type Plan } from './index.js';

/** The graph `@allium-loop/allium` builds for one fixture (copied from juxt/allium-tools; licence beside it). */
function graphOf(name: string): DependencyGraph {
  const path = `${name}.allium`;
  const text = readFileSync(new URL(`./fixtures/${path}`, import.meta.url), 'utf8');
  return analyzeSpecs([{ path, text }]).graph;
}

/** Each wave as `slice-id [constructs]`, the shape the expectations below are written in. */
const waves = (plan: Plan) =>
  plan.waves.map((wave) =>
    wave.map((id) => `${id} [${plan.slices.find((slice) => slice.id === id)!.constructs.join(' ')}]`),
  );

describe('planSlices on v3-lifecycle.allium', () => {
  const graph = graphOf('v3-lifecycle');

  it('plans the whole spec (a capture goal) as the Order lifecycle plus a bundle, with the rest as context', () => {
    const plan = planSlices(graph);
    expect(waves(plan)).toEqual([
      [
        // HttpResponse and Subscription are declared but nothing creates, transitions or reads them through a
        // tracked field: two lone constructs linked to nothing, bundled rather than given a loop each.
        'bundle:entity-lifecycle:HttpResponse [entity:HttpResponse entity:Subscription]',
        // Every rule that assigns an Order field belongs to Order's lifecycle. ArchiveDelivered and NotifyOnShipment
        // create an AuditLog and an Email, which the spec never declares: those are context, so the two rules are
        // lone and join the slice they are linked to. So does the dashboard, which exposes Order and offers
        // ShipOrder: a surface is built on the entity it shows and the operations it offers, never before them.
        'entity-lifecycle:Order [entity:Order rule:ArchiveDelivered rule:BulkConfirm rule:CancelByCustomer ' +
          'rule:CancelByTimeout rule:ConfirmOrder rule:LocaleCheck rule:NotifyOnShipment ' +
          'rule:ProcessCancellation rule:ShipOrder surface:OrderDashboard]',
      ],
    ]);
    expect(plan.slices.find((slice) => slice.id === 'entity-lifecycle:Order')?.absorbed).toEqual([
      'rule-chain:ArchiveDelivered',
      'rule-chain:NotifyOnShipment',
      'surface:OrderDashboard',
    ]);
    // Customer is an `external entity`; AuditLog and Email are names no file declares.
    expect(plan.context).toEqual(['entity:AuditLog', 'entity:Customer', 'entity:Email']);
    expect(plan.integration?.crossings).toEqual([]);
  });

  it('keeps a goal that touches only the order rules in one slice, without an integration pass', () => {
    // "support partial shipments": the first tend changes ShipOrder and ConfirmOrder, both Order transitions.
    const plan = planSlices(graph, ['rule:ShipOrder', 'rule:ConfirmOrder']);
    expect(waves(plan)).toEqual([['entity-lifecycle:Order [rule:ConfirmOrder rule:ShipOrder]']]);
    expect(plan).toMatchObject({ split: false, integration: null });
  });

  it('orders the shipment notification after Order when small slices are kept apart', () => {
    // ShipOrder triggers NotifyOnShipment (Order.status transitions_to shipped): producer before consumer.
    const plan = planSlices(graph, ['rule:ShipOrder', 'rule:NotifyOnShipment'], { mergeSmallSlices: false });
    expect(waves(plan)).toEqual([
      ['entity-lifecycle:Order [rule:ShipOrder]'],
      ['rule-chain:NotifyOnShipment [rule:NotifyOnShipment]'],
    ]);
    expect(plan.integration?.crossings[0]?.links).toEqual([
      {
        from: 'rule:ShipOrder',
        to: 'rule:NotifyOnShipment',
        kind: 'trigger',
        via: 'Order.status',
        through: [],
      },
    ]);
    // By default the lone notification rule joins the slice it is linked to.
    expect(waves(planSlices(graph, ['rule:ShipOrder', 'rule:NotifyOnShipment']))).toEqual([
      ['entity-lifecycle:Order [rule:NotifyOnShipment rule:ShipOrder]'],
    ]);
  });
});

describe('planSlices on comprehensive-edge-cases.allium', () => {
  const graph = graphOf('comprehensive-edge-cases');
  const plan = planSlices(graph);

  it('puts the task rules in Task’s lifecycle, after Project whose status CreateTask requires', () => {
    // CreateTask and AssignDefaultPriority create Tasks; CategoriseEffort and RequireAssignee assign Task fields.
    // CreateTask reads Project.status and Project.tasks, so Task's lifecycle waits for Project's. The rules that
    // only create undeclared AuditLogs/Notifications after reading Task join Task.
    expect(waves(plan)[1]).toEqual([
      'entity-lifecycle:Task [entity:Task rule:ArchiveCompleted rule:AssignDefaultPriority rule:CategoriseEffort ' +
        'rule:CreateTask rule:PrioritiseTask rule:RequireAssignee rule:RestrictTransitions]',
    ]);
    expect(plan.slices.find((slice) => slice.id === 'entity-lifecycle:Task')?.dependsOn).toEqual([
      'entity-lifecycle:Project',
    ]);
  });

  it('treats the entities no file declares as context, never as slices', () => {
    expect(plan.context).toEqual([
      'entity:AuditLog',
      'entity:DigestEmail',
      'entity:Notification',
      'entity:NotificationSchedule',
      'entity:Report',
      'entity:User',
    ]);
    for (const id of plan.context) expect(plan.slices.flatMap((slice) => slice.constructs)).not.toContain(id);
  });

  it('bundles the rules and entities nothing links, and lets the project dashboard join Project', () => {
    // RefreshDashboard, FallbackAssignment, ValidateAll, CalculateBudget, ValidateSession and MigrateData emit
    // triggers nothing consumes and touch no tracked field; Email, SMS and Assignment are never used by a rule.
    expect(plan.slices.filter((slice) => slice.kind === 'bundle').map((slice) => slice.constructs)).toEqual([
      ['entity:Assignment', 'entity:Email', 'entity:SMS', 'rule:BatchNotify', 'rule:CalculateBudget'],
      ['rule:CreateReport', 'rule:FallbackAssignment', 'rule:LogAction', 'rule:MigrateData'],
      ['rule:RefreshDashboard', 'rule:ValidateAll', 'rule:ValidateSession', 'surface:TaskBoard'],
    ]);
    expect(plan.slices.find((slice) => slice.id === 'entity-lifecycle:Project')?.absorbed).toEqual([
      'rule-chain:ExpireStale',
      'rule-chain:NotifyOnActivation',
      'rule-chain:NotifyTeam',
      'surface:ProjectDashboard',
    ]);
  });

  it('has five slices in two waves and no cycle (twenty with small slices kept apart)', () => {
    expect(plan.waves.map((wave) => wave.length)).toEqual([4, 1]);
    expect(plan.slices.filter((slice) => slice.kind === 'cycle')).toEqual([]);
    const raw = planSlices(graph, undefined, { mergeSmallSlices: false });
    expect(raw.slices.length).toBeGreaterThan(plan.slices.length);
  });
});
