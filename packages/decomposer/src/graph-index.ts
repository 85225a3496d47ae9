import type { DependencyGraph, GraphEdge, GraphNode } from '@allium-loop/allium';

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
  const out = new Map<string, GraphEdge[]>(ids.map((id) => [id, []]));
  const seen = new Set<string>();
  for (const edge of graph.edges) {
    if (edge.from === edge.to || !nodes.has(edge.from) || !nodes.has(edge.to)) continue;
    const key = edgeKey(edge);
    if (seen.has(key)) continue;
    seen.add(key);
    out.get(edge.from)!.push(edge);
  }
  const incoming = new Map<string, GraphEdge[]>(ids.map((id) => [id, []]));
  for (const id of ids) {
    const list = out.get(id)!.sort(byTarget);
    // Sources are visited in ascending order, so each incoming list comes out ordered by (from, kind, via).
    for (const edge of list) incoming.get(edge.to)!.push(edge);
  }
  return { ids, nodes, out, in: incoming };
}

function byTarget(a: GraphEdge, b: GraphEdge): number {
  return compareText(a.to, b.to) || compareText(a.kind, b.kind) || compareText(a.via, b.via);
}
