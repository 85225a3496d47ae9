/**
 * @allium-loop/decomposer — splits a goal into slices over the spec's dependency graph and orders them. Pure.
 */
export type { IntegrationPass, Plan, PlanLink, Slice, SliceCrossing, SliceKind } from './plan-types.js';
export { planSlices } from './plan-slices.js';
