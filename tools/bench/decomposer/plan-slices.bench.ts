// Benchmark: planSlices on a generated dependency graph of 2,000 rules (target: median under 200 ms).
// Run: node --conditions=development --import tsx tools/bench/decomposer/plan-slices.bench.ts
import { availableParallelism, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { planSlices } from '@allium-loop/decomposer';
import type { DependencyGraph, GraphEdge, GraphEdgeKind, GraphNode } from '@allium-loop/allium';

const AT = { file: 'generated.allium', line: 1, col: 1 };

/** A small deterministic generator (mulberry32) so every run plans the same graph. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A layered domain of `rules` rules over `entities` entities and `surfaces` surfaces, shaped like a real spec:
 * ten rules transition each entity (a third also create an entity further down), each rule reads two entities
 * from earlier layers and feeds about two rules of the next few entities by trigger or data. One edge in fifty
 * points backwards to a nearby entity or rule (a read of one of the next entities, a trigger to a rule of the
 * previous few), so local cycles appear as they do in real lifecycles. Each surface triggers five rules. `dense` makes every choice uniform instead: a worst case where
 * nearly every lifecycle reads every other and most of the graph condenses into one cycle.
 */
function generate(rules: number, entities: number, surfaces: number, dense: boolean): DependencyGraph {
  const next = random(42);
  const pick = (count: number) => Math.floor(next() * count);
  const nodes: GraphNode[] = [];
  const edges: GraphEdge[] = [];
  const add = (kind: GraphNode['kind'], name: string) =>
    nodes.push({ id: `${kind}:${name}`, kind, name, location: AT });
  const link = (from: string, kind: GraphEdgeKind, to: string, via: string) =>
    edges.push({ from, to, kind, via, evidence: { from: AT, to: AT } });
  const perEntity = Math.ceil(rules / entities);
  for (let e = 0; e < entities; e += 1) add('entity', `E${e}`);
  for (let s = 0; s < surfaces; s += 1) add('surface', `S${s}`);
  for (let r = 0; r < rules; r += 1) add('rule', `R${r}`);
  for (let r = 0; r < rules; r += 1) {
    const rule = `rule:R${r}`;
    const home = dense ? pick(entities) : Math.floor(r / perEntity);
    const backwards = () => next() < 0.02;
    link(rule, 'writes', `entity:E${home}`, `E${home}.status`);
    if (next() < 0.33)
      link(
        rule,
        'creates',
        `entity:E${dense ? pick(entities) : Math.min(entities - 1, home + 1 + pick(3))}`,
        'created',
      );
    for (let i = 0; i < 2; i += 1) {
      const read = dense
        ? pick(entities)
        : backwards()
          ? Math.min(entities - 1, home + 1 + pick(3))
          : pick(home + 1);
      link(`entity:E${read}`, 'reads', rule, `E${read}.status`);
    }
    for (let i = 0; i < 2; i += 1) {
      const window = Math.max(1, Math.min(3 * perEntity, rules - r - 1));
      const target = dense
        ? pick(rules)
        : backwards()
          ? Math.max(0, r - 1 - pick(3 * perEntity))
          : r + 1 + pick(window);
      if (target < rules && target !== r)
        link(rule, next() < 0.5 ? 'trigger' : 'data', `rule:R${target}`, `T${r}`);
    }
  }
  for (let s = 0; s < surfaces; s += 1)
    for (let i = 0; i < 5; i += 1)
      link(`surface:S${s}`, 'trigger', `rule:R${pick(rules)}`, `Action${s}_${i}`);
  return { nodes, edges };
}

/**
 * Runs `run` a few times to warm up, then `iterations` times, and prints the median, p90 and minimum of the wall
 * time and the median of the process CPU time (user + system), which a busy shared machine distorts less.
 */
function measure(label: string, run: () => unknown, iterations: number): void {
  for (let i = 0; i < 3; i += 1) run();
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < iterations; i += 1) {
    const [start, startCpu] = [performance.now(), process.cpuUsage()];
    run();
    const used = process.cpuUsage(startCpu);
    wall.push(performance.now() - start);
    cpu.push((used.user + used.system) / 1000);
  }
  const at = (times: number[], q: number) =>
    [...times].sort((a, b) => a - b)[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(1);
  console.log(
    `${label}: wall median ${at(wall, 0.5)} ms, p90 ${at(wall, 0.9)} ms, min ${at(wall, 0)} ms; ` +
      `CPU median ${at(cpu, 0.5)} ms (${iterations} runs)`,
  );
}

console.log(`load average (1 min): ${loadavg()[0]!.toFixed(1)} on ${availableParallelism()} cores`);
for (const dense of [false, true]) {
  const graph = generate(2000, 200, 40, dense);
  const plan = planSlices(graph);
  const cycles = plan.slices.filter((slice) => slice.kind === 'cycle');
  console.log(
    `${dense ? 'dense' : 'layered'} graph: ${graph.nodes.length} nodes, ${graph.edges.length} edges → ` +
      `${plan.slices.length} slices in ${plan.waves.length} waves, ${cycles.length} condensed cycles ` +
      `(largest ${Math.max(0, ...cycles.map((slice) => slice.constructs.length))} constructs)`,
  );
  measure(`  planSlices, whole spec (2,000 rules)`, () => planSlices(graph), 30);
  const half = graph.nodes.filter((_, index) => index % 2 === 0).map((node) => node.id);
  measure(`  planSlices, every other construct touched`, () => planSlices(graph, half), 30);
}
