import type {
  DependencyGraph,
  GraphEdge,
  GraphEdgeKind,
  GraphNode,
  GraphNodeKind,
} from '@allium-loop/allium';

const NOWHERE = { file: 'test.allium', line: 1, col: 1 };

/** A graph node for tests, from its id (`rule:X`, `entity:Y`, `surface:Z`). */
export function node(id: string): GraphNode {
  const [kind, name] = id.split(':') as [GraphNodeKind, string];
  return { id, kind, name, location: NOWHERE };
}

/** A graph edge for tests: `edge('rule:A', 'writes', 'entity:B', 'B.status')`. */
export function edge(from: string, kind: GraphEdgeKind, to: string, via = ''): GraphEdge {
  return { from, to, kind, via, evidence: { from: NOWHERE, to: NOWHERE } };
}

/**
 * Builds a graph from edge lines like `rule:A writes entity:B` (an optional fourth word is the `via`); every id an
 * edge names becomes a node, and `extra` adds nodes without edges.
 */
export function graphOf(lines: readonly string[], extra: readonly string[] = []): DependencyGraph {
  const edges = lines.map((line) => {
    const [from, kind, to, via] = line.trim().split(/\s+/) as [
      string,
      GraphEdgeKind,
      string,
      string | undefined,
    ];
    return edge(from, kind, to, via);
  });
  const ids = new Set([...extra, ...edges.flatMap((e) => [e.from, e.to])]);
  return { nodes: [...ids].map(node), edges };
}
