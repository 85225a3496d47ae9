import { describe, expect, it } from 'vitest';
import type { StoryModeConfig } from '@allium-loop/ledger';
import { parsePrd, serializePrd, type Prd } from './prd.js';
import {
  decideStories,
  initialStoryProgram,
  type StoryAction,
  type StoryObservation,
  type StoryProgramState,
} from './story-program.js';

const PRD: Prd = {
  project: 'invoicing',
  userStories: [
    { id: 'US-1', title: 'Export CSV', priority: 2, passes: false, acceptanceCriteria: ['a CSV file'] },
    { id: 'US-2', title: 'Add a header', priority: 1, passes: false, acceptanceCriteria: ['a header'] },
  ],
};
const base: StoryModeConfig = { prdPath: '/p/.loop/prd.json', skipEval: false, evalRetries: 2 };
const AT = '2026-11-30T14:05:00.000Z';

/** A scripted world: the disk PRD follows the engine's writes unless a step edits it. */
interface World {
  disk: string;
  tick: number;
  generator: (
    story: string,
    n: number,
  ) => { outcome: string; edit?: (prd: Prd) => Prd; tree?: string; tokens?: number };
  evaluator: (story: string, n: number) => { text: string | undefined; edited?: string[]; tokens?: number };
  verify?: (n: number) => number;
  progress: string[];
  capAt?: number;
}

/**
 * Runs the program against `world` from `first`: each action is answered with what the driver would observe. Stops
 * at `finish` (or after 200 actions); returns the trace of action kinds, the actions and the final state.
 */
function simulate(
  state: StoryProgramState,
  world: World,
  first: StoryObservation = { kind: 'opened', read: { kind: 'ok', prd: parse(world.disk) } },
): { trace: string[]; actions: StoryAction[]; state: StoryProgramState } {
  const actions: StoryAction[] = [];
  let observation = first;
  let generated = 0;
  let evaluated = 0;
  let verified = 0;
  for (let i = 0; i < 200; i += 1) {
    const decision = decideStories(state, observation);
    state = decision.state;
    const action = decision.action;
    actions.push(action);
    if (action.kind === 'finish') break;
    observation = answer(action);
  }
  return { trace: actions.map((a) => a.kind), actions, state };

  function answer(action: Exclude<StoryAction, { kind: 'finish' }>): StoryObservation {
    switch (action.kind) {
      case 'fingerprint':
        return { kind: 'fingerprinted', verify: null };
      case 'save_state':
        return { kind: 'written' };
      case 'apply_pending':
        world.disk = action.prd;
        if (world.progress.at(-1) !== action.progress) world.progress.push(action.progress);
        return { kind: 'written' };
      case 'restore_prd':
        world.disk = action.write;
        return { kind: 'written' };
      case 'read_prd': {
        const parsed = parsePrd(world.disk);
        return {
          kind: 'prd_read',
          read: parsed.ok ? { kind: 'ok', prd: parsed.value } : { kind: 'invalid', issues: parsed.issues },
          commandEdited: undefined,
          at: AT,
        };
      }
      case 'check_caps':
        return {
          kind: 'capped',
          stop:
            world.capAt !== undefined && world.tick >= world.capAt
              ? { state: 'max_ticks', reason: 'max_ticks', detail: 'tick cap reached' }
              : undefined,
          tick: world.tick + 1,
        };
      case 'generate': {
        world.tick += 1;
        generated += 1;
        const step = world.generator(action.story.id, generated);
        if (step.edit !== undefined) world.disk = serializePrd(step.edit(parse(world.disk)));
        return {
          kind: 'generated',
          tick: world.tick,
          outcome: step.outcome,
          detail: step.outcome === 'ok' ? undefined : 'exit 1',
          preGenerator: `pre${String(world.tick)}`,
          ...(step.tree === undefined ? {} : { tree: step.tree }),
          ...(step.tokens === undefined ? {} : { tokens: step.tokens }),
        };
      }
      case 'verify': {
        verified += 1;
        const code = world.verify?.(verified) ?? 0;
        return {
          kind: 'verified',
          exitCode: code,
          timedOut: false,
          tail: code === 0 ? '' : 'missing export.csv',
        };
      }
      case 'evaluate': {
        evaluated += 1;
        const step = world.evaluator(action.story.id, evaluated);
        return {
          kind: 'evaluated',
          verdictText: step.text,
          edited: step.edited ?? [],
          ...(step.tokens === undefined ? {} : { tokens: step.tokens }),
        };
      }
      case 'record_tick':
        world.disk = action.write;
        world.progress.push(action.progress);
        return { kind: 'written' };
    }
  }
}

