import type { SourceLocation } from './diagnostic.js';

/** What a dependency-graph node stands for. */
export type GraphNodeKind = 'rule' | 'entity' | 'surface';

/** A rule, entity or surface in the dependency graph. `id` is `kind:Name` and stable across parses. */
export interface GraphNode {
  readonly id: string;
  readonly kind: GraphNodeKind;
  readonly name: string;
  readonly location: SourceLocation;
  /**
   * For an entity node the spec does not own: `external` (an `external entity`, owned elsewhere) or `undeclared` (a
   * name rules use that no file of the set declares). The decomposer plans neither; they are context.
   */
  readonly context?: 'external' | 'undeclared';
}

/**
 * Why one node depends on another: `trigger` (the producer makes the consumer fire), `data` (a field the producer
 * writes is read by the consumer), `creates`/`removes`/`writes`/`reads` (rule ↔ entity), `timeout` (surface → rule), `exposes` (entity → a surface
 * that binds it as context or exposes its fields), `extends` (base entity → variant).
 */
export type GraphEdgeKind =
  'trigger' | 'data' | 'creates' | 'removes' | 'writes' | 'reads' | 'timeout' | 'exposes' | 'extends';

/** A directed edge from producer to consumer, with the source lines of both ends as evidence. */
export interface GraphEdge {
  readonly from: string;
  readonly to: string;
  readonly kind: GraphEdgeKind;
  /** What links the ends: a trigger name, or `Entity.field`. */
  readonly via: string;
  readonly evidence: { readonly from: SourceLocation; readonly to: SourceLocation };
}

/** The data-flow and trigger graph of a spec set; the decomposer slices it. */
export interface DependencyGraph {
  readonly nodes: readonly GraphNode[];
  readonly edges: readonly GraphEdge[];
}
