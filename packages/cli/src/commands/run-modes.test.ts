import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createRecordingIo } from '../cli-io.js';
import { splitCommand } from './run-flags.js';
import { resumeModeCommand, runModeCommand } from './run-modes.js';

const COUNTER_AGENT = resolve(
  dirname(fileURLToPath(import.meta.url)),
  '../../../../tools/fake-agents/modes/counter-agent.mjs',
);
const ENV = { PATH: process.env['PATH'], HOME: process.env['HOME'] };

async function repo(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'cli-modes-'));
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, encoding: 'utf8' }).trim();
  git('init', '-q', '-b', 'main');
  git('config', 'user.name', 'Test');
  git('config', 'user.email', 'test@example.com');
  git('add', '-A');
  git('commit', '-q', '-m', 'initial');
  return dir;
}

function git(dir: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd: dir, encoding: 'utf8' }).trim();
}

async function replayScript(steps: object[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'cli-modes-script-'));
  const path = join(dir, 'script.json');
  await writeFile(path, JSON.stringify({ version: 1, steps }));
  return path;
}

async function run(cwd: string, args: string[]) {
  const io = createRecordingIo(cwd, ENV);
  const code = await runModeCommand(args, io);
  return { code, out: io.out(), err: io.err() };
}

async function ledger(cwd: string): Promise<Record<string, unknown>> {
  const dir = join(cwd, '.allium-loop');
  const file = readdirSync(dir).find((name) => /^[a-z0-9-]+\.json$/.test(name))!;
  return JSON.parse(await readFile(join(dir, file), 'utf8')) as Record<string, unknown>;
}

async function journal(cwd: string): Promise<{ type: string; data?: Record<string, unknown> }[]> {
  const dir = join(cwd, '.allium-loop');
  const file = readdirSync(dir).find((name) => name.endsWith('.events.ndjson'))!;
  return (await readFile(join(dir, file), 'utf8'))
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { type: string });
}

describe('runModeCommand: dispatch and usage', () => {
  it('returns undefined without a mode flag, so the spec loop runs', async () => {
    expect(
      await runModeCommand(['add gift cards', '--max-ticks', '3'], createRecordingIo('/tmp')),
    ).toBeUndefined();
  });

  it.each([
    [['goal', '--verify', 'true', '--bogus'], /Unknown option '--bogus'/],
    [['--verify', 'true'], /--verify needs a goal/],
    [['goal', '--verify', 'true', '--hillclimb'], /--hillclimb needs --score/],
    [['goal', '--verify', 'true', '--score', 'x'], /need --hillclimb/],
    [['goal', '--verify', 'true', '--hillclimb', '--score', '('], /not a valid regular expression/],
    [['goal', '--verify', 'true', '--max-ticks', '0'], /--max-ticks takes a positive whole number/],
    [['goal', '--verify', 'true', '--max-iterations', '0'], /--max-iterations takes a positive whole number/],
    [
      ['goal', '--verify', 'true', '--max-ticks', '3', '--max-iterations', '4'],
      /--max-ticks 3 and --max-iterations 4 disagree/,
    ],
    [['goal', '--max-iterations', '3'], /--max-iterations belongs to the loop modes/],
    [['goal', '--verify', 'true', '--agent', 'replay'], /--agent replay needs --agent-script/],
    [['a', 'b', '--verify', 'true'], /one goal expected/],
  ])('%j is a usage error', async (args, message) => {
    const { code, err } = await run(await mkdtemp(join(tmpdir(), 'cli-modes-usage-')), args);
    expect(code).toBe(2);
    expect(err).toMatch(message);
  });

  it('splits an agent command without a shell', () => {
    expect(splitCommand(`node "my agent.mjs" '{result_file}' x`)).toEqual([
      'node',
      'my agent.mjs',
      '{result_file}',
      'x',
    ]);
    expect(() => splitCommand('node "open')).toThrow(/unclosed/);
  });
});