function parse(text: string): Prd {
  const parsed = parsePrd(text);
  if (!parsed.ok) throw new Error(parsed.issues.join('; '));
  return parsed.value;
}

const PASS = JSON.stringify({ verdict: 'PASS' });
const reject = (reason: string) => JSON.stringify({ verdict: 'REJECT', reason });
const world = (over: Partial<World> = {}): World => ({
  disk: serializePrd(PRD),
  tick: 0,
  generator: () => ({ outcome: 'ok' }),
  evaluator: () => ({ text: PASS }),
  progress: [],
  ...over,
});
const start = (config: Partial<StoryModeConfig> = {}) =>
  initialStoryProgram({ ...base, ...config }, 50, undefined, 2);
const last = (actions: StoryAction[]) => actions.at(-1) as Extract<StoryAction, { kind: 'finish' }>;
const story = (text: string, id: string) => parse(text).userStories.find((s) => s.id === id)!;

describe('the stories program (pure)', () => {
  it('works the stories lowest priority first — generator, PRD guard, evaluator, guard, record — and converges', () => {
    const w = world();
    const { trace, actions, state } = simulate(start(), w);
    const tick = [
      'check_caps',
      'generate',
      'read_prd',
      'evaluate',
      'read_prd',
      'record_tick',
      'save_state',
      'read_prd',
    ];
    expect(trace).toEqual(['fingerprint', 'save_state', 'read_prd', ...tick, ...tick, 'finish']);
    expect(actions.filter((a) => a.kind === 'generate').map((a) => a.kind === 'generate' && a.line)).toEqual([
      'Iteration 1/50 — US-2: Add a header',
      'Iteration 2/50 — US-1: Export CSV',
    ]);
    expect(last(actions).stop).toEqual({
      state: 'converged',
      reason: 'all_stories_pass',
      detail: '2 stories pass',
    });
    expect(last(actions).lines).toEqual(['2/2 stories complete', 'passed: 2 · blocked: 0 · remaining: 0']);
    expect(parse(w.disk).userStories.map((s) => s.passes)).toEqual([true, true]);
    expect(w.progress[0]).toBe(`### US-2 — Add a header\nDate: ${AT}\nIteration: 1\nVerdict: PASS\n---\n\n`);
    // The evaluator's diff base is the snapshot taken just before the generator.
    expect(actions.find((a) => a.kind === 'evaluate')).toMatchObject({ preGenerator: 'pre1' });
    expect(state.record.iterations.map((i) => i.preGenerator)).toEqual(['pre1', 'pre2']);
    expect(state.record.pending).toBeUndefined();
  });

  it('rejections go into notes as [REJECTED] reason; at evalRetries the story is [BLOCKED] and the run ends no_progress', () => {
    const w = world({
      evaluator: (id, n) => ({ text: id === 'US-2' ? PASS : n === 2 ? reject('no CSV file') : undefined }),
    });
    const { actions, state } = simulate(start(), w);
    const us1 = story(w.disk, 'US-1');
    expect(us1).toMatchObject({ passes: false, rejections: 2, blocked: true });
    expect(us1.notes).toBe(
      '[REJECTED] no CSV file\n[REJECTED] the evaluator wrote no verdict file\n[BLOCKED] rejected 2 times; needs a human',
    );
    expect(last(actions).stop).toEqual({
      state: 'no_progress',
      reason: 'stories_blocked',
      detail: 'blocked after 2 rejections: US-1',
    });
    expect(last(actions).lines).toEqual(['1/2 stories complete', 'passed: 1 · blocked: 1 · remaining: 0']);
    expect(w.progress[2]).toBe(
      `### US-1 — Export CSV\nDate: ${AT}\nIteration: 3\nVerdict: REJECTED — the evaluator wrote no verdict file [BLOCKED]\n---\n\n`,
    );
    expect(state.record.iterations.map((i) => [i.verdict, i.blocked])).toEqual([
      ['PASS', false],
      ['REJECT', false],
      ['REJECT', true],
    ]);
  });

  it('a generator that crashes is a warning: the loop goes on to judge what is on disk, and charges no rejection', () => {
    const w = world({ generator: (_id, n) => ({ outcome: n === 1 ? 'failed' : 'ok' }) });
    const { actions, state } = simulate(start({ storyId: 'US-2' }), w);
    expect(actions.filter((a) => a.kind === 'evaluate')).toHaveLength(1);
    expect(last(actions).stop.state).toBe('converged');
    const recorded = actions.find((a) => a.kind === 'record_tick');
    expect(recorded).toMatchObject({
      events: [
        { type: 'extension', name: 'generator_crashed', data: { story: 'US-2', outcome: 'failed: exit 1' } },
      ],
    });
    expect(w.progress[0]).toContain(
      'Warning: the generator crashed (failed: exit 1); the loop continued\n---\n',
    );
    expect(state.record.iterations[0]).toMatchObject({ verdict: 'PASS', generatorCrash: 'failed: exit 1' });
  });

  it('with --skip-eval and no verify command a crashed generator gives no verdict (WARN): no pass, no rejection', () => {
    const w = world({ generator: (_id, n) => ({ outcome: n === 1 ? 'timed_out' : 'ok' }) });
    const { actions, state } = simulate(start({ storyId: 'US-2', skipEval: true }), w);
    expect(state.record.iterations.map((i) => i.verdict)).toEqual(['WARN', 'PASS']);
    expect(story(w.disk, 'US-2')).toMatchObject({ passes: true });
    expect(story(w.disk, 'US-2').rejections).toBeUndefined();
    expect(w.progress[0]).toContain('Verdict: WARN — the generator crashed (timed_out: exit 1)');
    // A --skip-eval pass is logged as SKIP-EVAL.
    expect(w.progress[1]).toContain('Verdict: SKIP-EVAL\n');
    expect(actions.some((a) => a.kind === 'evaluate')).toBe(false);
  });

  it('an evaluator that edited files has them reverted (by the driver), a violation journaled and its PASS voided', () => {
    const w = world({
      evaluator: (_id, n) => ({ text: PASS, ...(n === 1 ? { edited: ['src/export.ts'] } : {}) }),
    });
    const { actions, state } = simulate(start({ storyId: 'US-1' }), w);
    const first = actions.find((a) => a.kind === 'record_tick');
    expect(first).toMatchObject({
      events: [
        {
          type: 'violation',
          kind: 'evaluator_edited',
          reverted: true,
          detail: 'the evaluator edited src/export.ts; reverted, and its verdict discarded',
        },
      ],
    });
    expect(state.record.iterations.map((i) => i.verdict)).toEqual(['WARN', 'PASS']);
    expect(story(w.disk, 'US-1').rejections).toBeUndefined();
  });

  it('the verify command gates the story; its failure is a REJECT with the output tail', () => {
    const w = world({ verify: (n) => (n === 1 ? 1 : 0) });
    const { trace, state } = simulate(start({ storyId: 'US-1', verifyCommand: 'test -f export.csv' }), w);
    expect(trace.filter((k) => k === 'verify')).toHaveLength(2);
    expect(trace.filter((k) => k === 'evaluate')).toHaveLength(1);
    expect(state.record.iterations.map((i) => [i.verdict, i.reason])).toEqual([
      ['REJECT', 'the verify command exited 1: missing export.csv'],
      ['PASS', null],
    ]);
  });

  it('an agent that flips passes has the engine copy put back (a violation) and the run goes on', () => {
    const w = world({
      generator: (_id, n) => ({
        outcome: 'ok',
        ...(n === 1
          ? {
              edit: (prd: Prd) => ({
                ...prd,
                userStories: prd.userStories.map((s) => ({ ...s, passes: true })),
              }),
            }
          : {}),
      }),
      evaluator: () => ({ text: reject('not done') }),
    });
    const { actions } = simulate(start({ storyId: 'US-1', evalRetries: 1 }), w);
    const restore = actions.find((a) => a.kind === 'restore_prd');
    expect(restore).toMatchObject({
      events: [
        { kind: 'prd_edited', reverted: true, detail: 'status of US-1, US-2 changed by an agent; restored' },
      ],
    });
    expect(story(w.disk, 'US-1')).toMatchObject({ passes: false, blocked: true });
    expect(last(actions).stop.state).toBe('no_progress');
  });

  it('an agent that edits acceptance criteria stops the run failed with a violation', () => {
    const w = world({
      generator: () => ({
        outcome: 'ok',
        edit: (prd) => ({
          ...prd,
          userStories: prd.userStories.map((s) => ({ ...s, acceptanceCriteria: ['anything'] })),
        }),
      }),
    });
    const { actions } = simulate(start(), w);
    expect(last(actions)).toMatchObject({
      stop: { state: 'failed', reason: 'criteria_edited' },
      events: [{ type: 'violation', kind: 'criteria_edited', reverted: false }],
    });
  });

  it("tolerates one backtrack of the generator's tree while no verdict moves the stories; the second stops no_progress", () => {
    const trees = ['A', 'B', 'A', 'C', 'D', 'C', 'D'];
    const w = world({ generator: (_id, n) => ({ outcome: 'failed', tree: trees[n - 1]! }) });
    const { actions, state } = simulate(
      initialStoryProgram({ ...base, storyId: 'US-1', skipEval: true }, 50, undefined, 3),
      w,
    );
    // Iteration 3 went back to iteration 1's tree (tolerated), iteration 6 to iteration 4's: the run stops.
    expect(state.record.iterations.map((i) => i.verdict)).toEqual([
      'WARN',
      'WARN',
      'WARN',
      'WARN',
      'WARN',
      'WARN',
    ]);
    expect(last(actions).stop).toMatchObject({
      state: 'no_progress',
      reason: 'oscillation',
      detail: expect.stringContaining('2 backtracks; 1 tolerated'),
    });
    expect(last(actions).lines[0]).toBe('0/1 stories complete');
  });

  it('stops token_climb when the stories and the tree stay put while each iteration uses more tokens', () => {
    // The evaluator edits files each time (its verdict void: WARN); generator and evaluator tokens add up.
    const w = world({
      generator: (_id, n) => ({ outcome: 'ok', tree: 'T', tokens: 1000 * n }),
      evaluator: () => ({ text: PASS, edited: ['src/export.ts'], tokens: 50 }),
    });
    const { actions, state } = simulate(
      initialStoryProgram({ ...base, storyId: 'US-1' }, 50, undefined, 10),
      w,
    );
    expect(state.record.iterations.map((i) => i.tokens)).toEqual([1050, 2050, 3050]);
    expect(last(actions).stop).toMatchObject({
      state: 'no_progress',
      reason: 'token_climb',
      detail: expect.stringContaining('1050 → 2050 → 3050'),
    });
    // Without a tree (outside git) and with flat tokens, the unchanged stories stop at the no-progress cap.
    const flat = world({ evaluator: () => ({ text: PASS, edited: ['src/export.ts'] }) });
    const plain = simulate(start({ storyId: 'US-1' }), flat);
    expect(plain.state.record.iterations).toHaveLength(3);
    expect(last(plain.actions).stop).toMatchObject({ state: 'no_progress', reason: 'no_progress' });
  });

  it('every verdict moves the state: rejections on the same tree with climbing tokens end blocked, not stalled', () => {
    const w = world({
      generator: (_id, n) => ({ outcome: 'ok', tree: 'T', tokens: 1000 * n }),
      evaluator: () => ({ text: reject('not yet') }),
    });
    const { actions, state } = simulate(
      initialStoryProgram({ ...base, storyId: 'US-1', evalRetries: 4 }, 50, undefined, 2),
      w,
    );
    expect(state.record.iterations).toHaveLength(4);
    expect(last(actions).stop).toMatchObject({ state: 'no_progress', reason: 'stories_blocked' });
  });

  it('the tick cap ends the run with the counts', () => {
    const w = world({ capAt: 1, evaluator: () => ({ text: reject('no') }) });
    const { actions } = simulate(start({ evalRetries: 5 }), w);
    expect(last(actions).stop.state).toBe('max_ticks');
    expect(last(actions).lines[0]).toBe('0/2 stories complete');
  });

  it('a fresh process right before the last story completes (forced compaction) converges once, nothing repeated', () => {
    // Run until the record of the last iteration is saved with its files pending, then "die".
    const w = world();
    let state = start();
    let observation: StoryObservation = { kind: 'opened', read: { kind: 'ok', prd: parse(w.disk) } };
    let records = 0;
    for (;;) {
      const { state: next, action } = decideStories(state, observation);
      state = next;
      if (action.kind === 'record_tick' && ++records === 2) break; // the ledger has it; PRD and log not written
      observation = stepAnswer(action, w);
    }
    expect(state.record.pending).toBeDefined();
    // The fresh process: the ledger's record (with pending), the PRD on disk without the last verdict.
    const fresh = initialStoryProgram(base, 50, state.record, 2);
    const generated: string[] = [];
    w.generator = (id) => {
      generated.push(id);
      return { outcome: 'ok' };
    };
    const resumed = simulate(fresh, w);
    expect(resumed.trace.slice(0, 3)).toEqual(['apply_pending', 'read_prd', 'finish']);
    expect(generated).toEqual([]);
    expect(last(resumed.actions).stop.state).toBe('converged');
    expect(w.progress.filter((p) => p.startsWith('### US-1'))).toHaveLength(1);
    expect(parse(w.disk).userStories.every((s) => s.passes)).toBe(true);
  });
});

/** The answers of `simulate`'s world for one action (used where a test drives the program step by step). */
function stepAnswer(action: StoryAction, w: World): StoryObservation {
  let answered: StoryObservation;
  switch (action.kind) {
    case 'fingerprint':
      answered = { kind: 'fingerprinted', verify: null };
      break;
    case 'save_state':
    case 'restore_prd':
      answered = { kind: 'written' };
      break;
    case 'read_prd':
      answered = {
        kind: 'prd_read',
        read: { kind: 'ok', prd: parse(w.disk) },
        commandEdited: undefined,
        at: AT,
      };
      break;
    case 'check_caps':
      answered = { kind: 'capped', stop: undefined, tick: w.tick + 1 };
      break;
    case 'generate':
      w.tick += 1;
      answered = {
        kind: 'generated',
        tick: w.tick,
        outcome: 'ok',
        detail: undefined,
        preGenerator: undefined,
      };
      break;
    case 'evaluate':
      answered = { kind: 'evaluated', verdictText: PASS, edited: [] };
      break;
    case 'record_tick':
      w.disk = action.write;
      w.progress.push(action.progress);
      answered = { kind: 'written' };
      break;
    default:
      throw new Error(`unexpected ${action.kind}`);
  }
  return answered;
}
