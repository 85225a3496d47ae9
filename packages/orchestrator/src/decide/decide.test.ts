import { describe, expect, it } from 'vitest';
import { budgetStop, callFitsBudget, decide } from './decide.js';
import { measured, simulate, testConfig, WITNESS_PASS } from './decide.test-helpers.js';
import type { LoopAction, LoopObservation } from './loop-action.js';
import { initialLoopState, type LoopState } from './loop-state.js';

const ok = (
  phase: Extract<LoopAction, { kind: 'phase' }>['phase'],
  extra: Partial<Extract<LoopObservation, { kind: 'phase_done' }>> = {},
): LoopObservation => ({
  kind: 'phase_done',
  phase,
  ok: true,
  ...extra,
});

describe('decide: spec-first', () => {
  it('runs gather → propagate → red-check → the bounded implement loop → measure → weed, then converges', () => {
    let measures = 0;
    const { trace, state } = simulate(testConfig(), (action) => {
      if (action.kind === 'phase' && action.phase === 'elicit') return ok('elicit', { specChanged: true });
      if (action.kind === 'phase' && action.phase === 'propagate')
        return ok('propagate', { newTests: ['LendBook works', 'Return works'] });
      if (action.kind === 'red_check')
        return { kind: 'red_checked', passing: [], failing: ['LendBook works', 'Return works'] };
      if (action.kind === 'phase' && action.phase === 'implement') return ok('implement');
      if (action.kind === 'measure') return measured(++measures === 1 ? ['Return works'] : []);
      if (action.kind === 'phase' && action.phase === 'weed') return ok('weed', { divergences: [] });
      throw new Error(`unexpected ${action.kind}`);
    });
    expect(trace).toEqual([
      'elicit',
      'propagate',
      'red_check',
      'implement',
      'measure',
      'implement',
      'measure',
      'weed',
      'witness',
      'terminal:converged',
    ]);
    expect(state.verdicts).toHaveLength(1);
    expect(state.tick).toBe(1);
  });

  it('reports the test count of every test run, including the one between two implement rounds', () => {
    let measures = 0;
    const respond = (action: LoopAction): LoopObservation => {
      if (action.kind === 'phase' && action.phase === 'elicit') return ok('elicit', { specChanged: true });
      if (action.kind === 'phase' && action.phase === 'propagate')
        return ok('propagate', { newTests: ['a', 'b'] });
      if (action.kind === 'red_check') return { kind: 'red_checked', passing: [], failing: ['a', 'b'] };
      if (action.kind === 'phase' && action.phase === 'implement') return ok('implement');
      if (action.kind === 'measure') return measured(++measures === 1 ? ['b'] : [], 7 + measures);
      if (action.kind === 'phase' && action.phase === 'weed') return ok('weed', { divergences: [] });
      throw new Error(`unexpected ${action.kind}`);
    };
    const { trace, events } = simulate(testConfig(), respond);
    expect(trace.slice(3, 7)).toEqual(['implement', 'measure', 'implement', 'measure']);
    expect(events.filter((e) => e.kind === 'tests_measured')).toEqual([
      { kind: 'tests_measured', round: 1, counts: { passed: 8, failed: 1, skipped: 0 } },
      { kind: 'tests_measured', round: 2, counts: { passed: 9, failed: 0, skipped: 0 } },
    ]);
    // The decision that starts the second implement round carries the first count (journaled before the call).
    measures = 0;
    let state = initialLoopState();
    let observation: LoopObservation = { kind: 'start' };
    for (let step = 0; step < 20; step += 1) {
      const decision = decide(state, observation, testConfig(), { elapsedMs: 0 });
      state = decision.state;
      if (measures === 1 && decision.action.kind === 'phase') {
        expect(decision.action.phase).toBe('implement');
        expect(decision.events).toEqual([
          { kind: 'tests_measured', round: 1, counts: { passed: 8, failed: 1, skipped: 0 } },
        ]);
        return;
      }
      observation = respond(decision.action);
    }
    throw new Error('no second implement round');
  });

  it('never carries a new test that was already green into implement', () => {
    const { actions } = simulate(testConfig(), (action) => {
      if (action.kind === 'phase' && action.phase === 'elicit') return ok('elicit', { specChanged: true });
      if (action.kind === 'phase' && action.phase === 'propagate')
        return ok('propagate', { newTests: ['a', 'b'] });
      if (action.kind === 'red_check') return { kind: 'red_checked', passing: ['a'], failing: ['b'] };
      if (action.kind === 'phase' && action.phase === 'implement') return ok('implement');
      if (action.kind === 'measure') return measured([]);
      return ok('weed');
    });
    const implement = actions.find(
      (a): a is Extract<LoopAction, { kind: 'phase' }> => a.kind === 'phase' && a.phase === 'implement',
    );
    expect(implement?.focus.failing).toEqual(['b']);
  });

  it('routes weed code bugs to implement and spec bugs to tend on the next tick', () => {
    let weeds = 0;
    const { trace, actions } = simulate(testConfig({ entry: 'weed' }), (action) => {
      if (action.kind === 'measure') return measured([]);
      if (action.kind === 'phase' && action.phase === 'weed') {
        weeds += 1;
        return ok('weed', {
          divergences:
            weeds === 1
              ? [
                  {
                    construct: 'rule:LendBook',
                    classification: 'code-bug',
                    detail: 'loan period ignores config',
                  },
                  { construct: 'rule:Return', classification: 'spec-bug', detail: 'spec forgets fines' },
                ]
              : [],
        });
      }
      if (action.kind === 'phase' && action.phase === 'tend') return ok('tend', { specChanged: true });
      if (action.kind === 'phase' && action.phase === 'propagate') return ok('propagate', { newTests: [] });
      return ok('implement');
    });
    expect(trace).toEqual([
      'measure',
      'weed',
      'tend',
      'propagate',
      'implement',
      'measure',
      'weed',
      'witness',
      'terminal:converged',
    ]);
    const tend = actions[2] as Extract<LoopAction, { kind: 'phase' }>;
    expect(tend.focus.divergences?.map((d) => d.construct)).toEqual(['rule:Return']);
    const implement = actions[4] as Extract<LoopAction, { kind: 'phase' }>;
    expect(implement.focus.divergences?.map((d) => d.construct)).toEqual(['rule:LendBook']);
  });

  it('sends a contested test to tend and re-propagation, never to another implement round', () => {
    let ticks = 0;
    const { trace } = simulate(testConfig({ entry: 'tend' }), (action, state) => {
      ticks = state.tick;
      if (action.kind === 'phase' && action.phase === 'tend') return ok('tend', { specChanged: ticks === 1 });
      if (action.kind === 'phase' && action.phase === 'propagate')
        return ok('propagate', { newTests: ['t'] });
      if (action.kind === 'red_check') return { kind: 'red_checked', passing: [], failing: ['t'] };
      if (action.kind === 'phase' && action.phase === 'implement')
        return ok('implement', { contested: ticks === 1 ? ['t'] : [] });
      if (action.kind === 'measure') return measured(ticks === 1 ? ['t'] : []);
      return ok('weed');
    });
    expect(trace).toEqual([
      'tend',
      'propagate',
      'red_check',
      'implement',
      'measure',
      'weed',
      'tend',
      'propagate',
      'red_check',
      'implement',
      'measure',
      'weed',
      'witness',
      'terminal:converged',
    ]);
  });
});

