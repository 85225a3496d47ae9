import type { GraphEdgeKind } from '@allium-loop/allium';

/**
 * How a slice was formed: around an entity (the entity, its variants and the rules that create and transition it),
 * around a surface (the surface and the rules only it triggers), as an independent chain of rules, as several of
 * those condensed because their dependencies form a cycle, or as a bundle of single constructs that depend on
 * nothing else in the plan.
 */
export type SliceKind = 'entity-lifecycle' | 'surface' | 'rule-chain' | 'cycle' | 'bundle';

/** A unit of work the loop converges on its own: a set of graph node ids. */
export interface Slice {
  /**
   * Stable id derived from the slice's anchor construct: `entity-lifecycle:Order`, `surface:Dashboard`,
   * `rule-chain:<first rule of the chain>`, or `cycle:<smallest merged slice id>`.
   */
  readonly id: string;
  readonly kind: SliceKind;
  /** Graph node ids (`rule:X`, `entity:Y`, `surface:Z`) in this slice, sorted. */
  readonly constructs: readonly string[];
  /** Ids of slices that must converge first (producers of this slice's inputs), sorted. */
  readonly dependsOn: readonly string[];
  /** The wave (0-based) the slice runs in: one more than the latest wave it depends on. */
  readonly wave: number;
  /** For a condensed cycle: the ids of the slices merged into it, sorted. */
  readonly merged?: readonly string[];
  /**
   * For a condensed cycle: a closed walk of node ids that shows why the slices cannot be ordered (first id repeated
   * at the end). Consecutive ids are joined by a graph link, or — when no node-level cycle exists — sit in the same
   * merged slice.
   */
  readonly cycle?: readonly string[];
  /**
   * Ids of the one-construct slices merged into this one (see `MIN_SLICE_CONSTRUCTS`): a lone surface, rule or
   * entity joins the neighbour it is linked to most, and lone constructs linked to nothing are bundled. Sorted.
   */
  readonly absorbed?: readonly string[];
}

/**
 * A dependency between two touched constructs: a graph edge between them, or a path through constructs the goal
 * does not touch (`through`, in order). `kind` and `via` are those of the path's first edge.
 */
export interface PlanLink {
  readonly from: string;
  readonly to: string;
  readonly kind: GraphEdgeKind;
  readonly via: string;
  readonly through: readonly string[];
}

/** The links that cross from one slice to another: the chains the integration pass tests end to end. */
export interface SliceCrossing {
  readonly fromSlice: string;
  readonly toSlice: string;
  readonly links: readonly PlanLink[];
}

/** The last step after more than one slice: cross-entity tests over the crossings, then a weed of the whole spec. */
export interface IntegrationPass {
  /** Slice-to-slice crossings, sorted by source then target slice. */
  readonly crossings: readonly SliceCrossing[];
  /** Always `whole-spec`: the pass ends with a weed over the entire spec, not just the touched constructs. */
  readonly weed: 'whole-spec';
}

/** The ordered decomposition of a goal: slices in waves, then the integration pass when there is more than one. */
export interface Plan {
  /** Every slice, ordered by wave and then by id. Each touched construct is in exactly one. */
  readonly slices: readonly Slice[];
  /** Slice ids grouped in waves; slices in one wave are independent of each other and could run concurrently. */
  readonly waves: readonly (readonly string[])[];
  /** Whether the goal is split: true exactly when there is more than one slice. */
  readonly split: boolean;
  /** The integration pass, present exactly when the goal is split. */
  readonly integration: IntegrationPass | null;
  /** Touched ids that are not nodes of the graph (removed constructs, fields, config), sorted; they are not planned. */
  readonly ignored: readonly string[];
  /**
   * Touched entity nodes the spec does not own — `external entity` declarations and names rules use that no file
   * declares — sorted. They are context for the slices that use them, never slices of their own.
   */
  readonly context: readonly string[];
}
