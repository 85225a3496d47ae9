import { compareText } from './graph-index.js';
import type { PlanLink, SliceKind } from './plan-types.js';

/** A slice while the plan is being built: its constructs can still grow. */
export interface DraftSlice {
  readonly id: string;
  readonly kind: SliceKind;
  readonly constructs: string[];
  readonly merged?: readonly string[];
  readonly cycle?: readonly string[];
  readonly absorbed?: readonly string[];
}

/**
 * The smallest slice worth a loop of its own. A slice with fewer constructs is merged: a lone surface or rule joins
 * the neighbour it is linked to most, and lone constructs linked to nothing are bundled. A lone entity that other
 * slices are linked to keeps its own slice: its fields and lifecycle are tested on their own and others build on it.
 */
export const MIN_SLICE_CONSTRUCTS = 2;

/** The most constructs one bundle of unlinked lone constructs holds. */
export const MAX_BUNDLE_CONSTRUCTS = 6;

type Neighbours = Map<string, Map<string, number>>;

function addCount(map: Neighbours, from: string, to: string, by: number): void {
  const inner = map.get(from) ?? new Map<string, number>();
  inner.set(to, (inner.get(to) ?? 0) + by);
  map.set(from, inner);
}

/** Whether `to` can be reached from `from` by a path of two or more slice steps (so merging them makes a cycle). */
function reachableIndirectly(next: Neighbours, from: string, to: string): boolean {
  const seen = new Set<string>([from]);
  const queue = [...(next.get(from)?.keys() ?? [])].filter((id) => id !== to);
  for (const id of queue) seen.add(id);
  for (let head = 0; head < queue.length; head += 1) {
    for (const after of next.get(queue[head]!)?.keys() ?? []) {
      if (after === to) return true;
      if (!seen.has(after)) {
        seen.add(after);
        queue.push(after);
      }
    }
  }
  return false;
}

function isLone(slice: DraftSlice): boolean {
  return slice.constructs.length < MIN_SLICE_CONSTRUCTS;
}

/**
 * Merges slices smaller than {@link MIN_SLICE_CONSTRUCTS} (see there). A merge never creates a cycle between slices:
 * a lone slice joins a neighbour only when no other path runs between the two. The merged slice keeps the
 * neighbour's id and kind and lists the lone slice in `absorbed`. Deterministic: slices are visited by id, and
 * neighbours ranked by link count, then id.
 */
export function mergeSmallSlices(
  drafts: ReadonlyMap<string, DraftSlice>,
  links: readonly PlanLink[],
  sliceOf: ReadonlyMap<string, string>,
): Map<string, DraftSlice> {
  const slices = new Map(drafts);
  const next: Neighbours = new Map();
  const prev: Neighbours = new Map();
  for (const link of links) {
    const [from, to] = [sliceOf.get(link.from)!, sliceOf.get(link.to)!];
    if (from === to) continue;
    addCount(next, from, to, 1);
    addCount(prev, to, from, 1);
  }
  const absorb = (into: DraftSlice, lone: DraftSlice): DraftSlice => ({
    ...into,
    constructs: [...into.constructs, ...lone.constructs],
    absorbed: [...(into.absorbed ?? []), lone.id, ...(lone.absorbed ?? [])].sort(compareText),
  });
  for (const id of [...slices.keys()].sort(compareText)) {
    const lone = slices.get(id)!;
    if (!isLone(lone) || lone.kind === 'entity-lifecycle' || lone.kind === 'cycle') continue;
    const counts = new Map<string, number>();
    for (const [other, n] of next.get(id) ?? []) counts.set(other, (counts.get(other) ?? 0) + n);
    for (const [other, n] of prev.get(id) ?? []) counts.set(other, (counts.get(other) ?? 0) + n);
    const ranked = [...counts].sort(([a, x], [b, y]) => y - x || compareText(a, b)).map(([other]) => other);
    const target = ranked.find(
      (other) => !reachableIndirectly(next, id, other) && !reachableIndirectly(next, other, id),
    );
    if (target === undefined) continue;
    slices.set(target, absorb(slices.get(target)!, lone));
    slices.delete(id);
    for (const map of [next, prev]) {
      const mine = map.get(id) ?? new Map<string, number>();
      map.delete(id);
      for (const [other, n] of mine) if (other !== target) addCount(map, target, other, n);
      for (const inner of map.values()) {
        const n = inner.get(id);
        if (n === undefined) continue;
        inner.delete(id);
        if (inner !== map.get(target)) inner.set(target, (inner.get(target) ?? 0) + n);
      }
      map.get(target)?.delete(target);
    }
  }
  return bundleUnlinked(slices, next, prev);
}

/**
 * Lone slices with no link at all are grouped, by id, into as few bundles of at most {@link MAX_BUNDLE_CONSTRUCTS}
 * as will hold them, of even size.
 */
function bundleUnlinked(
  slices: Map<string, DraftSlice>,
  next: Neighbours,
  prev: Neighbours,
): Map<string, DraftSlice> {
  const unlinked = [...slices.keys()]
    .sort(compareText)
    .filter((id) => isLone(slices.get(id)!) && (next.get(id)?.size ?? 0) + (prev.get(id)?.size ?? 0) === 0);
  if (unlinked.length < 2) return slices;
  // As few bundles as the limit allows, sizes as even as possible (19 lone constructs: 5, 5, 5, 4).
  const count = Math.ceil(unlinked.length / MAX_BUNDLE_CONSTRUCTS);
  for (let at = 0, start = 0; at < count; at += 1) {
    const end = start + Math.ceil((unlinked.length - start) / (count - at));
    const group = unlinked.slice(start, end);
    start = end;
    const bundle: DraftSlice = {
      id: `bundle:${group[0]!}`,
      kind: 'bundle',
      constructs: group.flatMap((id) => slices.get(id)!.constructs),
      absorbed: group,
    };
    for (const id of group) slices.delete(id);
    slices.set(bundle.id, bundle);
  }
  return slices;
}
