import type { GraphEdge, GraphEdgeKind } from '@allium-loop/allium';
import { compareText, type GraphIndex } from './graph-index.js';
import type { SliceKind } from './plan-types.js';

/** The slice a touched construct is first put in, before cycles are condensed. */
export interface SliceSeed {
  readonly id: string;
  readonly kind: Exclude<SliceKind, 'cycle'>;
}

const TRANSITION_KINDS: ReadonlySet<GraphEdgeKind> = new Set(['writes', 'removes']);
const CREATION_KINDS: ReadonlySet<GraphEdgeKind> = new Set(['creates']);
const SURFACE_KINDS: ReadonlySet<GraphEdgeKind> = new Set(['trigger', 'timeout']);

/**
 * The entity whose lifecycle a rule belongs to: the entity it transitions most (`writes`/`removes` edges), else the
 * entity it creates most; ties go to the smaller name. Transitions win over creations because a rule that moves a
 * Loan and, on the side, creates a Reminder is part of the Loan's lifecycle.
 */
function homeEntity(index: GraphIndex, ruleId: string): string | undefined {
  const out = index.out.get(ruleId) ?? [];
  return (
    mostTargeted(index, out, TRANSITION_KINDS, 'entity') ?? mostTargeted(index, out, CREATION_KINDS, 'entity')
  );
}

function mostTargeted(
  index: GraphIndex,
  edges: readonly GraphEdge[],
  kinds: ReadonlySet<GraphEdgeKind>,
  targetKind: 'entity',
): string | undefined {
  const counts = new Map<string, number>();
  for (const edge of edges) {
    const target = index.nodes.get(edge.to);
    if (!kinds.has(edge.kind) || target?.kind !== targetKind || target.context !== undefined) continue;
    counts.set(target.name, (counts.get(target.name) ?? 0) + 1);
  }
  let best: [string, number] | undefined;
  for (const [name, count] of counts) {
    if (best === undefined || count > best[1] || (count === best[1] && compareText(name, best[0]) < 0))
      best = [name, count];
  }
  return best?.[0];
}

/**
 * The surface that triggers a rule (smallest name when several do), if any. The index is over the ordering graph
 * (see `orderingGraph`), where a surface's trigger and timeout edges run from the rule to the surface.
 */
function triggeringSurface(index: GraphIndex, ruleId: string): string | undefined {
  const names = (index.out.get(ruleId) ?? [])
    .filter((edge) => SURFACE_KINDS.has(edge.kind) && index.nodes.get(edge.to)?.kind === 'surface')
    .map((edge) => index.nodes.get(edge.to)!.name)
    .sort(compareText);
  return names[0];
}

/** The base entity a variant extends (`extends` edge from a base the spec owns), if the node is a variant. */
function baseEntity(index: GraphIndex, entityId: string): string | undefined {
  const base = (index.in.get(entityId) ?? []).find(
    (edge) => edge.kind === 'extends' && index.nodes.get(edge.from)?.context === undefined,
  );
  return base === undefined ? undefined : index.nodes.get(base.from)!.name;
}

/**
 * Puts every touched construct in its first slice: an entity anchors its lifecycle (a variant joins its base's), a
 * surface its own slice; a rule joins the lifecycle of its home entity, else the slice of the surface that triggers
 * it, else its rule chain (see {@link groupRuleChains}). Anchors need not be touched themselves. Context entities
 * (external, undeclared) are never anchors.
 */
export function assignSlices(index: GraphIndex, touched: readonly string[]): Map<string, SliceSeed> {
  const seeds = new Map<string, SliceSeed>();
  const loose: string[] = [];
  for (const id of touched) {
    const node = index.nodes.get(id)!;
    if (node.kind === 'entity')
      seeds.set(id, {
        id: `entity-lifecycle:${baseEntity(index, id) ?? node.name}`,
        kind: 'entity-lifecycle',
      });
    else if (node.kind === 'surface') seeds.set(id, { id: `surface:${node.name}`, kind: 'surface' });
    else {
      const entity = homeEntity(index, id);
      const surface = entity === undefined ? triggeringSurface(index, id) : undefined;
      if (entity !== undefined) seeds.set(id, { id: `entity-lifecycle:${entity}`, kind: 'entity-lifecycle' });
      else if (surface !== undefined) seeds.set(id, { id: `surface:${surface}`, kind: 'surface' });
      else loose.push(id);
    }
  }
  for (const [id, seed] of groupRuleChains(index, loose)) seeds.set(id, seed);
  return seeds;
}

/**
 * Groups rules that belong to no entity or surface into chains: rules joined by any edge between them (in either
 * direction) form one chain. A chain is named after its first rule: the smallest-named rule that no other rule of
 * the chain feeds, or the smallest-named rule when every rule is fed (a loop).
 */
export function groupRuleChains(index: GraphIndex, rules: readonly string[]): Map<string, SliceSeed> {
  const parent = new Map<string, string>(rules.map((id) => [id, id]));
  const find = (id: string): string => {
    let root = id;
    while (parent.get(root) !== root) root = parent.get(root)!;
    parent.set(id, root);
    return root;
  };
  for (const id of rules) {
    for (const edge of index.out.get(id) ?? []) {
      if (!parent.has(edge.to)) continue;
      const [a, b] = [find(id), find(edge.to)];
      if (a !== b) parent.set(compareText(a, b) < 0 ? b : a, compareText(a, b) < 0 ? a : b);
    }
  }
  const members = new Map<string, string[]>();
  for (const id of rules) {
    const root = find(id);
    const list = members.get(root);
    if (list === undefined) members.set(root, [id]);
    else list.push(id);
  }
  const seeds = new Map<string, SliceSeed>();
  for (const group of members.values()) {
    const seed: SliceSeed = { id: `rule-chain:${chainAnchor(index, group)}`, kind: 'rule-chain' };
    for (const id of group) seeds.set(id, seed);
  }
  return seeds;
}

function chainAnchor(index: GraphIndex, group: readonly string[]): string {
  const inGroup = new Set(group);
  const fed = (id: string) => (index.in.get(id) ?? []).some((edge) => inGroup.has(edge.from));
  const names = (ids: readonly string[]) => ids.map((id) => index.nodes.get(id)!.name).sort(compareText);
  return names(group.filter((id) => !fed(id)))[0] ?? names(group)[0]!;
}
