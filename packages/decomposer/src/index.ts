/**
 * @allium-loop/decomposer — splits a goal into slices over the spec's dependency graph and orders them. Pure.
 */
export type { Plan, Slice, SliceKind } from './plan-types.js';
