import { describe, expect, it } from 'vitest';
import type { VerifyModeState } from '@allium-loop/ledger';
import type { ModeStop } from './mode-context.js';
import {
  decideVerify,
  initialVerifyProgram,
  loopExitName,
  recordedRevision,
  type CommandRun,
  type VerifyAction,
  type VerifyObservation,
  type VerifyProgramState,
} from './verify-program.js';

const GOAL = 'make the parser accept trailing commas';
const PLAIN = { command: 'npm test', intervalMs: 0 };
const CLIMB = {
  command: 'node bench.mjs',
  intervalMs: 0,
  hillclimb: { score: 'score: (\\d+)', direction: 'max' as const, target: 50 },
};

const run = (exitCode: number, output = `exit ${String(exitCode)}`): CommandRun => ({
  exitCode,
  output,
  timedOut: false,
  aborted: false,
  durationMs: 10,
});
const scored = (score: number) => run(0, `score: ${String(score)}`);

/**
 * Runs the program against a scripted world: `world(action, state)` returns what the driver would observe. Stops at
 * `finish` (or after 200 actions); returns the trace of action kinds, the actions and the final state.
 */
function simulate(
  state: VerifyProgramState,
  first: VerifyObservation,
  world: (action: VerifyAction, state: VerifyProgramState) => VerifyObservation,
): { trace: string[]; actions: VerifyAction[]; state: VerifyProgramState } {
  const actions: VerifyAction[] = [];
  let observation = first;
  for (let i = 0; i < 200; i += 1) {
    const decision = decideVerify(state, observation);
    state = decision.state;
    actions.push(decision.action);
    if (decision.action.kind === 'finish') break;
    observation = world(decision.action, state);
  }
  return { trace: actions.map((a) => a.kind), actions, state };
}

const finished = (actions: VerifyAction[]) => {
  const last = actions.at(-1);
  return last?.kind === 'finish' ? { stop: last.stop, loop: last.loop } : undefined;
};

interface WorldOptions {
  /** The command's result: baseline is call 0, tick n is call n. */
  readonly measure: (call: number) => CommandRun;
  readonly maxTicks?: number;
  readonly head?: (call: number) => string | null;
  /** The agent step of tick n stops the run. */
  readonly stepStop?: (tick: number) => ModeStop | undefined;
  readonly guard?: (tick: number) => ModeStop | undefined;
  readonly wallClockLeftMs?: number;
  readonly git?: boolean;
  /** The first tick number (a resumed run goes on from the ledger's count). */
  readonly firstTick?: number;
  /** The tokens the agent step of tick n reported (none when absent). */
  readonly tokens?: (tick: number) => number | undefined;
}

