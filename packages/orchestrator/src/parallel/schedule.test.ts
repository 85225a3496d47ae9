import { describe, expect, it } from 'vitest';
import { criticalPathMs, schedule, simulate, type SimSlice } from './schedule.js';

const state = (over: Partial<Record<'running' | 'finished' | 'merged' | 'failed', string[]>> = {}) => ({
  running: new Set(over.running ?? []),
  finished: new Set(over.finished ?? []),
  merged: new Set(over.merged ?? []),
  failed: new Set(over.failed ?? []),
});

/** a → b → c (a chain), d and e independent. */
const PLAN: SimSlice[] = [
  { id: 'a', dependsOn: [], durationMs: 30 },
  { id: 'd', dependsOn: [], durationMs: 20 },
  { id: 'e', dependsOn: [], durationMs: 10 },
  { id: 'b', dependsOn: ['a'], durationMs: 30 },
  { id: 'c', dependsOn: ['b'], durationMs: 30 },
];

/** A small deterministic PRNG (mulberry32), so every simulated DAG is reproducible from its seed. */
function prng(seed: number): () => number {
  let t = seed >>> 0;
  return () => {
    t = (t + 0x6d2b79f5) >>> 0;
    let r = Math.imul(t ^ (t >>> 15), 1 | t);
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
  };
}

/** A random DAG in topological order: each slice may depend on earlier ones. */
function randomPlan(seed: number): SimSlice[] {
  const random = prng(seed);
  const count = 1 + Math.floor(random() * 14);
  return Array.from({ length: count }, (_, i) => ({
    id: `s${String(i)}`,
    dependsOn: Array.from({ length: i }, (_, j) => `s${String(j)}`).filter(() => random() < 0.2),
    durationMs: 1 + Math.floor(random() * 100),
  }));
}

describe('schedule: which slices start and which merges next', () => {
  it('starts the slices whose dependencies are merged, in plan order, up to the concurrency', () => {
    expect(schedule(PLAN, state(), { concurrency: 2, spentUsd: 0, elapsedMs: 0 })).toEqual({
      start: ['a', 'd'],
      held: 'concurrency',
      blocked: [],
    });
    // b waits for a to be merged, not just finished; a merges first.
    expect(
      schedule(PLAN, state({ finished: ['a'], running: ['d'] }), {
        concurrency: 4,
        spentUsd: 0,
        elapsedMs: 0,
      }),
    ).toEqual({ merge: 'a', start: ['e'], held: 'dependencies', blocked: [] });
    expect(
      schedule(PLAN, state({ merged: ['a'], running: ['d', 'e'] }), {
        concurrency: 4,
        spentUsd: 0,
        elapsedMs: 0,
      }).start,
    ).toEqual(['b']);
  });

  it('holds new starts at the wall clock and when the worst case of the calls in flight would pass the budget', () => {
    expect(
      schedule(PLAN, state(), { concurrency: 4, spentUsd: 0, elapsedMs: 10, wallClockMs: 10 }),
    ).toMatchObject({ start: [], held: 'wall_clock' });
    // $1 per call at worst, $2.50 left: two calls in flight fit, a third would not.
    expect(
      schedule(PLAN, state(), { concurrency: 4, budgetUsd: 3, spentUsd: 0.5, maxCallUsd: 1, elapsedMs: 0 }),
    ).toMatchObject({ start: ['a', 'd'], held: 'budget' });
    // One already running counts as a call in flight.
    expect(
      schedule(PLAN, state({ running: ['a'] }), {
        concurrency: 4,
        budgetUsd: 3,
        spentUsd: 0.5,
        maxCallUsd: 1,
        elapsedMs: 0,
      }).start,
    ).toEqual(['d']);
    // Without a known worst case, a slice starts while anything is left.
    expect(
      schedule(PLAN, state(), { concurrency: 4, budgetUsd: 3, spentUsd: 3, elapsedMs: 0 }),
    ).toMatchObject({ start: [], held: 'budget' });
  });

  it('merges first the finished slice a waiting slice depends on, then plan order', () => {
    const slices = [
      { id: 'a', dependsOn: [] },
      { id: 'b', dependsOn: [] },
      { id: 'c', dependsOn: ['b'] },
    ];
    const empty = new Set<string>();
    const caps = { concurrency: 2, spentUsd: 0, elapsedMs: 0 };
    const both = { running: empty, finished: new Set(['a', 'b']), merged: empty, failed: empty };
    expect(schedule(slices, both, caps).merge).toBe('b');
    const noneWaiting = { ...both, merged: empty, running: new Set(['c']) };
    expect(schedule(slices, noneWaiting, caps).merge).toBe('a');
  });

  it('holds a merge nobody waits for while a slice others wait for still runs', () => {
    const slices = [
      { id: 'a', dependsOn: [] },
      { id: 'b', dependsOn: [] },
      { id: 'c', dependsOn: ['b'] },
    ];
    const caps = { concurrency: 3, spentUsd: 0, elapsedMs: 0 };
    expect(schedule(slices, state({ finished: ['a'], running: ['b'] }), caps).merge).toBeUndefined();
    expect(schedule(slices, state({ finished: ['a', 'b'] }), caps).merge).toBe('b');
    // Nobody waits for a running slice any more (c already runs): merges go on.
    expect(schedule(slices, state({ finished: ['a'], merged: ['b'], running: ['c'] }), caps).merge).toBe('a');
    // x ends at 18, y (which z waits for) at 20, merges take 5: x's merge waits, so y merges at once and z
    // starts at 25 instead of 28.
    const run = simulate(
      [
        { id: 'x', dependsOn: [], durationMs: 18 },
        { id: 'y', dependsOn: [], durationMs: 20 },
        { id: 'z', dependsOn: ['y'], durationMs: 10 },
      ],
      { concurrency: 3 },
      5,
    );
    expect(run.runs.find((r) => r.id === 'z')?.startMs).toBe(25);
    expect(run.mergeOrder).toEqual(['y', 'x', 'z']);
    expect(run.makespanMs).toBe(40);
  });

  it('never starts a slice whose producer failed, and reports it blocked; the others go on', () => {
    const decision = schedule(PLAN, state({ failed: ['a'] }), { concurrency: 4, spentUsd: 0, elapsedMs: 0 });
    expect(decision.start).toEqual(['d', 'e']);
    expect(decision.blocked).toEqual(['b', 'c']);
    const run = simulate(
      PLAN.map((s) => (s.id === 'a' ? { ...s, converges: false } : s)),
      { concurrency: 4 },
    );
    expect(run.failed).toEqual(['a']);
    expect(run.blocked).toEqual(['b', 'c']);
    // d and e finish while a (which b waits for) runs: their merges wait for it, then go in plan order.
    expect(run.mergeOrder).toEqual(['d', 'e']);
  });
});

