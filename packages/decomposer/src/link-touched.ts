import type { GraphEdge } from '@allium-loop/allium';
import { compareText, type GraphIndex } from './graph-index.js';
import type { PlanLink } from './plan-types.js';

interface Search {
  readonly ids: readonly string[];
  readonly next: readonly (readonly number[])[];
  readonly edges: readonly (readonly GraphEdge[])[];
  readonly isTouched: readonly boolean[];
  readonly stamp: Int32Array;
  readonly parent: Int32Array;
  readonly entry: (GraphEdge | undefined)[];
}

function prepare(index: GraphIndex, touched: ReadonlySet<string>): Search {
  const number = new Map(index.ids.map((id, at) => [id, at]));
  const edges = index.ids.map((id) => index.out.get(id) ?? []);
  return {
    ids: index.ids,
    edges,
    next: edges.map((list) => list.map((edge) => number.get(edge.to)!)),
    isTouched: index.ids.map((id) => touched.has(id)),
    stamp: new Int32Array(index.ids.length).fill(-1),
    parent: new Int32Array(index.ids.length),
    entry: new Array<GraphEdge | undefined>(index.ids.length),
  };
}

function byEnds(a: PlanLink, b: PlanLink): number {
  return (
    compareText(a.from, b.from) ||
    compareText(a.to, b.to) ||
    compareText(a.kind, b.kind) ||
    compareText(a.via, b.via)
  );
}

/**
 * Every dependency between touched constructs, sorted by (from, to, kind, via): each graph edge between two of
 * them, plus — where a slice reaches another only through untouched constructs — one link per pair of slices,
 * along the shortest such path (enough to order the two slices and to test the crossing). `seedOf` gives each
 * touched construct's slice. One multi-source breadth-first search per slice on integer arrays, so a large graph
 * with half its constructs touched stays fast.
 */
export function linkTouched(
  index: GraphIndex,
  touched: ReadonlySet<string>,
  seedOf: ReadonlyMap<string, string>,
): PlanLink[] {
  const search = prepare(index, touched);
  const members = new Map<string, number[]>();
  search.ids.forEach((id, at) => {
    if (!search.isTouched[at]) return;
    const seed = seedOf.get(id)!;
    const list = members.get(seed);
    if (list === undefined) members.set(seed, [at]);
    else list.push(at);
  });
  const links: PlanLink[] = [];
  [...members.keys()].sort(compareText).forEach((seed, round) => {
    links.push(...searchFromSlice(search, seed, members.get(seed)!, round, seedOf));
  });
  return links.sort(byEnds);
}

function searchFromSlice(
  search: Search,
  seed: string,
  sources: readonly number[],
  round: number,
  seedOf: ReadonlyMap<string, string>,
): PlanLink[] {
  const { ids, next, edges, isTouched, stamp, parent, entry } = search;
  const links: PlanLink[] = [];
  const reached = new Set([seed]);
  const queue: number[] = [];
  for (const source of sources) stamp[source] = round;
  for (const source of sources) {
    edges[source]!.forEach((edge, at) => {
      const to = next[source]![at]!;
      if (isTouched[to]) {
        links.push({ from: edge.from, to: edge.to, kind: edge.kind, via: edge.via, through: [] });
        reached.add(seedOf.get(edge.to)!);
      } else if (stamp[to] !== round) {
        [stamp[to], parent[to], entry[to]] = [round, source, edge];
        queue.push(to);
      }
    });
  }
  for (let head = 0; head < queue.length; head += 1) {
    const at = queue[head]!;
    for (const to of next[at]!) {
      if (stamp[to] === round) continue;
      stamp[to] = round;
      if (!isTouched[to]) {
        [parent[to], entry[to]] = [at, entry[at]];
        queue.push(to);
      } else if (!reached.has(seedOf.get(ids[to]!)!)) {
        reached.add(seedOf.get(ids[to]!)!);
        const first = entry[at]!;
        links.push({
          from: first.from,
          to: ids[to]!,
          kind: first.kind,
          via: first.via,
          through: pathTo(search, at),
        });
      }
    }
  }
  return links;
}

/** The untouched constructs on the path to `last` (inclusive), from the source's side. */
function pathTo(search: Search, last: number): string[] {
  const path: string[] = [];
  for (let at = last; !search.isTouched[at]; at = search.parent[at]!) path.push(search.ids[at]!);
  return path.reverse();
}