/** A world with a tick cap, a command whose results are scripted, and git checkpoints named after the tick. */
function world(options: WorldOptions) {
  let tick = (options.firstTick ?? 1) - 1;
  let calls = 0;
  const cap = options.maxTicks ?? 10;
  const head = options.head ?? (() => 'c0ffee');
  const log: string[] = [];
  const play = (action: VerifyAction): VerifyObservation => {
    switch (action.kind) {
      case 'baseline':
        return {
          kind: 'baselined',
          run: options.measure(0),
          head: head(0),
          fingerprint: { files: {} },
          ...(action.checkpoint ? { checkpoint: options.git === false ? null : 'commit-0' } : {}),
        };
      case 'save_baseline':
      case 'save_state':
        return { kind: 'saved' };
      case 'reset_head':
        log.push(`reset ${action.from} → ${action.to}`);
        return { kind: 'head_reset', outcome: 'reset' };
      case 'roll_back':
        log.push(`roll back tick ${String(action.open.tick)} (${action.why})`);
        return { kind: 'rolled_back' };
      case 'check_refs':
        return { kind: 'refs_checked' };
      case 'check_caps':
        return {
          kind: 'capped',
          stop:
            tick >= cap
              ? { state: 'max_ticks', reason: 'max_ticks', detail: `tick cap of ${String(cap)} reached` }
              : undefined,
          ...(options.wallClockLeftMs === undefined ? {} : { wallClockLeftMs: options.wallClockLeftMs }),
        };
      case 'begin_tick':
        tick += 1;
        return { kind: 'tick_begun', tick };
      case 'open_tick':
        return {
          kind: 'tick_opened',
          open:
            options.git === false
              ? null
              : {
                  tick: action.tick,
                  before: `before-${String(action.tick)}`,
                  ...(action.best === undefined ? {} : { best: action.best }),
                },
        };
      case 'agent_step': {
        const stop = options.stepStop?.(action.tick);
        if (stop !== undefined) return { kind: 'step_stopped', stop };
        const tokens = options.tokens?.(action.tick);
        return tokens === undefined
          ? { kind: 'stepped', outcome: 'ok' }
          : { kind: 'stepped', outcome: 'ok', tokens };
      }
      case 'collect_edits':
        return { kind: 'edits_collected', edits: { after: `after-${String(tick)}`, paths: ['score.txt'] } };
      case 'guard_command':
        return { kind: 'guarded', stop: options.guard?.(tick) };
      case 'measure':
        calls += 1;
        return { kind: 'measured', run: options.measure(action.tick), head: head(action.tick) };
      case 'keep_checkpoint':
        log.push(`keep ${String(action.tick)}`);
        return { kind: 'checkpoint_kept', commit: `commit-${String(action.tick)}` };
      case 'revert':
        log.push(`revert ${String(action.open.tick)}: ${action.edits.paths.join(',')}`);
        return { kind: 'reverted' };
      case 'record_tick':
        return { kind: 'recorded' };
      case 'wait':
        log.push(`wait ${String(action.ms)}`);
        return { kind: 'waited' };
      case 'finish':
        throw new Error('unreachable');
    }
  };
  return { play, log, measured: () => calls };
}

const fresh = (config: VerifyModeState['config'] = PLAIN, noProgress = 3) =>
  initialVerifyProgram(GOAL, config, noProgress, undefined);
const opened = (head: string | null = 'c0ffee'): VerifyObservation => ({ kind: 'opened', head });