describe('simulate: makespan against the critical path', () => {
  it('one at a time takes the sum; four at once takes the critical path', () => {
    expect(simulate(PLAN, { concurrency: 1 }).makespanMs).toBe(120);
    expect(criticalPathMs(PLAN)).toBe(90);
    const four = simulate(PLAN, { concurrency: 4 });
    expect(four.makespanMs).toBe(90);
    expect(four.maxInFlight).toBe(3);
    // Merges cost time on the shared tree: each one delays what follows it.
    expect(simulate(PLAN, { concurrency: 4 }, 5).makespanMs).toBeGreaterThan(90);
  });

  it('stops starting slices when the budget is spent, and says so', () => {
    const costly = PLAN.map((s) => ({ ...s, costUsd: 1 }));
    const run = simulate(costly, { concurrency: 4, budgetUsd: 2 });
    // Without a known worst case per call, slices start while spent < budget: a, d and e start at once (b and c
    // wait for a) and all three are paid for; b never starts. With --max-call-usd the overshoot cannot happen.
    expect(run.stoppedBy).toBe('budget');
    expect(run.runs.map((r) => r.id)).toEqual(['a', 'd', 'e']);
    expect(run.spentUsd).toBe(3);
    const capped = simulate(costly, { concurrency: 4, budgetUsd: 2, maxCallUsd: 1 });
    expect(capped.runs.map((r) => r.id)).toEqual(['a', 'd']);
    expect(capped.spentUsd).toBe(2);
  });

  it.each(Array.from({ length: 200 }, (_, seed) => seed))(
    'random DAG %i: dependencies, the concurrency and topological merges hold; bounded by Graham',
    (seed) => {
      const plan = randomPlan(seed);
      const concurrency = 1 + (seed % 4);
      const run = simulate(plan, { concurrency });
      const byId = new Map(run.runs.map((r) => [r.id, r]));
      expect(run.runs).toHaveLength(plan.length);
      expect(run.maxInFlight).toBeLessThanOrEqual(concurrency);
      for (const slice of plan) {
        for (const dep of slice.dependsOn) {
          expect(byId.get(slice.id)!.startMs).toBeGreaterThanOrEqual(byId.get(dep)!.endMs);
          expect(run.mergeOrder.indexOf(dep)).toBeLessThan(run.mergeOrder.indexOf(slice.id));
        }
      }
      const sum = plan.reduce((total, s) => total + s.durationMs, 0);
      const critical = criticalPathMs(plan);
      expect(run.makespanMs).toBeGreaterThanOrEqual(critical);
      // Graham's bound for greedy list scheduling on m machines.
      expect(run.makespanMs).toBeLessThanOrEqual(sum / concurrency + critical);
      if (concurrency === 1) expect(run.makespanMs).toBe(sum);
      expect(simulate(plan, { concurrency: plan.length }).makespanMs).toBe(critical);
    },
  );
});
