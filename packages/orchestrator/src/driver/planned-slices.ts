import { INTEGRATION_ID, type Plan } from '@allium-loop/decomposer';
import type { PlannedSlice } from './loop-ports.js';

/**
 * The decomposer's plan as the driver runs it: its slices in wave order, then — when the goal is split — the
 * integration pass, whose chains are the links that cross from one slice to another. Pure.
 */
export function plannedSlices(plan: Plan): PlannedSlice[] {
  const byId = new Map(plan.slices.map((s) => [s.id, s]));
  const slices: PlannedSlice[] = plan.waves.flat().flatMap((id) => {
    const slice = byId.get(id);
    return slice === undefined
      ? []
      : [{ id: slice.id, constructs: [...slice.constructs], dependsOn: [...slice.dependsOn] }];
  });
  if (plan.integration === null) return slices;
  const chains = plan.integration.crossings.flatMap((crossing) =>
    crossing.links.map((link) => [link.from, ...link.through, link.to]),
  );
  return [
    ...slices,
    {
      id: INTEGRATION_ID,
      constructs: [...new Set(chains.flat())].sort(),
      dependsOn: slices.map((slice) => slice.id),
      chains,
    },
  ];
}