describe('decide: caps', () => {
  /** A world where tests keep failing with a new name each tick, so the fingerprint changes and only caps stop it. */
  const churn =
    (convergeAtTick?: number) =>
    (action: LoopAction, state: LoopState): LoopObservation => {
      if (action.kind === 'measure')
        return measured(state.tick === convergeAtTick ? [] : [`t${String(state.tick)}`], state.tick);
      if (action.kind === 'phase')
        return ok(action.phase, action.phase === 'elicit' ? { specChanged: false } : {});
      return { kind: 'red_checked', passing: [], failing: [] };
    };

  it.each([
    { maxTicks: 3, convergeAt: 2, expected: 'terminal:converged', ticks: 2 },
    { maxTicks: 3, convergeAt: 3, expected: 'terminal:converged', ticks: 3 },
    { maxTicks: 3, convergeAt: 4, expected: 'terminal:max_ticks', ticks: 3 },
  ])(
    'tick cap $maxTicks, converging at tick $convergeAt → $expected',
    ({ maxTicks, convergeAt, expected, ticks }) => {
      const { trace, state } = simulate(testConfig({ caps: { maxTicks } }), churn(convergeAt));
      expect(trace.at(-1)).toBe(expected);
      expect(state.tick).toBe(ticks);
    },
  );

  it('stops on tokens climbing while the state does not move, before a long no-progress cap, and says so', () => {
    // Each tick's calls use more tokens than the last (100, 300, 600 … in total) while the measure stays the same.
    const { trace, state, events } = simulate(
      testConfig({ caps: { noProgressTicks: 6, maxTicks: 10, innerLoopMax: 1 } }),
      (action) => {
        if (action.kind === 'measure') return measured(['same']);
        if (action.kind === 'phase') return ok(action.phase);
        return { kind: 'red_checked', passing: [], failing: [] };
      },
      { tokens: (_step, s) => (s.tick * (s.tick + 1) * 100) / 2 },
    );
    expect(trace.at(-1)).toBe('terminal:no_progress');
    expect(state.tick).toBe(3);
    expect(state.terminal?.reason).toMatch(/^tokens climbing while the state does not move: 100 → 200 → 300/);
    expect(events.find((e) => e.kind === 'cap_reached')).toMatchObject({ cap: 'token_climb', limit: 2 });
  });

  it('stops with no_progress after exactly the configured number of unchanged ticks', () => {
    const { trace, state } = simulate(
      testConfig({ caps: { noProgressTicks: 2, maxTicks: 10, innerLoopMax: 1 } }),
      (action) => {
        if (action.kind === 'measure') return measured(['same']);
        if (action.kind === 'phase') return ok(action.phase);
        return { kind: 'red_checked', passing: [], failing: [] };
      },
    );
    expect(trace.at(-1)).toBe('terminal:no_progress');
    expect(state.tick).toBe(3);
  });

  it('tolerates one A→B→A backtrack; the second ends the run no_progress', () => {
    const { trace, state } = simulate(
      testConfig({ caps: { maxTicks: 10, innerLoopMax: 1 } }),
      (action, s) => {
        if (action.kind === 'measure') return measured(s.tick % 2 === 1 ? ['a'] : ['a', 'b']);
        if (action.kind === 'phase') return ok(action.phase);
        return { kind: 'red_checked', passing: [], failing: [] };
      },
    );
    expect(trace.at(-1)).toBe('terminal:no_progress');
    expect(state.terminal?.reason).toContain('oscillating');
    expect(state.tick).toBe(4);
  });

  it.each([
    { spent: 2, expected: 'implement' },
    { spent: 2.01, expected: 'terminal:budget_exhausted' },
  ])('budget 3 USD, a 1 USD worst-case call, $spent USD spent → $expected', ({ spent, expected }) => {
    const state: LoopState = {
      ...initialLoopState(),
      tick: 1,
      stage: 'implement',
      failing: ['t'],
      spentUsd: spent,
    };
    const decision = decide(state, { kind: 'start' }, testConfig({ caps: { budgetUsd: 3, maxCallUsd: 1 } }), {
      elapsedMs: 0,
    });
    const action = decision.action;
    expect(
      action.kind === 'phase'
        ? action.phase
        : `terminal:${action.kind === 'terminal' ? action.state : action.kind}`,
    ).toBe(expected);
  });

  it('callFitsBudget is exact at the boundary and refuses unknown worst cases once the budget is spent', () => {
    expect(callFitsBudget(2, 1, 3)).toBe(true);
    expect(callFitsBudget(2.01, 1, 3)).toBe(false);
    expect(callFitsBudget(0.1 + 0.2, 2.7, 3)).toBe(true);
    expect(callFitsBudget(2.99, undefined, 3)).toBe(true);
    expect(callFitsBudget(3, undefined, 3)).toBe(false);
  });

  it('stops with timed_out once the wall clock passes its cap, before the next call', () => {
    const { trace } = simulate(
      testConfig({ caps: { wallClockMs: 1000 } }),
      () => ok('elicit', { specChanged: true }),
      {
        elapsedMs: (step) => (step === 0 ? 0 : 1500),
      },
    );
    expect(trace).toEqual(['elicit', 'terminal:timed_out']);
  });

  it('escalates three failed fix attempts on the same tests to awaiting_input', () => {
    const { trace, state } = simulate(
      testConfig({ caps: { maxTicks: 10, innerLoopMax: 1, noProgressTicks: 5 } }),
      (action, s) => {
        if (action.kind === 'measure') return measured(['stuck'], s.tick);
        if (action.kind === 'phase') return ok(action.phase);
        return { kind: 'red_checked', passing: [], failing: [] };
      },
    );
    expect(state.history.filter((t) => t.fixAttempt !== undefined).length).toBeGreaterThanOrEqual(2);
    expect(trace.at(-1)).toBe('terminal:awaiting_input');
    expect(state.terminal?.reason).toContain('failed fix attempts');
  });

  it('retries a failed phase once, then moves on', () => {
    const { trace } = simulate(testConfig({ caps: { maxTicks: 1 } }), (action) => {
      if (action.kind === 'phase' && action.phase === 'elicit')
        return { kind: 'phase_done', phase: 'elicit', ok: false, detail: 'no result file' };
      if (action.kind === 'measure') return measured([]);
      if (action.kind === 'phase') return ok(action.phase);
      return { kind: 'red_checked', passing: [], failing: [] };
    });
    expect(trace).toEqual(['elicit', 'elicit', 'measure', 'weed', 'witness', 'terminal:converged']);
  });

  it('ends as cancelled on a cancel observation', () => {
    const { trace } = simulate(testConfig(), () => ({ kind: 'cancelled' }));
    expect(trace).toEqual(['elicit', 'terminal:cancelled']);
  });
});

