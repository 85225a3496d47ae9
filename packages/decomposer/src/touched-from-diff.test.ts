import { analyzeSpecs, diffInventory } from '@allium-loop/allium';
import { describe, expect, it } from 'vitest';
import { planSlices, touchedFromDiff } from './index.js';

const BEFORE = `-- allium: 3

entity Order {
    status: placed | shipped
}

config {
    max_items: Integer = 10
}

rule ShipOrder {
    when: ShipOrder(order)
    requires: order.status = placed
    ensures: order.status = shipped
}

rule Forgotten {
    when: Forget(order)
    ensures: order.status = placed
}
`;

// The goal added a field to Order, changed ShipOrder, raised a config limit and removed the Forgotten rule.
const AFTER = BEFORE.replace('status: placed | shipped', 'status: placed | shipped\n    carrier: String')
  .replace(
    'ensures: order.status = shipped',
    'ensures:\n        order.status = shipped\n        order.carrier = "post"',
  )
  .replace('= 10', '= 20')
  .replace(/rule Forgotten \{[^}]*\}\n/, '');

const inventory = (text: string) => analyzeSpecs([{ path: 'shop.allium', text }]).inventory;

describe('touchedFromDiff', () => {
  it('maps a real inventory diff to graph ids, fields counted as their entity', () => {
    const touched = touchedFromDiff(diffInventory(inventory(BEFORE), inventory(AFTER)));
    expect(touched).toEqual(['config:max_items', 'entity:Order', 'rule:Forgotten', 'rule:ShipOrder']);
    const plan = planSlices(analyzeSpecs([{ path: 'shop.allium', text: AFTER }]).graph, touched);
    expect(plan.slices.map((slice) => `${slice.id} [${slice.constructs.join(' ')}]`)).toEqual([
      'entity-lifecycle:Order [entity:Order rule:ShipOrder]',
    ]);
    expect(plan.ignored).toEqual(['config:max_items', 'rule:Forgotten']);
  });
});
