import fc from 'fast-check';
import type { DependencyGraph, GraphEdge, GraphEdgeKind } from '@allium-loop/allium';
import { describe, expect, it } from 'vitest';
import { edge, node } from './graph-builder.test-helpers.js';
import { orderingGraph, planSlices, type Plan } from './index.js';

/** Edge kinds that make sense between each pair of node kinds, producer first. */
const KINDS: Record<string, readonly GraphEdgeKind[]> = {
  'rule>entity': ['creates', 'writes', 'removes'],
  'entity>rule': ['reads', 'trigger'],
  'rule>rule': ['trigger', 'data'],
  'surface>rule': ['trigger', 'timeout'],
};

const arbitraryGraph = fc
  .record({ entities: fc.nat(5), rules: fc.integer({ min: 1, max: 14 }), surfaces: fc.nat(3) })
  .chain(({ entities, rules, surfaces }) => {
    const ids = [
      ...Array.from({ length: entities }, (_, i) => `entity:E${i}`),
      ...Array.from({ length: rules }, (_, i) => `rule:R${i}`),
      ...Array.from({ length: surfaces }, (_, i) => `surface:S${i}`),
    ];
    const anEdge = fc
      .record({ from: fc.constantFrom(...ids), to: fc.constantFrom(...ids), pick: fc.nat() })
      .map(({ from, to, pick }): GraphEdge | undefined => {
        const kinds = KINDS[`${from.split(':')[0]!}>${to.split(':')[0]!}`];
        return kinds === undefined ? undefined : edge(from, kinds[pick % kinds.length]!, to, `v${pick % 3}`);
      });
    return fc.record({
      graph: fc.array(anEdge, { maxLength: 40 }).map((edges): DependencyGraph => ({
        nodes: ids.map(node),
        edges: edges.filter((e) => e !== undefined),
      })),
      touched: fc.option(fc.subarray(ids), { nil: undefined }),
    });
  });

const sliceOfNode = (plan: Plan) =>
  new Map(plan.slices.flatMap((slice) => slice.constructs.map((id) => [id, slice] as const)));

/** Nodes reachable from `from` through untouched nodes only, ending at a touched node. */
function touchedReach(graph: DependencyGraph, touched: ReadonlySet<string>, from: string): Set<string> {
  const found = new Set<string>();
  const seen = new Set([from]);
  const queue = [from];
  while (queue.length > 0) {
    const id = queue.shift()!;
    for (const e of graph.edges.filter((candidate) => candidate.from === id && !seen.has(candidate.to))) {
      seen.add(e.to);
      if (touched.has(e.to)) found.add(e.to);
      else queue.push(e.to);
    }
  }
  return found;
}

function shuffled<T>(items: readonly T[], seed: number): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i -= 1) {
    const j = (seed * 31 + i * 17) % (i + 1);
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}

describe('planSlices properties', () => {
  it('puts every touched construct in exactly one slice and nothing else in any', () => {
    fc.assert(
      fc.property(arbitraryGraph, ({ graph, touched }) => {
        const plan = planSlices(graph, touched);
        const planned = plan.slices.flatMap((slice) => slice.constructs).sort();
        const expected = [...new Set(touched ?? graph.nodes.map((n) => n.id))].sort();
        expect(planned).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });

  it('respects every edge of the ordering graph: the producer slice runs in an earlier wave than the consumer', () => {
    fc.assert(
      fc.property(arbitraryGraph, fc.boolean(), ({ graph: raw, touched }, merge) => {
        // A surface's trigger and timeout edges are turned round for ordering (see orderingGraph).
        const graph = orderingGraph(raw);
        const plan = planSlices(raw, touched, { mergeSmallSlices: merge });
        const slices = sliceOfNode(plan);
        const touchedSet = new Set(slices.keys());
        for (const from of touchedSet) {
          for (const to of touchedReach(graph, touchedSet, from)) {
            const [a, b] = [slices.get(from)!, slices.get(to)!];
            if (a !== b) expect(a.wave).toBeLessThan(b.wave);
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it('groups strongly connected constructs: two that reach each other (by any path) share one slice', () => {
    fc.assert(
      fc.property(arbitraryGraph, fc.boolean(), ({ graph: raw, touched }, merge) => {
        const graph = orderingGraph(raw);
        const plan = planSlices(raw, touched, { mergeSmallSlices: merge });
        const slices = sliceOfNode(plan);
        const reach = (from: string) => {
          const seen = new Set([from]);
          const queue = [from];
          while (queue.length > 0) {
            const id = queue.shift()!;
            for (const e of graph.edges)
              if (e.from === id && !seen.has(e.to)) {
                seen.add(e.to);
                queue.push(e.to);
              }
          }
          return seen;
        };
        const reaches = new Map([...slices.keys()].map((id) => [id, reach(id)]));
        for (const [a, fromA] of reaches)
          for (const [b, fromB] of reaches)
            if (a < b && fromA.has(b) && fromB.has(a)) expect(slices.get(a)).toBe(slices.get(b));
      }),
      { numRuns: 300 },
    );
  });

  it('never puts two dependent slices in one wave, and every dependency is an earlier slice', () => {
    fc.assert(
      fc.property(arbitraryGraph, ({ graph, touched }) => {
        const plan = planSlices(graph, touched);
        const byId = new Map(plan.slices.map((slice) => [slice.id, slice]));
        plan.waves.forEach((wave, index) => {
          for (const id of wave) {
            expect(byId.get(id)!.wave).toBe(index);
            for (const dep of byId.get(id)!.dependsOn) expect(byId.get(dep)!.wave).toBeLessThan(index);
          }
        });
        expect(plan.waves.flat()).toEqual(plan.slices.map((slice) => slice.id));
        expect(plan.split).toBe(plan.slices.length > 1);
        expect(plan.integration !== null).toBe(plan.split);
      }),
      { numRuns: 300 },
    );
  });

  it('is deterministic: the same graph in any order gives the same plan', () => {
    fc.assert(
      fc.property(arbitraryGraph, fc.nat(1000), ({ graph, touched }, seed) => {
        const again = { nodes: shuffled(graph.nodes, seed), edges: shuffled(graph.edges, seed + 1) };
        const touchedAgain = touched === undefined ? undefined : shuffled(touched, seed + 2);
        expect(planSlices(again, touchedAgain)).toEqual(planSlices(graph, touched));
      }),
      { numRuns: 200 },
    );
  });

  it('reports a closed walk for every condensed cycle', () => {
    fc.assert(
      fc.property(arbitraryGraph, ({ graph, touched }) => {
        for (const slice of planSlices(graph, touched).slices.filter((s) => s.kind === 'cycle')) {
          const walk = slice.cycle!;
          expect(walk.length).toBeGreaterThanOrEqual(3);
          expect(walk[0]).toBe(walk[walk.length - 1]);
          for (const id of walk) expect(slice.constructs).toContain(id);
          expect(slice.merged!.length).toBeGreaterThan(1);
        }
      }),
      { numRuns: 300 },
    );
  });
});