describe('decide: questions and resume', () => {
  it('stops non-interactive runs in awaiting_input on a blocking question, and continues with tend once answered', () => {
    const first = simulate(testConfig(), (action) => {
      if (action.kind === 'phase' && action.phase === 'elicit')
        return ok('elicit', { specChanged: true, blocking: ['q1'] });
      throw new Error('should stop first');
    });
    expect(first.trace).toEqual(['elicit', 'terminal:awaiting_input']);
    expect(first.state.terminal?.reason).toContain('q1');
    // `answer` + `resume`: the driver clears the terminal state and reports the answers.
    const { terminal: _terminal, ...resumed } = first.state;
    const second = simulate(
      testConfig(),
      (action) => {
        if (action.kind === 'phase' && action.phase === 'tend') return ok('tend', { specChanged: true });
        if (action.kind === 'phase' && action.phase === 'propagate') return ok('propagate', { newTests: [] });
        if (action.kind === 'measure') return measured([]);
        return ok('weed');
      },
      { state: { ...resumed, stage: 'escalate' } },
    );
    expect(second.trace[0]).toBe('terminal:awaiting_input');
    const answered = decide(
      { ...resumed, stage: 'escalate' },
      { kind: 'answers', answered: ['q1'] },
      testConfig(),
      { elapsedMs: 0 },
    );
    expect(answered.action).toMatchObject({ kind: 'phase', phase: 'tend', focus: { answered: ['q1'] } });
  });

  it('asks on a terminal when interactive', () => {
    const { actions } = simulate(testConfig({ interactive: true }), (action) => {
      if (action.kind === 'phase') return ok('elicit', { blocking: ['q1'] });
      return { kind: 'cancelled' };
    });
    expect(actions[1]).toEqual({ kind: 'ask', questions: ['q1'] });
  });

  it('re-issues the same action for a persisted state: a fresh process continues where the last stopped', () => {
    const config = testConfig();
    const first = decide(initialLoopState(), { kind: 'start' }, config, { elapsedMs: 0 });
    const afterElicit = decide(first.state, ok('elicit', { specChanged: true }), config, { elapsedMs: 0 });
    const reloaded = JSON.parse(JSON.stringify(afterElicit.state)) as LoopState;
    expect(decide(reloaded, { kind: 'start' }, config, { elapsedMs: 0 }).action).toEqual(afterElicit.action);
  });
});

