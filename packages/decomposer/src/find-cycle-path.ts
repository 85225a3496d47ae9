import type { PlanLink } from './plan-types.js';

/** How many crossing links are tried as the start of a node-level cycle before falling back to a slice-level walk. */
const NODE_CYCLE_ATTEMPTS = 16;

function adjacency(links: readonly PlanLink[], keep: (link: PlanLink) => boolean): Map<string, string[]> {
  const next = new Map<string, string[]>();
  for (const link of links) {
    if (!keep(link)) continue;
    const list = next.get(link.from);
    if (list === undefined) next.set(link.from, [link.to]);
    else if (!list.includes(link.to)) list.push(link.to);
  }
  return next;
}

/** The shortest path from `start` to `goal` over `next`, both ends included, or undefined. */
function shortestPath(
  next: ReadonlyMap<string, readonly string[]>,
  start: string,
  goal: string,
): string[] | undefined {
  const previous = new Map<string, string>([[start, start]]);
  const queue = [start];
  for (let head = 0; head < queue.length; head += 1) {
    const id = queue[head]!;
    if (id === goal) {
      const path = [id];
      for (let at = id; at !== start; at = previous.get(at)!) path.unshift(previous.get(at)!);
      return path;
    }
    for (const to of next.get(id) ?? []) {
      if (previous.has(to)) continue;
      previous.set(to, id);
      queue.push(to);
    }
  }
  return undefined;
}

/**
 * Explains why the slices `seeds` (one strongly connected component of the slice graph) had to be merged: a closed
 * walk of node ids, first id repeated at the end. Prefers a real node-level cycle through a link that crosses two
 * slices; when none exists (slice A feeds B at one construct and B feeds A at another), walks the slice-level cycle
 * through the first link of each step, so consecutive ids are either linked or in the same slice.
 */
export function findCyclePath(
  seeds: readonly string[],
  seedOf: ReadonlyMap<string, string>,
  links: readonly PlanLink[],
): string[] {
  const inComponent = new Set(seeds);
  const inside = (id: string) => inComponent.has(seedOf.get(id) ?? '');
  // Callers usually pass only the component's links already; filtering again keeps the function safe on its own.
  const local = links.filter((link) => inside(link.from) && inside(link.to));
  const nodeNext = adjacency(local, () => true);
  const crossing = local.filter((link) => seedOf.get(link.from) !== seedOf.get(link.to));
  for (const link of crossing.slice(0, NODE_CYCLE_ATTEMPTS)) {
    const back = shortestPath(nodeNext, link.to, link.from);
    if (back !== undefined) return [link.from, ...back];
  }
  return sliceWalk(seeds[0]!, seedOf, crossing);
}

function sliceWalk(
  start: string,
  seedOf: ReadonlyMap<string, string>,
  crossing: readonly PlanLink[],
): string[] {
  const witness = new Map<string, PlanLink>();
  for (const link of crossing) {
    const key = `${seedOf.get(link.from)!}\u0000${seedOf.get(link.to)!}`;
    if (!witness.has(key)) witness.set(key, link);
  }
  const seedNext = new Map<string, string[]>();
  for (const link of witness.values()) {
    const from = seedOf.get(link.from)!;
    seedNext.set(from, [...(seedNext.get(from) ?? []), seedOf.get(link.to)!]);
  }
  let best: string[] | undefined;
  for (const first of seedNext.get(start) ?? []) {
    const back = shortestPath(seedNext, first, start);
    if (back !== undefined && (best === undefined || back.length + 1 < best.length)) best = [start, ...back];
  }
  const walk: string[] = [];
  const steps = best ?? [start];
  for (let step = 0; step + 1 < steps.length; step += 1) {
    const link = witness.get(`${steps[step]!}\u0000${steps[step + 1]!}`)!;
    walk.push(link.from, link.to);
  }
  return walk.length === 0 ? [] : [...walk, walk[0]!];
}