describe.concurrent('verify mode (end to end, real processes, real git)', () => {
  it('converges when the command exits 0 after an agent step (command agent)', async () => {
    const cwd = await repo({ 'README.md': 'x\n' });
    const planDir = await mkdtemp(join(tmpdir(), 'cli-modes-plan-'));
    const plan = join(planDir, 'plan.json');
    await writeFile(
      plan,
      JSON.stringify({
        calls: [{ write: { 'notes.txt': 'thinking\n' } }, { write: { 'done.txt': 'yes\n' } }],
      }),
    );
    const { code, out } = await run(cwd, [
      'make done.txt',
      '--verify',
      'test -f done.txt',
      '--interval',
      '0',
      '--agent-command',
      `node ${COUNTER_AGENT} ${plan}`,
    ]);
    expect(code).toBe(0);
    expect(out).toContain('baseline: exit 1');
    expect(out).toMatch(/tick 1 · verify exit 1/);
    expect(out).toMatch(/tick 2 · verify exit 0/);
    expect(out).toMatch(/converged: the verify command exits 0 after tick 2/);
    expect(await ledger(cwd)).toMatchObject({
      tick: 2,
      runKind: 'verify',
      status: 'terminal',
      spent: { agentCalls: 2 },
    });
    const verdicts = (await ledger(cwd))['verdicts'] as {
      tick: number;
      converged: boolean;
      tests: { reason: string };
    }[];
    expect(verdicts.map((v) => [v.tick, v.converged, v.tests.reason])).toEqual([
      [1, false, 'verify exit 1'],
      [2, true, 'verify exit 0'],
    ]);
  });

  it('hill-climb: a regressing tick is reverted to the best checkpoint, never committed to the branch', async () => {
    const cwd = await repo({ 'score.txt': '10\n' });
    const head = git(cwd, 'rev-parse', 'HEAD');
    const script = await replayScript([
      { phase: 'step', write: { 'score.txt': '20\n', 'kept.txt': 'kept\n' } },
      { phase: 'step', write: { 'score.txt': '5\n', 'junk.txt': 'regression\n' } },
      { phase: 'step', write: { 'score.txt': '30\n' } },
    ]);
    const { code, out } = await run(cwd, [
      'raise the score',
      '--verify',
      'echo "score: $(cat score.txt)"',
      '--hillclimb',
      '--score',
      'score: (\\d+)',
      '--max-ticks',
      '3',
      '--interval',
      '0',
      '--agent-script',
      script,
    ]);
    expect(code).toBe(3);
    expect(out).toMatch(/tick 2 · verify exit 0 · score 5 \(best 20\) · reverted/);
    expect(out).toMatch(/2\s+ok\s+0\s+5\s+reverted/);
    expect(out).toMatch(/3\s+ok\s+0\s+30\s+kept/);
    expect(out).toContain('best score 30 at tick 3');
    expect(existsSync(join(cwd, 'junk.txt'))).toBe(false);
    expect(await readFile(join(cwd, 'kept.txt'), 'utf8')).toBe('kept\n');
    expect(await readFile(join(cwd, 'score.txt'), 'utf8')).toBe('30\n');
    expect(git(cwd, 'rev-parse', 'HEAD')).toBe(head);
    const best = git(cwd, 'rev-parse', 'refs/allium-loop/raise-the-score/best');
    expect(git(cwd, 'show', `${best}:score.txt`)).toBe('30');
    expect(git(cwd, 'rev-parse', 'refs/allium-loop/raise-the-score/tick-3')).toBe(best);
    expect(git(cwd, 'for-each-ref', '--format=%(refname)', 'refs/allium-loop/').split('\n').sort()).toEqual(
      ['best', 'reverted-2', 'tick-0', 'tick-1', 'tick-3'].map(
        (name) => `refs/allium-loop/raise-the-score/${name}`,
      ),
    );
    // What the reverted tick did stays reachable, off every branch.
    expect(git(cwd, 'show', 'refs/allium-loop/raise-the-score/reverted-2:junk.txt')).toBe('regression');
    const events = await journal(cwd);
    expect(events.filter((e) => e.type === 'x-verify.reverted')).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ type: 'terminal', state: 'max_ticks' });
  });

  it('stops the run when the agent edits the script the verify command runs', async () => {
    const cwd = await repo({ 'check.sh': 'test -f feature.txt\n' });
    const script = await replayScript([{ phase: 'step', write: { 'check.sh': 'exit 0\n' } }]);
    const { code, out } = await run(cwd, [
      'add the feature',
      '--verify',
      'sh check.sh',
      '--agent-script',
      script,
    ]);
    expect(code).toBe(1);
    expect(out).toContain(
      'failed: the verify command or what it runs changed since the run started (check.sh); restored',
    );
    expect((await journal(cwd)).find((e) => e.type === 'violation')).toMatchObject({
      kind: 'verify_command_edited',
      path: 'check.sh',
      reverted: true,
    });
    expect(await readFile(join(cwd, 'check.sh'), 'utf8')).toBe('test -f feature.txt\n');
  });

  it('--json prints the journal events as NDJSON', async () => {
    const cwd = await repo({ 'a.txt': 'a\n' });
    const script = await replayScript([{ phase: 'step', write: { 'ok.txt': 'ok\n' } }]);
    const { code, out } = await run(cwd, [
      'make ok',
      '--verify',
      'test -f ok.txt',
      '--agent-script',
      script,
      '--json',
    ]);
    expect(code).toBe(0);
    const lines = out
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string });
    expect(lines.map((l) => l.type)).toContain('x-verify.baseline');
    expect(lines.at(-1)).toMatchObject({ type: 'terminal', state: 'converged' });
  });
});

