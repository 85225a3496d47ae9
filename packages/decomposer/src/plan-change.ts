import { diffInventory, type SpecAnalysis } from '@allium-loop/allium';
import { planSlices } from './plan-slices.js';
import type { Plan } from './plan-types.js';
import { touchedFromDiff } from './touched-from-diff.js';

/**
 * The plan of a spec change: slices over only the constructs the change added, changed or removed (fields and
 * variants counted as their entity), on the graph of the spec after the change. `undefined` when the change
 * touched no construct of that graph. The one planner of a change: the run's first gather and `plan --since`.
 */
export function planChange(
  before: Pick<SpecAnalysis, 'inventory'>,
  after: Pick<SpecAnalysis, 'inventory' | 'graph'>,
): Plan | undefined {
  const nodes = new Set(after.graph.nodes.map((n) => n.id));
  const touched = touchedFromDiff(diffInventory(before.inventory, after.inventory)).filter((id) =>
    nodes.has(id),
  );
  return touched.length === 0 ? undefined : planSlices(after.graph, touched);
}
