import { describe, expect, it } from 'vitest';
import type { ModeStop } from './mode-context.js';
import {
  decideStateFile,
  initialStateFileProgram,
  type StateFileAction,
  type StateFileObservation,
  type StateFileProgramState,
} from './state-file-program.js';
import { initialAlState, type AlState } from './state-file.js';

const GOAL = 'list the fruits';
const config = { path: '/p/.allium-loop/state.json' };
const start = (noProgressTicks = 3) =>
  initialStateFileProgram(GOAL, config, 'state.json', noProgressTicks, undefined);

/**
 * Runs the program against a scripted world: `world(action, state)` returns what the driver would observe. Stops
 * at `finish` (or after 50 actions); returns the trace of action kinds, the actions and the final state.
 */
function simulate(
  state: StateFileProgramState,
  first: StateFileObservation,
  world: (action: StateFileAction, state: StateFileProgramState) => StateFileObservation,
): { trace: string[]; actions: StateFileAction[]; state: StateFileProgramState } {
  const actions: StateFileAction[] = [];
  let observation = first;
  for (let i = 0; i < 50; i += 1) {
    const decision = decideStateFile(state, observation);
    state = decision.state;
    actions.push(decision.action);
    if (decision.action.kind === 'finish') break;
    observation = world(decision.action, state);
  }
  return { trace: actions.map((a) => a.kind), actions, state };
}

const ok = (state: AlState) => ({ kind: 'ok' as const, state });
const finished = (actions: StateFileAction[]): ModeStop | undefined => {
  const last = actions.at(-1);
  return last?.kind === 'finish' ? last.stop : undefined;
};

/** A world whose agent claims `done` on its `doneAt`-th step; the result checks out from `checksFrom` on. */
function agentWorld(doneAt: number, checks: (n: number) => string | undefined) {
  let steps = 0;
  return (action: StateFileAction): StateFileObservation => {
    switch (action.kind) {
      case 'initialise':
      case 'record_tick':
        return { kind: 'written' };
      case 'check_caps':
        return { kind: 'capped', stop: undefined };
      case 'check_done':
        return { kind: 'checked', problem: checks(steps) };
      case 'step': {
        steps += 1;
        const done = steps >= doneAt;
        const written: AlState = {
          ...action.write,
          status: done ? 'done' : 'in_progress',
          progress: `step ${String(steps)}`,
          result: done ? 'Wrote 3 entries to out.md' : null,
        };
        return {
          kind: 'stepped',
          tick: steps,
          outcome: 'ok',
          read: ok(written),
          problem: done ? checks(steps) : undefined,
        };
      }
      case 'finish':
        throw new Error('unreachable');
    }
  };
}