describe('decide: code-first', () => {
  it('distills until a pass finds nothing new, with the red-check inverted', () => {
    let distills = 0;
    const { trace } = simulate(
      testConfig({
        entry: 'distill',
        mode: 'code-first',
        policy: { strictQuestions: false, requireWeed: true, codeFirst: true },
      }),
      (action) => {
        if (action.kind === 'phase' && action.phase === 'distill') {
          distills += 1;
          return ok('distill', { specChanged: distills === 1, distillNew: distills === 1 ? 3 : 0 });
        }
        if (action.kind === 'phase' && action.phase === 'propagate')
          return ok('propagate', { newTests: ['captures lending'] });
        if (action.kind === 'red_check')
          return { kind: 'red_checked', passing: ['captures lending'], failing: [] };
        if (action.kind === 'measure') return measured([]);
        return ok('weed');
      },
    );
    expect(trace).toEqual([
      'distill',
      'propagate',
      'red_check',
      'measure',
      'weed',
      'distill',
      'measure',
      'weed',
      'witness',
      'terminal:converged',
    ]);
  });
});

describe('decide: decomposition', () => {
  const world =
    (slices: number, sliceOutcome?: { state: 'no_progress'; reason: string }) =>
    (action: LoopAction): LoopObservation => {
      if (action.kind === 'phase' && action.phase === 'tend') return ok('tend', { specChanged: true });
      if (action.kind === 'plan') return { kind: 'planned', slices };
      if (action.kind === 'run_slices')
        return sliceOutcome === undefined
          ? { kind: 'slices_done' }
          : { kind: 'slices_done', terminal: sliceOutcome };
      if (action.kind === 'phase' && action.phase === 'propagate') return ok('propagate', { newTests: [] });
      if (action.kind === 'measure') return measured([]);
      return ok('weed');
    };

  it('plans after the first gather and hands a multi-slice goal to the slice loops', () => {
    const { trace } = simulate(testConfig({ entry: 'tend', decompose: true }), world(3));
    expect(trace).toEqual(['tend', 'plan', 'run_slices', 'witness', 'terminal:converged']);
  });

  it('carries a slice that did not converge up as the run terminal state', () => {
    const { trace, state } = simulate(
      testConfig({ entry: 'tend', decompose: true }),
      world(2, { state: 'no_progress', reason: 'slice entity-lifecycle:Loan stalled' }),
    );
    expect(trace.at(-1)).toBe('terminal:no_progress');
    expect(state.terminal?.reason).toContain('Loan');
  });

  it('keeps a single-slice goal in the one loop', () => {
    const { trace } = simulate(testConfig({ entry: 'tend', decompose: true }), world(1));
    expect(trace).toEqual(['tend', 'plan', 'propagate', 'measure', 'weed', 'witness', 'terminal:converged']);
  });

  it('starts slice loops by propagating the parent spec change', () => {
    const { trace } = simulate(testConfig({ entry: 'weed', startWithPropagate: true }), world(1));
    expect(trace).toEqual(['propagate', 'measure', 'weed', 'witness', 'terminal:converged']);
  });
});

