/** How a slice was formed. */
export type SliceKind = 'entity-lifecycle' | 'surface' | 'rule-chain' | 'cycle';

/** A unit of work the loop converges on its own: a set of graph node ids. */
export interface Slice {
  /** Stable id derived from the slice's anchor construct, e.g. `entity-lifecycle:Loan`. */
  readonly id: string;
  readonly kind: SliceKind;
  /** Graph node ids (`rule:X`, `entity:Y`, `surface:Z`) in this slice. */
  readonly constructs: readonly string[];
  /** Ids of slices that must converge first (producers of this slice's inputs). */
  readonly dependsOn: readonly string[];
  /** For a condensed cycle, the node path that forms it. */
  readonly cycle?: readonly string[];
}

/** The ordered decomposition of a goal: slices in waves, then the integration pass when there is more than one. */
export interface Plan {
  readonly slices: readonly Slice[];
  /** Slice ids grouped in waves; slices in one wave are independent of each other. */
  readonly waves: readonly (readonly string[])[];
  /** Whether an integration pass runs after the slices (always when there is more than one slice). */
  readonly integration: boolean;
}
