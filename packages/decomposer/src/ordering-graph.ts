import type { DependencyGraph, GraphEdge } from '@allium-loop/allium';

/**
 * The graph the decomposer orders slices by. It is the dependency graph with one change: a surface's `trigger` and
 * `timeout` edges are turned round. At run time the surface makes the rule fire, but a surface is built on the
 * operations it offers — its tests call the rule — so for planning the surface depends on the rule, just as it
 * depends (through `exposes`) on the entities it shows. Without the turn a surface that exposes an entity and offers
 * that entity's operations would form a cycle with it, and a surface would run before the entities it shows.
 */
export function orderingGraph(graph: DependencyGraph): DependencyGraph {
  const surfaces = new Set(graph.nodes.filter((node) => node.kind === 'surface').map((node) => node.id));
  const turned = (edge: GraphEdge): GraphEdge =>
    surfaces.has(edge.from) && (edge.kind === 'trigger' || edge.kind === 'timeout')
      ? {
          ...edge,
          from: edge.to,
          to: edge.from,
          evidence: { from: edge.evidence.to, to: edge.evidence.from },
        }
      : edge;
  return { nodes: graph.nodes, edges: graph.edges.map(turned) };
}
