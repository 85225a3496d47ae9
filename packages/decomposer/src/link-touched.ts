import type { GraphEdge } from '@allium-loop/spec';
import { compareText, type GraphIndex } from './graph-index.js';
import type { PlanLink } from './plan-types.js';

function directLink(edge: GraphEdge): PlanLink {
  return { from: edge.from, to: edge.to, kind: edge.kind, via: edge.via, through: [] };
}

/**
 * Every dependency between touched constructs: each graph edge between two of them, plus one link per pair joined
 * only through untouched constructs (the shortest such path, found breadth-first), so a goal that touches the two
 * ends of a chain still orders them. Links come out sorted by source, then in edge order.
 */
export function linkTouched(index: GraphIndex, touched: ReadonlySet<string>): PlanLink[] {
  const links: PlanLink[] = [];
  for (const from of [...touched].sort(compareText)) {
    const seen = new Set<string>([from]);
    const queue: { id: string; first: GraphEdge; through: readonly string[] }[] = [];
    for (const edge of index.out.get(from) ?? []) {
      if (touched.has(edge.to)) {
        links.push(directLink(edge));
        seen.add(edge.to);
      } else if (!seen.has(edge.to)) {
        seen.add(edge.to);
        queue.push({ id: edge.to, first: edge, through: [edge.to] });
      }
    }
    links.push(...reachThroughUntouched(index, touched, from, queue, seen));
  }
  return links;
}

function reachThroughUntouched(
  index: GraphIndex,
  touched: ReadonlySet<string>,
  from: string,
  queue: { id: string; first: GraphEdge; through: readonly string[] }[],
  seen: Set<string>,
): PlanLink[] {
  const links: PlanLink[] = [];
  for (let head = 0; head < queue.length; head += 1) {
    const { id, first, through } = queue[head]!;
    for (const edge of index.out.get(id) ?? []) {
      if (seen.has(edge.to)) continue;
      seen.add(edge.to);
      if (touched.has(edge.to)) links.push({ from, to: edge.to, kind: first.kind, via: first.via, through });
      else queue.push({ id: edge.to, first, through: [...through, edge.to] });
    }
  }
  return links;
}
