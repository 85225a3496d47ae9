import type { DependencyGraph } from '@allium-loop/allium';
import { assignSlices, type SliceSeed } from './assign-slices.js';
import { findCyclePath } from './find-cycle-path.js';
import { compareText, indexGraph } from './graph-index.js';
import { linkTouched } from './link-touched.js';
import { mergeSmallSlices, type DraftSlice } from './merge-small-slices.js';
import { orderingGraph } from './ordering-graph.js';
import type { IntegrationPass, Plan, PlanLink, Slice, SliceCrossing } from './plan-types.js';
import { stronglyConnected } from './strongly-connected.js';

function pairKey(from: string, to: string): string {
  return `${from}\u0000${to}`;
}

/** The links whose two ends lie in the same multi-slice component, bucketed by the component's position. */
function linksInsideCycles(
  components: readonly (readonly string[])[],
  seedOf: ReadonlyMap<string, string>,
  links: readonly PlanLink[],
): Map<number, PlanLink[]> {
  const componentOf = new Map<string, number>();
  components.forEach((component, at) => {
    if (component.length > 1) for (const seed of component) componentOf.set(seed, at);
  });
  const inside = new Map<number, PlanLink[]>();
  for (const link of links) {
    const at = componentOf.get(seedOf.get(link.from)!);
    if (at === undefined || at !== componentOf.get(seedOf.get(link.to)!)) continue;
    const list = inside.get(at);
    if (list === undefined) inside.set(at, [link]);
    else list.push(link);
  }
  return inside;
}

/** Seed slices whose dependencies form a cycle are merged into one `cycle:` slice; the rest are kept as they are. */
function condense(
  seeds: ReadonlyMap<string, SliceSeed>,
  links: readonly PlanLink[],
): Map<string, DraftSlice> {
  const seedOf = new Map([...seeds].map(([node, seed]) => [node, seed.id]));
  const kinds = new Map([...seeds.values()].map((seed) => [seed.id, seed.kind]));
  const next = new Map<string, Set<string>>([...kinds.keys()].map((id) => [id, new Set<string>()]));
  for (const link of links) {
    const [from, to] = [seedOf.get(link.from)!, seedOf.get(link.to)!];
    if (from !== to) next.get(from)!.add(to);
  }
  const drafts = new Map<string, DraftSlice>();
  const ids = [...kinds.keys()].sort(compareText);
  const components = stronglyConnected(ids, (id) => [...next.get(id)!].sort(compareText));
  const inside = linksInsideCycles(components, seedOf, links);
  components.forEach((component, at) => {
    const draft: DraftSlice =
      component.length === 1
        ? { id: component[0]!, kind: kinds.get(component[0]!)!, constructs: [] }
        : {
            id: `cycle:${component[0]!}`,
            kind: 'cycle',
            constructs: [],
            merged: component,
            cycle: findCyclePath(component, seedOf, inside.get(at) ?? []),
          };
    for (const seed of component) drafts.set(seed, draft);
  });
  const bySlice = new Map<string, DraftSlice>();
  for (const [node, seed] of seedOf) {
    const draft = drafts.get(seed)!;
    draft.constructs.push(node);
    bySlice.set(draft.id, draft);
  }
  return bySlice;
}

/** Waves by longest path: a slice runs one wave after the latest slice it depends on. */
function assignWaves(
  ids: readonly string[],
  dependsOn: ReadonlyMap<string, ReadonlySet<string>>,
): Map<string, number> {
  const dependents = new Map<string, string[]>(ids.map((id) => [id, []]));
  const waiting = new Map<string, number>();
  for (const id of ids) {
    waiting.set(id, dependsOn.get(id)!.size);
    for (const dep of dependsOn.get(id)!) dependents.get(dep)!.push(id);
  }
  const wave = new Map<string, number>(ids.map((id) => [id, 0]));
  const ready = ids.filter((id) => waiting.get(id) === 0);
  for (let head = 0; head < ready.length; head += 1) {
    const id = ready[head]!;
    for (const dependent of dependents.get(id)!) {
      wave.set(dependent, Math.max(wave.get(dependent)!, wave.get(id)! + 1));
      waiting.set(dependent, waiting.get(dependent)! - 1);
      if (waiting.get(dependent) === 0) ready.push(dependent);
    }
  }
  return wave;
}

function crossingsOf(links: readonly PlanLink[], sliceOf: ReadonlyMap<string, string>): SliceCrossing[] {
  const groups = new Map<string, { fromSlice: string; toSlice: string; links: PlanLink[] }>();
  for (const link of links) {
    const [fromSlice, toSlice] = [sliceOf.get(link.from)!, sliceOf.get(link.to)!];
    if (fromSlice === toSlice) continue;
    const key = pairKey(fromSlice, toSlice);
    const group = groups.get(key) ?? { fromSlice, toSlice, links: [] };
    group.links.push(link);
    groups.set(key, group);
  }
  return [...groups.entries()].sort(([a], [b]) => compareText(a, b)).map(([, group]) => group);
}