const PRD = {
  project: 'demo',
  userStories: [
    {
      id: 'US-1',
      title: 'Export as CSV',
      priority: 2,
      passes: false,
      acceptanceCriteria: ['a CSV file is written'],
    },
    {
      id: 'US-2',
      title: 'Add a header',
      priority: 1,
      passes: false,
      acceptanceCriteria: ['the header reads Demo'],
    },
  ],
};

describe.concurrent('story mode (end to end)', () => {
  it('passes one story and blocks another after two rejections', async () => {
    const cwd = await repo({ '.loop/prd.json': JSON.stringify(PRD, null, 2) });
    const script = await replayScript([
      { phase: 'generate', write: { 'src/work.txt': 'work\n' }, repeat: true },
      { phase: 'evaluate', result: { verdict: 'PASS' } },
      { phase: 'evaluate', result: { verdict: 'REJECT', reason: 'no CSV file is written' } },
      { phase: 'evaluate', description: 'writes no verdict at all' },
    ]);
    const { code, out } = await run(cwd, [
      '--stories',
      '.loop/prd.json',
      '--eval-retries',
      '2',
      '--agent-script',
      script,
    ]);
    expect(code).toBe(4);
    expect(out).toContain('tick 1 · US-2 · PASS');
    expect(out).toContain('tick 2 · US-1 · REJECT (no CSV file is written)');
    expect(out).toContain('tick 3 · US-1 · REJECT (the evaluator wrote no verdict file) · blocked');
    expect(out).toContain('no_progress: blocked after 2 rejections: US-1');
    const prd = JSON.parse(await readFile(join(cwd, '.loop/prd.json'), 'utf8')) as typeof PRD & {
      userStories: Record<string, unknown>[];
    };
    expect(prd.project).toBe('demo');
    expect(prd.userStories[1]).toMatchObject({ id: 'US-2', passes: true });
    expect(prd.userStories[0]).toMatchObject({ id: 'US-1', passes: false, rejections: 2, blocked: true });
    expect(prd.userStories[0]?.['notes']).toBe(
      '[REJECTED] no CSV file is written\n[REJECTED] the evaluator wrote no verdict file\n[BLOCKED] rejected 2 times; needs a human',
    );
    const progress = await readFile(join(cwd, '.loop/progress.md'), 'utf8');
    expect(progress.match(/^### US-\d — /gm)).toHaveLength(3);
    expect(progress).toContain('Iteration: 2\nVerdict: REJECTED — no CSV file is written\n---\n');
    expect(out).toContain('Iteration 1/50 — US-2: Add a header');
    expect(out).toContain('1/2 stories complete');
  });

  it('gates a story on the verify command and, with --skip-eval, passes it once the command exits 0', async () => {
    const cwd = await repo({ 'prd.json': JSON.stringify({ userStories: [PRD.userStories[0]] }, null, 2) });
    const script = await replayScript([
      { phase: 'generate', write: { 'draft.txt': 'draft\n' } },
      { phase: 'generate', write: { 'export.csv': 'id,amount\n' } },
    ]);
    const { code, out } = await run(cwd, [
      '--stories',
      'prd.json',
      '--verify',
      'test -f export.csv',
      '--skip-eval',
      '--agent-script',
      script,
    ]);
    expect(code).toBe(0);
    expect(out).toContain('tick 1 · US-1 · REJECT (the verify command exited 1: )');
    expect(out).toContain('tick 2 · US-1 · PASS');
    expect(out).toContain('converged: 1 story passes');
  });

  it('stops the run when an agent edits acceptance criteria', async () => {
    const cwd = await repo({ 'prd.json': JSON.stringify(PRD, null, 2) });
    const edited = {
      ...PRD,
      userStories: PRD.userStories.map((s) => ({ ...s, acceptanceCriteria: ['anything goes'] })),
    };
    const script = await replayScript([{ phase: 'generate', write: { 'prd.json': JSON.stringify(edited) } }]);
    const { code, out } = await run(cwd, ['--stories', 'prd.json', '--agent-script', script]);
    expect(code).toBe(1);
    expect(out).toMatch(/failed: acceptance criteria of US-1, US-2 changed since the run started/);
    const events = await journal(cwd);
    expect(events.some((e) => e.type === 'violation')).toBe(true);
  });

  it('puts back a story status an agent set itself', async () => {
    const cwd = await repo({ 'prd.json': JSON.stringify({ userStories: [PRD.userStories[0]] }, null, 2) });
    const cheated = { userStories: [{ ...PRD.userStories[0], passes: true }] };
    const script = await replayScript([
      { phase: 'generate', write: { 'prd.json': JSON.stringify(cheated) } },
      { phase: 'evaluate', result: { verdict: 'REJECT', reason: 'not done' } },
    ]);
    const { code } = await run(cwd, [
      '--stories',
      'prd.json',
      '--eval-retries',
      '1',
      '--agent-script',
      script,
    ]);
    expect(code).toBe(4);
    const prd = JSON.parse(await readFile(join(cwd, 'prd.json'), 'utf8')) as {
      userStories: { passes: boolean; blocked: boolean }[];
    };
    expect(prd.userStories[0]).toMatchObject({ passes: false, blocked: true });
    expect((await journal(cwd)).find((e) => e.type === 'violation')).toMatchObject({
      kind: 'prd_edited',
      reverted: true,
    });
  });

  it.each([
    [{ stories: PRD.userStories }, /found "stories" at the top level/],
    [{ tasks: [] }, /found "tasks" at the top level/],
  ])('rejects a PRD with the wrong top-level key (%#)', async (document, message) => {
    const cwd = await repo({ 'prd.json': JSON.stringify(document) });
    const { code, err } = await run(cwd, ['--stories', 'prd.json', '--agent-script', '/nonexistent.json']);
    expect(code).toBe(2);
    expect(err).toMatch(message);
    expect(existsSync(join(cwd, '.allium-loop'))).toBe(false);
  });
});

describe.concurrent('state-file mode (end to end)', () => {
  it('turns a done claim with a missing result file back into in_progress, then accepts the real result', async () => {
    const cwd = await repo({ 'README.md': 'x\n' });
    const goal = 'list the three primary colours';
    const state = (result: string) => ({
      status: 'done',
      iteration: 1,
      goal,
      progress: 'listed them',
      result,
      error: null,
    });
    const script = await replayScript([
      {
        phase: 'step',
        write: { '.al-state.json': JSON.stringify(state('Wrote 3 items to out/colours.md')) },
      },
      {
        phase: 'step',
        write: {
          'out/colours.md': '- red\n- yellow\n- blue\n',
          '.al-state.json': JSON.stringify(state('Wrote 3 items to out/colours.md')),
        },
      },
    ]);
    const { code, out } = await run(cwd, [goal, '--state-file', '--agent-script', script]);
    expect(code).toBe(0);
    expect(out).toContain(
      'tick 1 · state done → in_progress (result names out/colours.md, which does not exist)',
    );
    expect(out).toContain('tick 2 · state done (result verified)');
    const final = JSON.parse(await readFile(join(cwd, '.al-state.json'), 'utf8')) as Record<string, unknown>;
    expect(final).toMatchObject({
      status: 'done',
      iteration: 2,
      goal,
      result: 'Wrote 3 items to out/colours.md',
    });
    const events = await journal(cwd);
    expect(events.find((e) => e.type === 'x-state-file.done_rejected')?.data).toEqual({
      reason: 'result names out/colours.md, which does not exist',
    });
  });

  it('reads the goal from an existing state file and stops at the tick cap', async () => {
    const cwd = await repo({
      'custom/state.json': JSON.stringify({
        status: 'pending',
        iteration: 4,
        goal: 'count the words',
        progress: '',
        result: null,
        error: null,
      }),
    });
    const script = await replayScript([{ phase: 'step', write: { 'w.txt': 'x\n' }, repeat: true }]);
    const { code, out } = await run(cwd, [
      '--state-file',
      'custom/state.json',
      '--max-ticks',
      '1',
      '--agent-script',
      script,
    ]);
    expect(code).toBe(3);
    expect(out).toContain('Run count-the-words (state-file mode)');
    const final = JSON.parse(await readFile(join(cwd, 'custom/state.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    expect(final).toMatchObject({ status: 'in_progress', iteration: 5 });
  });
});

describe.concurrent('config file and resume', () => {
  it('takes caps from allium-loop.yaml, and resume reports a run that ended at its cap', async () => {
    const cwd = await repo({ 'allium-loop.yaml': 'caps:\n  maxTicks: 1\n' });
    const script = await replayScript([{ phase: 'step', write: { 'x.txt': 'x\n' }, repeat: true }]);
    const first = await run(cwd, ['get ok', '--verify', 'test -f ok.txt', '--agent-script', script]);
    expect(first.code).toBe(3);
    expect(first.out).toContain('max_ticks: tick cap of 1 reached');
    const io = createRecordingIo(cwd, ENV);
    expect(await resumeModeCommand(['get-ok'], io)).toBe(3);
    expect(io.out()).toContain('Run get-ok already ended: max_ticks');
    // Caps given again are taken, but a run that ended at its cap stays ended, as in the spec loop.
    expect(await resumeModeCommand(['get-ok', '--max-ticks', '4'], createRecordingIo(cwd, ENV))).toBe(3);
    const spec = createRecordingIo(cwd, ENV);
    expect(await resumeModeCommand(['get-ok', '--strict-questions'], spec)).toBe(2);
    expect(spec.err()).toContain('--strict-questions belongs to the spec loop; get-ok is a verify run');
    expect(await resumeModeCommand(['no-such-run'], createRecordingIo(cwd, ENV))).toBeUndefined();
  });

  it('a bad allium-loop.yaml is a usage error', async () => {
    const cwd = await repo({ 'allium-loop.yaml': 'caps:\n  maxTickz: 1\n' });
    const { code, err } = await run(cwd, ['g', '--verify', 'true', '--agent-script', '/x.json']);
    expect(code).toBe(2);
    expect(err).toContain('maxTickz');
  });
});
