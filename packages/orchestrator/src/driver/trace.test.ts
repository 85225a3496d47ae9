import { readFileSync } from 'node:fs';
import { DEFAULT_POLICY } from '@allium-loop/evaluator';
import { createLedger, type Intent } from '@allium-loop/ledger';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { measured, simulate, testConfig } from '../decide/decide.test-helpers.js';
import type { LoopAction, LoopObservation } from '../decide/loop-action.js';
import { loopTrace, renderTrace, runTrace } from './trace.js';

const validate = new Ajv({ allErrors: true, strict: false }).compile(
  JSON.parse(
    readFileSync(
      new URL('../../../../docs/schemas/upstream/trace-entry.schema.json', import.meta.url),
      'utf8',
    ),
  ) as object,
);

const ok = (phase: Extract<LoopAction, { kind: 'phase' }>['phase'], extra = {}): LoopObservation => ({
  kind: 'phase_done',
  phase,
  ok: true,
  ...extra,
});

/** Three ticks: one test fixed per tick, weed dirty then clean; the measure of tick 2 has unreadable counts. */
function threeTicks() {
  let measures = 0;
  return simulate(testConfig({ policy: DEFAULT_POLICY }), (action, state) => {
    if (action.kind === 'phase' && action.phase === 'elicit') return ok('elicit', { specChanged: true });
    if (action.kind === 'phase' && action.phase === 'propagate')
      return ok('propagate', { newTests: ['a', 'b'] });
    if (action.kind === 'red_check') return { kind: 'red_checked', passing: [], failing: ['a', 'b'] };
    if (action.kind === 'measure') {
      measures += 1;
      if (state.tick === 2)
        return {
          kind: 'measured',
          measurement: {
            tests: { counts: 'unknown', exitCode: 1, timedOut: false },
            structuralErrors: 0,
            openQuestions: { blocking: 0, parked: 1 },
          },
        };
      return measured(state.tick === 3 ? [] : ['b'], 1, { openQuestions: { blocking: 0, parked: 1 } });
    }
    if (action.kind === 'phase' && action.phase === 'weed')
      return ok('weed', {
        divergences: state.tick < 3 ? [{ construct: 'rule:A', classification: 'code-bug', detail: 'x' }] : [],
      });
    if (action.kind === 'phase') return ok(action.phase);
    throw new Error(`unexpected ${action.kind} after ${String(measures)} measures`);
  });
}

describe('the trace (upstream trace-entry schema)', () => {
  it('one entry per tick with its phases and why, carried-forward metrics, every line schema-valid', () => {
    const { state } = threeTicks();
    const intents: Intent[] = [
      {
        key: 'tick-1/implement/1',
        tick: 1,
        phase: 'implement',
        action: 'agent-call',
        begunAt: '2026-01-01T00:00:00.000Z',
        data: {},
        outcome: { status: 'succeeded', at: '2026-01-01T00:00:02.500Z' },
      },
    ];
    const entries = loopTrace(state, intents);
    for (const entry of entries) expect(validate(entry), JSON.stringify(validate.errors)).toBe(true);
    expect(entries.map((e) => e.tick)).toEqual([1, 2, 3]);
    expect(entries[0]).toMatchObject({
      tests: { passed: 1, failed: 1 },
      weed: 'dirty',
      uncovered_obligations: 0,
      open_questions: { blocking: 0, parked: 1 },
      durations_s: { implement: 2.5 },
    });
    // Tick 1 runs the bounded inner loop: implement, measure, implement again (still one failing test).
    expect(entries[0]?.phases?.map((p) => p.name)).toEqual([
      'elicit',
      'propagate',
      'implement',
      'implement',
      'weed',
    ]);
    expect(entries[0]?.phases?.[1]).toEqual({ name: 'propagate', reason: 'the spec changed' });
    // Tick 2's counts were unreadable: carried forward from tick 1, never invented.
    expect(entries[1]?.tests).toEqual({ passed: 1, failed: 1 });
    expect(entries[2]).toMatchObject({ tests: { passed: 1, failed: 0 }, weed: 'clean' });
    expect(entries[2]?.phases?.at(-1)?.name).toBe('witness');
    expect(renderTrace(entries).split('\n').filter(Boolean)).toHaveLength(3);
  });

  it("the run's trace numbers a decomposed run's slice ticks on across the run and names the slice", () => {
    const { state } = threeTicks();
    const ledger = createLedger({ goal: 'g', slug: 'g', mode: 'spec', now: new Date(0) });
    const withSlices = {
      ...ledger,
      subGoals: [
        { id: 'a', slice: { constructs: [] }, dependsOn: [], status: 'converged' as const, report: null },
        { id: 'b', slice: { constructs: [] }, dependsOn: [], status: 'converged' as const, report: null },
      ],
      modeState: { ...ledger.modeState, slices: { a: state, b: state } },
    };
    const entries = runTrace(withSlices as typeof ledger);
    expect(entries.map((e) => e.tick)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(entries[3]?.phases?.[0]?.reason).toMatch(/^\[b\] /);
    for (const entry of entries) expect(validate(entry)).toBe(true);
  });
});
