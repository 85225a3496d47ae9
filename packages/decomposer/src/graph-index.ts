import type { DependencyGraph, GraphEdge, GraphNode } from '@allium-loop/spec';

/** A dependency graph indexed for slicing: nodes by id and edges by source and by target, all in a fixed order. */
export interface GraphIndex {
  /** Node ids in ascending order. */
  readonly ids: readonly string[];
  readonly nodes: ReadonlyMap<string, GraphNode>;
  /** Outgoing edges per node id, sorted by (to, kind, via); only edges whose two ends are nodes, no self-loops. */
  readonly out: ReadonlyMap<string, readonly GraphEdge[]>;
  /** Incoming edges per node id, sorted by (from, kind, via). */
  readonly in: ReadonlyMap<string, readonly GraphEdge[]>;
}

/** Compares two strings by code unit, the order every list in a plan uses (locale-independent). */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function edgeKey(edge: GraphEdge): string {
  return `${edge.from}\u0000${edge.to}\u0000${edge.kind}\u0000${edge.via}`;
}

/**
 * Indexes a graph. Edges naming an unknown node and self-loops are dropped (a construct depending on itself says
 * nothing about the order of slices); duplicate edges are kept once. The result does not depend on the order of
 * `graph.nodes` or `graph.edges`.
 */
export function indexGraph(graph: DependencyGraph): GraphIndex {
  const nodes = new Map<string, GraphNode>();
  for (const node of graph.nodes) if (!nodes.has(node.id)) nodes.set(node.id, node);
  const ids = [...nodes.keys()].sort(compareText);
  const unique = new Map<string, GraphEdge>();
  for (const edge of graph.edges) {
    if (edge.from === edge.to || !nodes.has(edge.from) || !nodes.has(edge.to)) continue;
    const key = edgeKey(edge);
    if (!unique.has(key)) unique.set(key, edge);
  }
  const sorted = [...unique.keys()].sort(compareText).map((key) => unique.get(key)!);
  const out = new Map<string, GraphEdge[]>(ids.map((id) => [id, []]));
  const incoming = new Map<string, GraphEdge[]>(ids.map((id) => [id, []]));
  for (const edge of sorted) {
    out.get(edge.from)!.push(edge);
    incoming.get(edge.to)!.push(edge);
  }
  // `sorted` is ordered by (from, to, kind, via), so each incoming list is already ordered by (from, kind, via).
  return { ids, nodes, out, in: incoming };
}