describe('decide: the witness gate (convergence is declared on its verdict)', () => {
  const fail = (
    violations: { violation: string; routing: string }[],
    failing: string[] = [],
  ): LoopObservation => ({
    kind: 'witnessed',
    verdict: 'FAIL',
    summary: 'witness: FAIL',
    violations,
    failing,
    restored: [],
  });
  // Tick 1 reads as converged (its measure is green); a later tick converges honestly.
  const world = (action: LoopAction): LoopObservation => {
    if (action.kind === 'phase' && action.phase === 'elicit') return ok('elicit', { specChanged: true });
    if (action.kind === 'phase' && action.phase === 'propagate') return ok('propagate', { newTests: ['a'] });
    if (action.kind === 'red_check') return { kind: 'red_checked', passing: [], failing: ['a'] };
    if (action.kind === 'measure') return measured([]);
    if (action.kind === 'phase') return ok(action.phase);
    throw new Error(`unexpected ${action.kind}`);
  };

  it('routes a tampered test to revert + propagate and goes on; a later PASS converges', () => {
    const { trace, state, actions } = simulate(testConfig(), world, {
      witness: (s) =>
        s.tick === 1
          ? fail([{ violation: 'test/a.test.js edited after propagate', routing: 'revert + propagate' }])
          : WITNESS_PASS,
    });
    expect(trace).toEqual([
      'elicit',
      'propagate',
      'red_check',
      'implement',
      'measure',
      'weed',
      'witness',
      'propagate',
      'red_check',
      'implement',
      'measure',
      'weed',
      'witness',
      'terminal:converged',
    ]);
    const second = actions.filter((a) => a.kind === 'phase' && a.phase === 'propagate')[1];
    expect(second?.kind === 'phase' && second.focus.reasons).toEqual([
      'witness: test/a.test.js edited after propagate → revert + propagate',
    ]);
    expect(state.witness).toEqual({
      tick: 2,
      verdict: 'PASS',
      summary: WITNESS_PASS.kind === 'witnessed' ? WITNESS_PASS.summary : '',
    });
    expect(state.terminal?.reason).toBe('the convergence invariant holds, and the witness passed');
  });

  it('a FAIL every time never converges: the caps end the run', () => {
    const { trace, state } = simulate(testConfig({ caps: { maxTicks: 3 } }), world, {
      witness: () => fail([{ violation: 'tests do not pass on re-run', routing: 'implement' }], ['a']),
    });
    expect(trace.filter((t) => t === 'witness').length).toBeGreaterThan(0);
    expect(trace.at(-1)).not.toBe('terminal:converged');
    expect(state.terminal?.state).toMatch(/max_ticks|no_progress/);
    expect(state.witness?.verdict).toBe('FAIL');
  });

  it('sends the re-run failures to implement in the next tick', () => {
    const { actions } = simulate(testConfig({ caps: { maxTicks: 2 } }), world, {
      witness: (s) =>
        s.tick === 1 ? fail([{ violation: 'a fails', routing: 'implement' }], ['a']) : WITNESS_PASS,
    });
    const implements_ = actions.filter(
      (a): a is Extract<LoopAction, { kind: 'phase' }> => a.kind === 'phase' && a.phase === 'implement',
    );
    expect(implements_.at(-1)?.focus.failing).toEqual(['a']);
  });

  it('stops awaiting input on a violation routed to escalate, and fails loudly when INCONCLUSIVE', () => {
    const escalated = simulate(testConfig(), world, {
      witness: () =>
        fail([{ violation: 'blocking question downgraded to parked: Who?', routing: 'escalate' }]),
    });
    expect(escalated.state.terminal).toEqual({
      state: 'awaiting_input',
      reason: 'the witness found: blocking question downgraded to parked: Who?',
    });
    const inconclusive = simulate(testConfig(), world, {
      witness: () => ({
        ...fail([]),
        verdict: 'INCONCLUSIVE',
        summary: 'witness: INCONCLUSIVE · checks 0/6',
      }),
    });
    expect(inconclusive.state.terminal?.state).toBe('failed');
    expect(inconclusive.state.terminal?.reason).toContain('INCONCLUSIVE');
  });

  it('a decomposed run whose whole-run witness fails goes back to its slices', () => {
    let witnessed = 0;
    const { trace } = simulate(
      testConfig({ entry: 'tend', decompose: true }),
      (action) => {
        if (action.kind === 'phase') return ok(action.phase, { specChanged: true });
        if (action.kind === 'plan') return { kind: 'planned', slices: 2 };
        return { kind: 'slices_done' };
      },
      {
        witness: () =>
          ++witnessed === 1 ? fail([{ violation: 'x edited', routing: 'revert + propagate' }]) : WITNESS_PASS,
      },
    );
    expect(trace).toEqual([
      'tend',
      'plan',
      'run_slices',
      'witness',
      'run_slices',
      'witness',
      'terminal:converged',
    ]);
  });

  it('records every phase with its tick and the reason it was chosen, and the red-before-green evidence', () => {
    const { state } = simulate(testConfig(), world);
    expect(state.phaseLog).toEqual([
      { tick: 1, name: 'elicit', reason: 'entry: elicit' },
      { tick: 1, name: 'propagate', reason: 'the spec changed' },
      { tick: 1, name: 'implement', reason: '1 failing test(s)' },
      { tick: 1, name: 'weed', reason: 'verify: spec and code alignment after the measure' },
      {
        tick: 1,
        name: 'witness',
        reason: 'the convergence invariant holds; the witness re-derives it from ground truth',
      },
    ]);
    expect(state.redBeforeGreen).toEqual({ newTests: ['a'], seenRed: ['a'], seenGreen: [] });
  });
});

