/**
 * @allium-loop/decomposer — splits a goal into slices over the spec's dependency graph and orders them. Pure.
 */
export type { IntegrationPass, Plan, PlanLink, Slice, SliceCrossing, SliceKind } from './plan-types.js';
export {
  INTEGRATION_ID,
  type ConsolidatedQuestion,
  type RollUp,
  type RollUpTotals,
  type SliceReport,
  type SliceStatus,
} from './roll-up-types.js';
export { DecomposerError } from './decomposer-error.js';
export { MAX_BUNDLE_CONSTRUCTS, MIN_SLICE_CONSTRUCTS } from './merge-small-slices.js';
export { orderingGraph } from './ordering-graph.js';
export { assignWaves, planSlices, type PlanOptions } from './plan-slices.js';
export { normaliseQuestion, rollUp } from './roll-up.js';
export { renderPlanMermaid } from './render-plan-mermaid.js';
export { renderPlanText } from './render-plan-text.js';
export { touchedFromDiff } from './touched-from-diff.js';
export { planChange } from './plan-change.js';