describe('the state-file program (pure)', () => {
  it('a missing file is initialised, then one step per tick until a verified done converges', () => {
    const { trace, actions, state } = simulate(
      start(),
      { kind: 'opened', read: { kind: 'missing' } },
      agentWorld(2, () => undefined),
    );
    expect(trace).toEqual([
      'initialise',
      'check_caps',
      'step',
      'record_tick',
      'check_caps',
      'step',
      'record_tick',
      'check_done',
      'finish',
    ]);
    expect(actions[0]).toEqual({ kind: 'initialise', write: initialAlState(GOAL) });
    // The engine owns the iteration: pending → in_progress, iteration + 1 before each step.
    expect(
      actions
        .filter((a) => a.kind === 'step')
        .map((a) => (a.kind === 'step' ? [a.write.status, a.write.iteration] : [])),
    ).toEqual([
      ['in_progress', 1],
      ['in_progress', 2],
    ]);
    expect(finished(actions)).toEqual({
      state: 'converged',
      reason: 'state_done',
      detail: 'state.json is done and its result checks out; result: Wrote 3 entries to out.md',
    });
    expect(state.record.iterations.map((i) => [i.tick, i.claimed, i.status, i.note])).toEqual([
      [1, 'in_progress', 'in_progress', null],
      [2, 'done', 'done', 'result verified'],
    ]);
  });

  it('a done whose result does not check out is turned back into in_progress with the reason', () => {
    const { actions, state } = simulate(
      start(),
      { kind: 'opened', read: ok(initialAlState(GOAL)) },
      agentWorld(1, (n) => (n < 3 ? 'out.md does not exist' : undefined)),
    );
    const ticks = actions.filter((a) => a.kind === 'record_tick');
    expect(ticks[0]).toMatchObject({
      write: { status: 'in_progress', error: 'done not accepted: out.md does not exist' },
      line: 'tick 1 · state done → in_progress (out.md does not exist)',
      events: [
        { type: 'extension', name: 'done_rejected', data: { reason: 'out.md does not exist' } },
        { name: 'iteration' },
      ],
    });
    expect(finished(actions)?.state).toBe('converged');
    expect(state.record.iterations).toHaveLength(3);
  });

  it('a deleted or broken file is restored from the engine copy, with a violation', () => {
    let steps = 0;
    const { actions } = simulate(start(), { kind: 'opened', read: ok(initialAlState(GOAL)) }, (action) => {
      if (action.kind === 'step') {
        steps += 1;
        const read =
          steps === 1
            ? { kind: 'missing' as const }
            : { kind: 'invalid' as const, issues: ['status: expected one of …'] };
        return { kind: 'stepped', tick: steps, outcome: 'ok', read, problem: undefined };
      }
      if (action.kind === 'check_caps')
        return {
          kind: 'capped',
          stop: steps >= 2 ? { state: 'max_ticks', reason: 'max_ticks', detail: 'cap' } : undefined,
        };
      return { kind: 'written' };
    });
    const ticks = actions.flatMap((a) => (a.kind === 'record_tick' ? [a] : []));
    expect(ticks.map((t) => [t.write.iteration, t.write.error, t.events[0]])).toEqual([
      [
        1,
        'the agent deleted the state file',
        { type: 'violation', kind: 'state_file_invalid', detail: 'the agent deleted the state file' },
      ],
      [
        2,
        'the agent left the state file invalid: status: expected one of …',
        {
          type: 'violation',
          kind: 'state_file_invalid',
          detail: 'the agent left the state file invalid: status: expected one of …',
        },
      ],
    ]);
    expect(finished(actions)?.state).toBe('max_ticks');
  });

  it('the agent cannot change the goal or the iteration', () => {
    const { actions } = simulate(start(), { kind: 'opened', read: ok(initialAlState(GOAL)) }, (action) => {
      if (action.kind === 'step')
        return {
          kind: 'stepped',
          tick: 1,
          outcome: 'ok',
          read: ok({
            ...action.write,
            goal: 'something else',
            iteration: 99,
            status: 'failed',
            error: 'gave up',
          }),
          problem: undefined,
        };
      return action.kind === 'check_caps' ? { kind: 'capped', stop: undefined } : { kind: 'written' };
    });
    const tick = actions.find((a) => a.kind === 'record_tick');
    expect(tick).toMatchObject({ write: { goal: GOAL, iteration: 1, status: 'failed' } });
    expect(tick?.kind === 'record_tick' && tick.events[0]).toEqual({
      type: 'violation',
      kind: 'state_goal_edited',
      detail: 'the agent changed the goal; restored',
    });
    expect(finished(actions)).toEqual({
      state: 'failed',
      reason: 'agent_failed',
      detail: 'the agent marked the goal failed: gave up',
    });
  });

  it('on done the result is in the stop; at a cap the stop shows the last progress (like /al at its max)', () => {
    const capped = agentWorld(99, () => undefined);
    let checks = 0;
    const run = simulate(start(), { kind: 'opened', read: { kind: 'missing' } }, (action) =>
      action.kind === 'check_caps' && (checks += 1) > 2
        ? {
            kind: 'capped',
            stop: { state: 'max_ticks', reason: 'max_ticks', detail: 'tick cap of 2 reached' },
          }
        : capped(action),
    );
    expect(finished(run.actions)).toEqual({
      state: 'max_ticks',
      reason: 'max_ticks',
      detail: 'tick cap of 2 reached; last progress: step 2',
    });
    // Ctrl-C is not a cap: nothing is appended; an object result is shown as JSON.
    const cancelled = simulate(start(), { kind: 'opened', read: { kind: 'missing' } }, (action) =>
      action.kind === 'check_caps' && (checks += 1) > 4
        ? {
            kind: 'capped',
            stop: { state: 'cancelled', reason: 'cancelled', detail: 'cancelled by the user' },
          }
        : capped(action),
    );
    expect(finished(cancelled.actions)?.detail).toBe('cancelled by the user');
    const done: AlState = { ...initialAlState(GOAL), status: 'done', result: { files: ['a.md'], rows: 2 } };
    const resumed = simulate(start(), { kind: 'opened', read: ok(done) }, () => ({
      kind: 'checked',
      problem: undefined,
    }));
    expect(finished(resumed.actions)?.detail).toBe(
      'state.json is done and its result checks out; result: {"files":["a.md"],"rows":2}',
    );
  });

  it('stops no_progress when the file does not change for noProgressTicks iterations', () => {
    const { trace, actions } = simulate(
      start(2),
      { kind: 'opened', read: ok(initialAlState(GOAL)) },
      (action) => {
        if (action.kind === 'step')
          return {
            kind: 'stepped',
            tick: action.write.iteration,
            outcome: 'ok',
            read: ok({ ...action.write, progress: 'same' }),
            problem: undefined,
          };
        return action.kind === 'check_caps' ? { kind: 'capped', stop: undefined } : { kind: 'written' };
      },
    );
    expect(trace.filter((k) => k === 'step')).toHaveLength(3);
    expect(finished(actions)).toMatchObject({ state: 'no_progress' });
  });

  it('an invalid file or another goal at the start fails without a tick; a stopped call ends the run with its stop', () => {
    expect(
      finished(
        simulate(start(), { kind: 'opened', read: { kind: 'invalid', issues: ['bad'] } }, () => ({
          kind: 'written',
        })).actions,
      ),
    ).toEqual({
      state: 'failed',
      reason: 'state_invalid',
      detail: `${config.path}: bad`,
    });
    const other = simulate(start(), { kind: 'opened', read: ok(initialAlState('another goal')) }, () => ({
      kind: 'written',
    }));
    expect(other.actions).toEqual([
      {
        kind: 'finish',
        stop: {
          state: 'failed',
          reason: 'goal_mismatch',
          detail: `${config.path} holds another goal: "another goal"`,
        },
        summary: false,
      },
    ]);
    const cancel: ModeStop = { state: 'cancelled', reason: 'cancelled', detail: 'cancelled by the user' };
    const stopped = simulate(start(), { kind: 'opened', read: ok(initialAlState(GOAL)) }, (action) =>
      action.kind === 'step' ? { kind: 'step_stopped', stop: cancel } : { kind: 'capped', stop: undefined },
    );
    expect(stopped.trace).toEqual(['check_caps', 'step', 'finish']);
    expect(finished(stopped.actions)).toEqual(cancel);
  });
});