describe('budget pre-flight: the worst case reserved by default', () => {
  it("reserves the model's worst case (reserveUsd) when no per-call ceiling is given; the ceiling overrides it", () => {
    expect(budgetStop({ budgetUsd: 2, reserveUsd: 1.56 }, 0.44)).toBeUndefined();
    expect(budgetStop({ budgetUsd: 2, reserveUsd: 1.56 }, 0.45)).toBe(
      "spent $0.45; the next call may cost up to $1.56 (reserved from the model's price table); budget $2.00",
    );
    expect(budgetStop({ budgetUsd: 2, reserveUsd: 1.56, maxCallUsd: 0.5 }, 0.45)).toBeUndefined();
    // Without a known worst case only a spent budget stops.
    expect(budgetStop({ budgetUsd: 2 }, 1.99)).toBeUndefined();
  });

  it('the spec loop stops before a call whose reserved worst case does not fit', () => {
    const { trace, state } = simulate(
      testConfig({ caps: { maxTicks: 10, budgetUsd: 2, reserveUsd: 1.5 } }),
      (action) => {
        if (action.kind === 'phase') return { ...ok(action.phase), costUsd: 0.6 };
        if (action.kind === 'measure') return measured(['a']);
        return { kind: 'red_checked', passing: [], failing: [] };
      },
    );
    expect(trace.at(-1)).toBe('terminal:budget_exhausted');
    expect(state.spentUsd).toBeCloseTo(0.6, 6);
  });
});