describe('the verify program (pure)', () => {
  it('measures a baseline, then one agent step and one measurement per tick until the command exits 0', () => {
    const w = world({ measure: (n) => (n < 3 ? run(1, `failing ${String(n)}`) : run(0)) });
    const { trace, actions, state } = simulate(fresh(), opened(), w.play);
    // Each tick opens (a snapshot to roll an interrupted step back to) before the agent's call.
    const tick = [
      'check_caps',
      'begin_tick',
      'open_tick',
      'save_state',
      'agent_step',
      'guard_command',
      'measure',
      'check_refs',
      'record_tick',
    ];
    expect(trace).toEqual(['baseline', 'save_baseline', ...tick, ...tick, ...tick, 'finish']);
    expect(state.record.pending).toBeNull();
    expect(finished(actions)).toEqual({
      stop: {
        state: 'converged',
        reason: 'command_passed',
        detail: 'the verify command exits 0 after tick 3',
      },
      loop: 'CONVERGED',
    });
    expect(state.record.ticks.map((t) => [t.tick, t.exitCode, t.delta, t.head])).toEqual([
      [1, 1, 'exit 1 (same)', 'c0ffee'],
      [2, 1, 'exit 1 (same)', 'c0ffee'],
      [3, 0, 'exit 1 → 0', 'c0ffee'],
    ]);
    // The agent is asked with the goal, the command and the last output; the engine never trusts its text.
    const prompts = actions.flatMap((a) => (a.kind === 'agent_step' ? [a.prompt] : []));
    expect(prompts[0]).toContain(GOAL);
    expect(prompts[1]).toContain('failing 1');
  });

  it('a baseline that already exits 0 converges at once, with no agent call', () => {
    const { trace, actions } = simulate(fresh(), opened(), world({ measure: () => run(0) }).play);
    expect(trace).toEqual(['baseline', 'save_baseline', 'finish']);
    expect(finished(actions)?.stop.reason).toBe('already_passing');
  });

  it('records the revision of every step, and a resume compares HEAD with the last one', () => {
    const heads = ['base', 'h1', 'h2'];
    const w = world({ measure: () => run(1), head: (n) => heads[n] ?? null, maxTicks: 2 });
    const { state, actions } = simulate(fresh(), opened('base'), w.play);
    expect(finished(actions)?.loop).toBe('EXHAUSTED');
    expect(state.record.ticks.map((t) => t.head)).toEqual(['h1', 'h2']);
    expect(recordedRevision(state.record)).toBe('h2');
    const resumed = simulate(
      initialVerifyProgram(GOAL, PLAIN, 3, state.record),
      opened('user-commit'),
      world({ measure: () => run(1), maxTicks: 3, firstTick: 3 }).play,
    );
    expect(resumed.actions[0]).toEqual({ kind: 'reset_head', from: 'user-commit', to: 'h2' });
    expect(resumed.trace.slice(1, 3)).toEqual(['check_caps', 'begin_tick']);
    // HEAD where the run left it: nothing to reset.
    const same = decideVerify(initialVerifyProgram(GOAL, PLAIN, 3, state.record), opened('h2'));
    expect(same.action).toEqual({ kind: 'check_caps' });
    // A ledger written before ticks kept their revision: the last verdict's head is the recorded one.
    const old = { ...state.record, ticks: state.record.ticks.map(({ head: _head, ...rest }) => rest) };
    expect(recordedRevision(old, 'from-verdict')).toBe('from-verdict');
    expect(recordedRevision({ ...old, ticks: [] })).toBe('base');
  });

  it('waits the interval between ticks, never past the wall clock, and not after the last tick', () => {
    const config = { ...PLAIN, intervalMs: 30_000 };
    const w = world({ measure: (n) => (n < 3 ? run(1, String(n)) : run(0)) });
    const { trace } = simulate(fresh(config), opened(), w.play);
    expect(trace.filter((k) => k === 'wait')).toHaveLength(2);
    expect(w.log).toEqual(['wait 30000', 'wait 30000']);
    const short = world({ measure: (n) => run(1, String(n)), wallClockLeftMs: 12_000, maxTicks: 2 });
    const capped = simulate(fresh(config), opened(), short.play);
    expect(short.log).toEqual(['wait 12000']);
    const wait = capped.actions.find((a) => a.kind === 'wait');
    expect(wait).toMatchObject({ line: 'waiting 12 s before tick 2 (the wall-clock cap ends the run then)' });
    // After the wait come the caps: a wall clock that ran out during it ends the run there.
    expect(capped.trace.slice(capped.trace.indexOf('wait'), capped.trace.indexOf('wait') + 3)).toEqual([
      'wait',
      'check_caps',
      'begin_tick',
    ]);
    // The caps are checked before the wait: no wait after the last tick the cap allows.
    expect(capped.trace.slice(-3)).toEqual(['record_tick', 'check_caps', 'finish']);
  });

  it('stops no_progress when the exit code and output stay the same, named EXHAUSTED for /loop scripts', () => {
    const { actions, state } = simulate(
      fresh(PLAIN, 2),
      opened(),
      world({ measure: () => run(1, 'same') }).play,
    );
    expect(finished(actions)).toMatchObject({ stop: { state: 'no_progress' }, loop: 'EXHAUSTED' });
    expect(state.record.ticks).toHaveLength(3);
  });

  it('tolerates one backtrack of the measurement (A→B→A); the second stops the run no_progress', () => {
    const outputs = ['A', 'B', 'A', 'C', 'D', 'C', 'D'];
    const { actions, state } = simulate(
      fresh(PLAIN, 3),
      opened(),
      world({ measure: (n) => run(1, n === 0 ? 'baseline' : outputs[n - 1]!) }).play,
    );
    // Tick 3 went back to tick 1's output (tolerated), tick 6 to tick 4's (the second backtrack): the run stops.
    expect(state.record.ticks).toHaveLength(6);
    expect(finished(actions)).toMatchObject({
      stop: {
        state: 'no_progress',
        reason: 'oscillation',
        detail: expect.stringContaining('2 backtracks; 1 tolerated'),
      },
      loop: 'EXHAUSTED',
    });
  });

  it('stops token_climb when the output stays the same while each tick uses more tokens, before --no-progress-ticks', () => {
    const w = world({
      measure: (n) => run(1, n < 2 ? `failing ${String(n)}` : 'same'),
      tokens: (tick) => 1000 * tick,
    });
    const { actions, state } = simulate(fresh(PLAIN, 10), opened(), w.play);
    expect(state.record.ticks.map((t) => t.tokens)).toEqual([1000, 2000, 3000, 4000]);
    expect(finished(actions)).toMatchObject({
      stop: {
        state: 'no_progress',
        reason: 'token_climb',
        detail: expect.stringContaining('2000 → 3000 → 4000'),
      },
    });
    // Flat tokens do not climb: the same output then runs to the no-progress cap of 10.
    const flat = simulate(
      fresh(PLAIN, 10),
      opened(),
      world({ measure: () => run(1, 'same'), tokens: () => 500, maxTicks: 20 }).play,
    );
    expect(flat.state.record.ticks).toHaveLength(11);
    expect(finished(flat.actions)?.stop.reason).toBe('no_progress');
  });

  it('hill-climb: reverted attempts that measure the same stop no_progress; a kept tick always moves the state', () => {
    // Tick 1 is kept (score 10); ticks 2.. measure score 3 each time and are reverted.
    const w = world({ measure: (n) => (n === 0 ? scored(5) : n === 1 ? scored(10) : scored(3)) });
    const { actions, state } = simulate(fresh(CLIMB, 2), opened(), w.play);
    expect(state.record.ticks.map((t) => t.kept)).toEqual([true, false, false, false]);
    expect(finished(actions)?.stop).toMatchObject({ state: 'no_progress', reason: 'no_progress' });
    expect(w.log.filter((line) => line.startsWith('roll back'))).toEqual([]);
  });

  it('hill-climb: one attempt that goes back to an earlier measurement is tolerated, the second stops; tokens climbing stop too', () => {
    const scores = [10, 4, 10, 6, 10, 6];
    const back = simulate(
      fresh(CLIMB, 3),
      opened(),
      world({ measure: (n) => scored(n === 0 ? 5 : scores[n - 1]!) }).play,
    );
    // 10 (kept) → 4 → 10 (tolerated) → 6 → 10 → 6: the second return to an earlier measurement ends the climb.
    expect(back.state.record.ticks.map((t) => t.score)).toEqual([10, 4, 10, 6, 10]);
    expect(finished(back.actions)?.stop).toMatchObject({ state: 'no_progress', reason: 'oscillation' });
    const climb = simulate(
      fresh(CLIMB, 10),
      opened(),
      world({ measure: (n) => scored(n === 0 ? 5 : 7), tokens: (tick) => 100 * tick }).play,
    );
    expect(climb.state.record.ticks).toHaveLength(3);
    expect(finished(climb.actions)?.stop).toMatchObject({ state: 'no_progress', reason: 'token_climb' });
  });

  it('an agent that edits the command stops the run failed, with no /loop name; nothing is measured after it', () => {
    const w = world({
      measure: () => run(1),
      guard: (tick) =>
        tick === 2
          ? { state: 'failed', reason: 'verify_command_edited', detail: 'the agent edited check.sh' }
          : undefined,
    });
    const { actions, trace } = simulate(fresh(), opened(), w.play);
    expect(finished(actions)).toEqual({
      stop: { state: 'failed', reason: 'verify_command_edited', detail: 'the agent edited check.sh' },
      loop: undefined,
    });
    // The unmeasured tick is rolled back before the terminal record.
    expect(trace.slice(-4)).toEqual(['guard_command', 'roll_back', 'check_refs', 'finish']);
    expect(w.log).toEqual(['roll back tick 2 (stopped)']);
    expect(w.measured()).toBe(1);
  });

  it('hill-climb keeps a tick that beats the best, reverts one that does not, and converges at the target', () => {
    const scores = [10, 20, 5, 60];
    const w = world({ measure: (n) => scored(scores[n] ?? 0) });
    const { trace, actions, state } = simulate(fresh(CLIMB), opened(), w.play);
    const tick = (judged: string) => [
      'check_caps',
      'begin_tick',
      'open_tick',
      'save_state',
      'agent_step',
      'collect_edits',
      'guard_command',
      'measure',
      'check_refs',
      ...(judged === '' ? [] : [judged]),
      'record_tick',
    ];
    expect(trace).toEqual([
      'baseline',
      'save_baseline',
      ...tick('keep_checkpoint'),
      ...tick('revert'),
      ...tick('keep_checkpoint'),
      'check_refs',
      'finish',
    ]);
    expect(w.log).toEqual(['keep 1', 'revert 2: score.txt', 'keep 3']);
    expect(state.record.best).toEqual({ score: 60, tick: 3, commit: 'commit-3' });
    expect(state.record.ticks.map((t) => [t.score, t.kept, t.delta])).toEqual([
      [20, true, 'exit 0 (same), score 10 → 20'],
      [5, false, 'exit 0 (same), score 20 → 5'],
      [60, true, 'exit 0 (same), score 20 → 60'],
    ]);
    expect(state.record.pending).toBeNull();
    const record = actions.find((a) => a.kind === 'record_tick' && a.entry.tick === 2);
    expect(record?.kind === 'record_tick' ? record.events : []).toEqual([
      {
        name: 'reverted',
        data: { to: 'commit-1', bestTick: 1, score: 5, best: 20, paths: ['score.txt'] },
      },
    ]);
    expect(finished(actions)).toMatchObject({ stop: { reason: 'target_reached' }, loop: 'CONVERGED' });
  });

  it('a climb outside a git work tree fails at the baseline', () => {
    const { actions } = simulate(
      fresh(CLIMB),
      opened(null),
      world({ measure: () => scored(1), git: false }).play,
    );
    expect(finished(actions)?.stop).toMatchObject({ state: 'failed', reason: 'not_a_git_repository' });
  });

  it('a run stopped inside a climb tick rolls the tick back and checks the refs before its terminal record', () => {
    const w = world({
      measure: (n) => scored(10 + n),
      stepStop: (tick) =>
        tick === 2
          ? { state: 'timed_out', reason: 'wall_clock', detail: 'wall-clock cap reached' }
          : undefined,
    });
    const { trace, actions, state } = simulate(fresh(CLIMB), opened(), w.play);
    expect(trace.slice(-4)).toEqual(['agent_step', 'roll_back', 'check_refs', 'finish']);
    expect(w.log.at(-1)).toBe('roll back tick 2 (stopped)');
    expect(state.record.pending).toBeNull();
    expect(finished(actions)).toMatchObject({ stop: { state: 'timed_out' }, loop: 'EXHAUSTED' });
  });

  it('a climb resumed after a crash inside a tick resets the branch, rolls the open tick back, checks refs, then goes on', () => {
    const w = world({ measure: (n) => scored(10 + n), maxTicks: 1 });
    const first = simulate(fresh(CLIMB), opened('base'), w.play);
    // The crash: the ledger holds tick 2 opened (its snapshot saved), nothing after.
    const crashed: VerifyModeState = {
      ...first.state.record,
      pending: { tick: 2, before: 'before-2', best: 'commit-1' },
    };
    const again = world({ measure: () => scored(99), maxTicks: 3, firstTick: 3 });
    const { trace, state } = simulate(
      initialVerifyProgram(GOAL, CLIMB, 3, crashed),
      opened('new-commit'),
      again.play,
    );
    expect(trace.slice(0, 5)).toEqual(['reset_head', 'roll_back', 'check_refs', 'check_caps', 'begin_tick']);
    expect(again.log.slice(0, 2)).toEqual(['reset new-commit → c0ffee', 'roll back tick 2 (interrupted)']);
    expect(state.record.ticks.map((t) => t.tick)).toEqual([1, 3]);
    expect(state.record.best).toMatchObject({ score: 99, tick: 3 });
  });

  it('plain verify resumed after a crash inside a tick rolls the open tick back before anything else, then goes on', () => {
    const w = world({ measure: (n) => run(1, `failing ${String(n)}`), maxTicks: 1 });
    const first = simulate(fresh(), opened(), w.play);
    // The crash: the ledger holds tick 2 opened (its snapshot saved, the agent's edits half done), nothing after.
    const crashed: VerifyModeState = { ...first.state.record, pending: { tick: 2, before: 'before-2' } };
    const again = world({ measure: () => run(0), maxTicks: 3, firstTick: 3 });
    const { trace, actions, state } = simulate(
      initialVerifyProgram(GOAL, PLAIN, 3, crashed),
      opened(),
      again.play,
    );
    expect(trace.slice(0, 4)).toEqual(['roll_back', 'check_refs', 'check_caps', 'begin_tick']);
    expect(actions[0]).toEqual({
      kind: 'roll_back',
      open: { tick: 2, before: 'before-2' },
      why: 'interrupted',
    });
    expect(again.log[0]).toBe('roll back tick 2 (interrupted)');
    expect(state.record.ticks.map((t) => t.tick)).toEqual([1, 3]);
    expect(state.record.pending).toBeNull();
    expect(actions.filter((a) => a.kind === 'finish')).toHaveLength(1);
    expect(finished(actions)).toMatchObject({ stop: { state: 'converged' }, loop: 'CONVERGED' });
  });

  it('plain verify with the HEAD moved and a tick open: the branch is reset first, then the tick rolled back', () => {
    const w = world({ measure: () => run(1, 'x'), maxTicks: 1 });
    const first = simulate(fresh(), opened(), w.play);
    const crashed: VerifyModeState = { ...first.state.record, pending: { tick: 2, before: 'before-2' } };
    const { trace } = simulate(
      initialVerifyProgram(GOAL, PLAIN, 3, crashed),
      opened('user-commit'),
      world({ measure: () => run(0), firstTick: 3 }).play,
    );
    expect(trace.slice(0, 3)).toEqual(['reset_head', 'roll_back', 'check_refs']);
  });

  it('plain verify stopped inside a tick (wall clock during the call) rolls the tick back; outside git no tick opens', () => {
    const w = world({
      measure: (n) => run(1, String(n)),
      stepStop: (tick) =>
        tick === 2
          ? { state: 'timed_out', reason: 'wall_clock', detail: 'wall-clock cap reached' }
          : undefined,
    });
    const stopped = simulate(fresh(), opened(), w.play);
    expect(stopped.trace.slice(-4)).toEqual(['agent_step', 'roll_back', 'check_refs', 'finish']);
    expect(w.log).toEqual(['roll back tick 2 (stopped)']);
    expect(stopped.state.record.pending).toBeNull();
    // Outside git there is nothing to roll back to: the tick runs without opening, as before.
    const plain = simulate(
      fresh(),
      opened(null),
      world({ measure: (n) => (n < 2 ? run(1, String(n)) : run(0)), git: false }).play,
    );
    const tick = [
      'check_caps',
      'begin_tick',
      'open_tick',
      'agent_step',
      'guard_command',
      'measure',
      'record_tick',
    ];
    expect(plain.trace).toEqual(['baseline', 'save_baseline', ...tick, ...tick, 'finish']);
    expect(plain.state.record.pending).toBeUndefined();
  });

  it('forced compaction: a fresh process resumed right before the converging tick converges exactly once, repeating nothing', () => {
    const results = [run(1, 'a'), run(1, 'b'), run(1, 'c'), run(0, 'ok')];
    // The first process is cut after tick 2 is recorded (its context gone); only the ledger's record survives.
    const first = simulate(fresh(), opened(), world({ measure: (n) => results[n]!, maxTicks: 2 }).play);
    expect(first.state.record.ticks.map((t) => t.tick)).toEqual([1, 2]);
    const second = world({ measure: (n) => results[n]!, maxTicks: 10, firstTick: 3 });
    const { trace, actions, state } = simulate(
      initialVerifyProgram(GOAL, PLAIN, 3, first.state.record),
      opened(),
      second.play,
    );
    expect(trace.filter((k) => k === 'baseline')).toEqual([]);
    expect(trace.filter((k) => k === 'agent_step')).toHaveLength(1);
    expect(second.measured()).toBe(1);
    expect(state.record.ticks.map((t) => t.tick)).toEqual([1, 2, 3]);
    expect(actions.filter((a) => a.kind === 'finish')).toHaveLength(1);
    expect(finished(actions)).toMatchObject({ stop: { state: 'converged' }, loop: 'CONVERGED' });
  });

  it('names every terminal state for /loop scripts: CONVERGED, EXHAUSTED for the bounds, none otherwise', () => {
    expect(
      (
        [
          'converged',
          'max_ticks',
          'no_progress',
          'budget_exhausted',
          'timed_out',
          'cancelled',
          'failed',
        ] as const
      ).map(loopExitName),
    ).toEqual(['CONVERGED', 'EXHAUSTED', 'EXHAUSTED', 'EXHAUSTED', 'EXHAUSTED', undefined, undefined]);
  });
});