/** How {@link planSlices} forms slices. */
export interface PlanOptions {
  /**
   * Merge slices smaller than `MIN_SLICE_CONSTRUCTS` into a neighbour or a bundle (default true). Off, every anchor
   * keeps its own slice — useful to look at the raw ordering.
   */
  readonly mergeSmallSlices?: boolean;
}

/**
 * Splits the constructs a goal touches into slices and orders them.
 *
 * - Slices: an entity anchors its lifecycle (the entity plus the rules that transition or create it); a surface
 *   anchors a slice with the rules only it triggers; the remaining rules form chains (rules joined by edges).
 * - Order: slice A precedes slice B when a construct of A feeds one of B (directly, or through constructs the goal
 *   does not touch). Slices on a dependency cycle are condensed into one `cycle:` slice that reports the path.
 * - Waves: longest-path layers of the slice DAG; slices in one wave never depend on each other.
 * - Small slices: a lone surface or rule joins the neighbour it is linked to most, lone unlinked constructs are
 *   bundled (see `MIN_SLICE_CONSTRUCTS`).
 * - Split: only when there is more than one slice; then the integration pass lists the crossings to test.
 *
 * Ordering uses {@link orderingGraph}: a surface comes after the entities it exposes and the rules it offers, a
 * variant after its base. `touched` is the set of node ids the goal touches (omit it to plan the whole spec); ids
 * that are not nodes of the graph are reported in `ignored`, and context entities (external, undeclared) in
 * `context`. The result depends only on the sets of nodes, edges and touched ids, not on
 * their order. Pure; never throws.
 */
export function planSlices(
  graph: DependencyGraph,
  touched?: Iterable<string>,
  options: PlanOptions = {},
): Plan {
  const index = indexGraph(orderingGraph(graph));
  const requested = touched === undefined ? index.ids : [...new Set(touched)].sort(compareText);
  const isContext = (id: string): boolean => index.nodes.get(id)?.context !== undefined;
  const kept = requested.filter((id) => index.nodes.has(id) && !isContext(id));
  const ignored = requested.filter((id) => !index.nodes.has(id));
  const context = requested.filter(isContext);
  const seeds = assignSlices(index, kept);
  const links = linkTouched(index, new Set(kept), new Map([...seeds].map(([id, seed]) => [id, seed.id])));
  const condensed = condense(seeds, links);
  const drafts =
    (options.mergeSmallSlices ?? true)
      ? mergeSmallSlices(condensed, links, sliceIndex(condensed))
      : condensed;
  const sliceOf = sliceIndex(drafts);
  const dependsOn = new Map<string, Set<string>>([...drafts.keys()].map((id) => [id, new Set<string>()]));
  for (const link of links) {
    const [from, to] = [sliceOf.get(link.from)!, sliceOf.get(link.to)!];
    if (from !== to) dependsOn.get(to)!.add(from);
  }
  const ids = [...drafts.keys()].sort(compareText);
  const wave = assignWaves(ids, dependsOn);
  const slices = ids
    .map((id) => toSlice(drafts.get(id)!, dependsOn.get(id)!, wave.get(id)!))
    .sort((a, b) => a.wave - b.wave || compareText(a.id, b.id));
  const waves: string[][] = [];
  for (const slice of slices) (waves[slice.wave] ??= []).push(slice.id);
  const split = slices.length > 1;
  const integration: IntegrationPass | null = split
    ? { crossings: crossingsOf(links, sliceOf), weed: 'whole-spec' }
    : null;
  return { slices, waves, split, integration, ignored, context };
}

function sliceIndex(drafts: ReadonlyMap<string, DraftSlice>): Map<string, string> {
  const sliceOf = new Map<string, string>();
  for (const draft of drafts.values()) for (const node of draft.constructs) sliceOf.set(node, draft.id);
  return sliceOf;
}

function toSlice(draft: DraftSlice, dependsOn: ReadonlySet<string>, wave: number): Slice {
  const base = {
    id: draft.id,
    kind: draft.kind,
    constructs: [...draft.constructs].sort(compareText),
    dependsOn: [...dependsOn].sort(compareText),
    wave,
  };
  const absorbed = draft.absorbed === undefined ? {} : { absorbed: draft.absorbed };
  return draft.merged === undefined
    ? { ...base, ...absorbed }
    : { ...base, merged: draft.merged, cycle: draft.cycle ?? [], ...absorbed };
}
