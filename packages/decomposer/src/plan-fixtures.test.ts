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

  it('plans the whole spec (a capture goal) as seven slices in three waves', () => {
    const plan = planSlices(graph);
    expect(waves(plan)).toEqual([
      [
        // Customer, HttpResponse and Subscription are declared but no rule creates, transitions or reads them
        // through a tracked field, so each is a lifecycle of its own with nothing before it.
        'entity-lifecycle:Customer [entity:Customer]',
        'entity-lifecycle:HttpResponse [entity:HttpResponse]',
        'entity-lifecycle:Subscription [entity:Subscription]',
        // The dashboard provides ShipOrder: it produces the trigger, so it comes before the rule it feeds.
        'surface:OrderDashboard [surface:OrderDashboard]',
      ],
      [
        // Every rule that assigns an Order field belongs to Order's lifecycle, including LocaleCheck (it writes
        // Order.locale) and BulkConfirm. Their data edges on Order.status loop among themselves, inside the slice.
        'entity-lifecycle:Order [entity:Order rule:BulkConfirm rule:CancelByCustomer rule:CancelByTimeout ' +
          'rule:ConfirmOrder rule:LocaleCheck rule:ProcessCancellation rule:ShipOrder]',
      ],
      [
        // ArchiveDelivered and NotifyOnShipment transition nothing; they create an AuditLog and an Email (entities
        // the graph knows by their creation), so they join those lifecycles, after Order whose status they read.
        'entity-lifecycle:AuditLog [entity:AuditLog rule:ArchiveDelivered]',
        'entity-lifecycle:Email [entity:Email rule:NotifyOnShipment]',
      ],
    ]);
    // More than one slice, so the integration pass follows; its crossings are the Order → Email/AuditLog handoffs
    // (ShipOrder triggers NotifyOnShipment via Order.status) and the dashboard's ShipOrder action.
    expect(plan.integration?.crossings.map((c) => `${c.fromSlice} → ${c.toSlice}`)).toEqual([
      'entity-lifecycle:Order → entity-lifecycle:AuditLog',
      'entity-lifecycle:Order → entity-lifecycle:Email',
      'surface:OrderDashboard → entity-lifecycle:Order',
    ]);
    expect(plan.slices.some((slice) => slice.kind === 'cycle')).toBe(false);
  });

  it('keeps a goal that touches only the order rules in one slice, without an integration pass', () => {
    // "support partial shipments": the first tend changes ShipOrder and ConfirmOrder, both Order transitions.
    const plan = planSlices(graph, ['rule:ShipOrder', 'rule:ConfirmOrder']);
    expect(waves(plan)).toEqual([['entity-lifecycle:Order [rule:ConfirmOrder rule:ShipOrder]']]);
    expect(plan).toMatchObject({ split: false, integration: null });
  });

  it('splits a goal that also touches the shipment notification, ordering Order first', () => {
    // ShipOrder triggers NotifyOnShipment (Order.status transitions_to shipped): producer before consumer.
    const plan = planSlices(graph, ['rule:ShipOrder', 'rule:NotifyOnShipment']);
    expect(waves(plan)).toEqual([
      ['entity-lifecycle:Order [rule:ShipOrder]'],
      ['entity-lifecycle:Email [rule:NotifyOnShipment]'],
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
  });
});

describe('planSlices on comprehensive-edge-cases.allium', () => {
  const graph = graphOf('comprehensive-edge-cases');
  const plan = planSlices(graph);

  it('puts the task rules in Task’s lifecycle, after Project whose status CreateTask requires', () => {
    // CreateTask and AssignDefaultPriority create Tasks; CategoriseEffort and RequireAssignee assign Task fields.
    // CreateTask reads Project.status and Project.tasks, so Task's lifecycle waits for Project's.
    expect(waves(plan)[1]).toContain(
      'entity-lifecycle:Task [entity:Task rule:AssignDefaultPriority rule:CategoriseEffort rule:CreateTask ' +
        'rule:RequireAssignee]',
    );
    expect(plan.slices.find((slice) => slice.id === 'entity-lifecycle:Task')?.dependsOn).toEqual([
      'entity-lifecycle:Project',
    ]);
  });

  it('gathers the side-effect rules around what they create, in the last wave', () => {
    // ArchiveCompleted, RestrictTransitions and LogAction only create AuditLogs; the notifying rules only create
    // Notifications. Both slices read Task and Project state, so they come after both lifecycles.
    expect(waves(plan)[2]).toEqual([
      'entity-lifecycle:AuditLog [entity:AuditLog rule:ArchiveCompleted rule:LogAction rule:RestrictTransitions]',
      'entity-lifecycle:Notification [entity:Notification rule:NotifyOnActivation rule:NotifyTeam ' +
        'rule:PrioritiseTask]',
    ]);
  });

  it('leaves rules that only emit triggers nobody handles as independent one-rule chains in the first wave', () => {
    // RefreshDashboard, FallbackAssignment, ValidateAll, CalculateBudget, ValidateSession and MigrateData emit
    // triggers that no rule or surface consumes and touch no tracked entity field: nothing orders them.
    const chains = plan.slices.filter((slice) => slice.kind === 'rule-chain' && slice.wave === 0);
    expect(chains.map((slice) => slice.id)).toEqual([
      'rule-chain:CalculateBudget',
      'rule-chain:FallbackAssignment',
      'rule-chain:MigrateData',
      'rule-chain:RefreshDashboard',
      'rule-chain:ValidateAll',
      'rule-chain:ValidateSession',
    ]);
    // ExpireStale emits Project.unlocked (a trigger, not a write) and reads Project.locked_until: a chain after Project.
    expect(plan.slices.find((slice) => slice.id === 'rule-chain:ExpireStale')).toMatchObject({
      wave: 1,
      dependsOn: ['entity-lifecycle:Project'],
    });
  });

  it('has twenty slices in three waves and no cycle', () => {
    // The surfaces provide triggers (CreateTask, AssignTask, CompleteTask…) that no rule's `when` names, so they
    // feed nothing and sit in the first wave on their own.
    expect(plan.waves.map((wave) => wave.length)).toEqual([15, 3, 2]);
    expect(plan.waves[0]).toEqual(expect.arrayContaining(['surface:ProjectDashboard', 'surface:TaskBoard']));
    expect(plan.slices.filter((slice) => slice.kind === 'cycle')).toEqual([]);
  });
});
