import { execFile, execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createRecordingIo } from '../cli-io.js';
import { CLI_BIN, makeProject, startCli } from '../e2e/e2e.test-helpers.js';
import {
  REAL_CLIS,
  agentConfigFor,
  announceSkips,
  configureProject,
  envFor,
  useScriptedModel,
} from '../real-agents/real-agents.test-helpers.js';
import { createProgressRenderer, formatElapsed, formatTokens } from './progress-renderer.js';

const exec = promisify(execFile);

/** An agent that blocks until the test creates `release`, then makes the verify command pass. */
const AGENT = `import { existsSync, writeFileSync } from 'node:fs';
const release = process.argv[2];
const wait = () => {
  if (!existsSync(release)) return void setTimeout(wait, 100);
  writeFileSync('done.txt', 'yes\\n');
};
wait();
`;

/** A project for verify mode whose single agent call lasts until `release()`. */
async function blockingRun(): Promise<{ cwd: string; args: string[]; release: () => Promise<void> }> {
  const cwd = await makeProject({ 'README.md': 'x\n' });
  const side = await mkdtemp(join(tmpdir(), 'allium-loop-progress-'));
  await writeFile(join(side, 'agent.mjs'), AGENT);
  const gate = join(side, 'release');
  return {
    cwd,
    args: [
      'run',
      'make done.txt',
      '--verify',
      'test -f done.txt',
      '--agent-command',
      `node ${join(side, 'agent.mjs')} ${gate}`,
    ],
    release: () => writeFile(gate, ''),
  };
}

/** Polls `read` until `pattern` matches (waits for content, not for time; the limit is only a safety net). */
async function waitFor(read: () => Promise<string>, pattern: RegExp, limitMs = 120_000): Promise<string> {
  const deadline = Date.now() + limitMs;
  let last = '';
  while (Date.now() < deadline) {
    last = await read();
    if (pattern.test(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`timed out waiting for ${String(pattern)}; last screen:\n${last}`);
}

const quote = (arg: string) => `'${arg.replaceAll("'", `'\\''`)}'`;

describe('the status line on a real terminal (tmux)', () => {
  const session = `allium-loop-progress-${String(process.pid)}`;
  afterAll(() => {
    try {
      execFileSync('tmux', ['kill-session', '-t', session]);
    } catch {
      // already gone
    }
  });

  it('is redrawn in place during an agent call and erased at the end', async () => {
    const run = await blockingRun();
    const command = [process.execPath, CLI_BIN, ...run.args].map(quote).join(' ');
    execFileSync('tmux', [
      'new-session',
      '-d',
      '-s',
      session,
      '-x',
      '160',
      '-y',
      '40',
      '-c',
      run.cwd,
      `env FORCE_COLOR=0 ${command}; echo "EXIT=$?"; sleep 3600`,
    ]);
    const screen = async () => (await exec('tmux', ['capture-pane', '-p', '-t', session])).stdout;
    const first = await waitFor(screen, /⏵ .*agent call \d+s/);
    const later = await waitFor(screen, /⏵ .*agent call ([3-9]|\d\d+)s/);
    for (const shot of [first, later]) {
      // One status line, whatever the elapsed time: redrawn in place, never appended.
      expect(shot.split('\n').filter((line) => line.includes('⏵'))).toHaveLength(1);
    }
    expect(later).toMatch(/⏵ step · agent call \d+s · tick 1 · \$0\.00/);
    await run.release();
    const end = await waitFor(screen, /EXIT=\d+/);
    expect(end).toContain('EXIT=0');
    expect(end).toMatch(/converged/);
    expect(end).not.toContain('⏵');
    process.stdout.write(`\n--- real-pty screen during the call ---\n${later}\n--- at the end ---\n${end}\n`);
  });
});

announceSkips();
const REAL_CLAUDE = REAL_CLIS.find((cli) => cli.name === 'claude')!;

describe(
  'the status line with the real claude against the scripted model (tmux)',
  { timeout: 600_000 },
  () => {
    // A tmux server of its own, so nothing of another tmux user is touched and all of it goes at the end.
    const socket = join(tmpdir(), `allium-loop-progress-claude-${String(process.pid)}.sock`);
    const tmux = (...args: string[]) => exec('tmux', ['-S', socket, ...args]);
    const model = useScriptedModel();
    afterAll(async () => {
      await tmux('kill-server').catch(() => undefined);
      await rm(socket, { force: true });
    });

    it.skipIf('skipReason' in REAL_CLAUDE)(
      'shows the tool the agent is using, streamed by the CLI while its call runs',
      async () => {
        const cwd = await makeProject({ 'README.md': 'x\n' });
        const side = await mkdtemp(join(tmpdir(), 'allium-loop-progress-'));
        const gate = join(side, 'release');
        model().setScript([
          {
            name: 'slow implement',
            match: 'make done.txt',
            actions: [
              { kind: 'write', path: 'notes.txt', content: 'started\n' },
              // The call stays in this tool until the test releases it: the status line is captured meanwhile.
              { kind: 'shell', command: `until [ -f ${gate} ]; do sleep 0.2; done; echo yes > done.txt` },
            ],
            finalText: 'Done.',
          },
        ]);
        await configureProject(cwd, agentConfigFor(REAL_CLAUDE));
        const env = await envFor('claude', model());
        const command = [
          'env',
          ...Object.entries({ ...env, FORCE_COLOR: '0' }).map(([name, value]) => `${name}=${value}`),
          process.execPath,
          CLI_BIN,
          'run',
          'make done.txt',
          '--verify',
          'test -f done.txt',
        ]
          .map(quote)
          .join(' ');
        await tmux(
          'new-session',
          '-d',
          '-s',
          'claude',
          '-x',
          '200',
          '-y',
          '40',
          '-c',
          cwd,
          `${command}; echo "EXIT=$?"; sleep 3600`,
        );
        const screen = async () => (await tmux('capture-pane', '-p', '-t', 'claude')).stdout;
        const during = await waitFor(screen, /⏵ step · agent call \d+s · Bash until \[ -f /);
        expect(during.split('\n').filter((line) => line.includes('⏵'))).toHaveLength(1);
        // The tokens the CLI streamed so far are shown beside the tool.
        expect(during).toMatch(/· Bash until [^·]*· [\d.]+k? tok · /);
        await writeFile(gate, '');
        const end = await waitFor(screen, /EXIT=\d+/);
        expect(end, end).toContain('EXIT=0');
        expect(end).not.toContain('⏵');
        process.stdout.write(
          `\n--- real claude, real pty: screen during the call ---\n${during.trimEnd()}\n`,
        );
      },
    );
  },
);

describe('without a terminal', () => {
  it('prints a plain heartbeat line at a steady interval while a call runs, and no escape codes', async () => {
    const run = await blockingRun();
    const { child, done } = startCli(run.args, run.cwd, { ALLIUM_LOOP_HEARTBEAT_SECONDS: '1' });
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    await waitFor(async () => out, /… step · agent call \d+s[^\n]*\n… step · agent call \d+s/);
    await run.release();
    const result = await done;
    expect(result.code).toBe(0);
    expect(result.stdout).not.toMatch(/\u001b/);
    expect(result.stdout).toMatch(/converged/);
  });

  it('--json writes only NDJSON journal events on stdout', async () => {
    const run = await blockingRun();
    const { done } = startCli([...run.args, '--json'], run.cwd, { ALLIUM_LOOP_HEARTBEAT_SECONDS: '1' });
    await run.release();
    const result = await done;
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines.length).toBeGreaterThan(3);
    for (const line of lines) expect(JSON.parse(line)).toHaveProperty('type');
  });

  it('--quiet prints the report only', async () => {
    const run = await blockingRun();
    const { done } = startCli([...run.args, '--quiet'], run.cwd, { ALLIUM_LOOP_HEARTBEAT_SECONDS: '1' });
    await run.release();
    const result = await done;
    expect(result.code).toBe(0);
    expect(result.stdout).not.toMatch(/^… |^baseline|^tick 1 ·/m);
    expect(result.stdout).toMatch(/converged/);
  });
});

describe('the renderer itself', () => {
  it('folds journal events into the status: phase, call time, tick, tests and spend', () => {
    let now = 0;
    const io = { ...createRecordingIo('/x'), isTTY: true, columns: () => 200, now: () => now };
    const progress = createProgressRenderer(io, { mode: 'text', heartbeatMs: 3_600_000 });
    const at = new Date(0).toISOString();
    progress.loop({
      kind: 'event',
      event: { type: 'intent_begun', at, tick: 2, key: 'k', phase: 'implement', action: 'agent-call' },
    });
    progress.loop({ kind: 'tick', line: '[slice-a] tick 1 · tests 1/2 · $0.10' });
    progress.loop({ kind: 'event', event: { type: 'tick_recorded', at, tick: 2, line: 'l', usd: 0.5 } });
    now = 65_000;
    progress.loop({ kind: 'event', event: { type: 'note', at, tick: 2, message: 'm' } });
    expect(io.out()).toContain('⏵ implement [slice-a] · agent call 1m05s · tick 2 · tests 1/2 · $0.50');
    progress.loop({
      kind: 'event',
      event: { type: 'intent_ended', at, tick: 2, key: 'k', status: 'succeeded' },
    });
    progress.close();
    expect(io.out()).toContain('[slice-a] tick 1 · tests 1/2 · $0.10\n');
    expect(io.out().endsWith('⏵ implement [slice-a] · tick 2 · $0.50\n')).toBe(false);
    expect(formatElapsed(65_000)).toBe('1m05s');
  });
});

describe('agent activity and test runs in the status', () => {
  const at = new Date(0).toISOString();
  const begin = {
    kind: 'event',
    event: { type: 'intent_begun', at, tick: 2, key: 'k', phase: 'implement', action: 'agent-call' },
  } as const;
  const end = {
    kind: 'event',
    event: { type: 'intent_ended', at, tick: 2, key: 'k', status: 'succeeded' },
  } as const;
  const tests = (round: number, passed: number, failed: number) =>
    ({
      kind: 'event',
      event: { type: 'x-loop.tests', at, tick: 2, data: { round, passed, failed, skipped: 0 } },
    }) as const;

  it('on a terminal: the tool in use, the tokens so far and the spend with the running estimate', () => {
    let now = 0;
    const io = { ...createRecordingIo('/x'), isTTY: true, columns: () => 200, now: () => now };
    const progress = createProgressRenderer(io, {
      mode: 'text',
      heartbeatMs: 3_600_000,
      redrawMs: 3_600_000,
    });
    progress.loop({ kind: 'tick', line: '[slice-x] tick 1 · tests 1/2 · $0.10' });
    progress.loop({ kind: 'event', event: { type: 'tick_recorded', at, tick: 1, line: 'l', usd: 0.5 } });
    // Activity outside a call (a late line of an ended call) is ignored.
    progress.activity({ tool: 'Bash stale', tokens: 1 });
    progress.loop(begin);
    now = 12_000;
    progress.activity({ tool: 'Edit src/x.ts', tokens: 3210, costUsd: 0.04 });
    progress.loop(tests(1, 7, 2));
    expect(io.out()).toContain(
      '⏵ implement [slice-x] · agent call 12s · Edit src/x.ts · 3.2k tok · tick 2 · tests 7/9 · $0.54',
    );
    expect(io.out()).not.toContain('Bash stale');
    // On a terminal the count lives in the status line, not in a line of its own.
    expect(io.out()).not.toContain('after implement round');
    progress.loop(end);
    progress.loop(begin);
    progress.activity({ tool: 'Read a.ts', tokens: 10 });
    // The ended call's estimate still counts; the new call's tokens have no price, so the spend is a lower bound.
    expect(io.out()).toContain(
      '⏵ implement [slice-x] · agent call 0s · Read a.ts · 10 tok · tick 2 · tests 7/9 · ≥$0.54',
    );
    progress.loop(end);
    progress.loop({ kind: 'event', event: { type: 'tick_recorded', at, tick: 2, line: 'l', usd: 0.6 } });
    progress.loop({ kind: 'event', event: { type: 'note', at, tick: 2, message: 'm' } });
    // The tick's recorded spend replaces the estimates.
    expect(io.out().split('\n').at(-2)).toMatch(/⏵ implement \[slice-x\] · tick 2 · tests 7\/9 · \$0\.60$/);
    progress.close();
    expect(formatTokens(950)).toBe('950 tok');
    expect(formatTokens(1_400_000)).toBe('1.4M tok');
  });

  it('without a terminal: a plain line per test run, and the activity in the heartbeat', () => {
    vi.useFakeTimers();
    try {
      let now = 0;
      const io = { ...createRecordingIo('/x'), isTTY: false, now: () => now };
      const progress = createProgressRenderer(io, { mode: 'text', heartbeatMs: 30_000 });
      progress.loop(begin);
      progress.activity({ tool: 'Bash npm test', tokens: 1500, costUsd: 0.01 });
      progress.loop(tests(1, 7, 2));
      now = 30_000;
      vi.advanceTimersByTime(30_000);
      progress.loop(end);
      progress.loop(tests(2, 9, 0));
      progress.close();
      const lines = io.out().split('\n');
      expect(lines).toContain('    tests 7/9 after implement round 1');
      expect(lines).toContain('    tests 9/9 after implement round 2');
      expect(lines).toContain(
        '… implement · agent call 30s · Bash npm test · 1.5k tok · tick 2 · tests 7/9 · $0.01',
      );
      expect(io.out()).not.toMatch(/\u001b/);
    } finally {
      vi.useRealTimers();
    }
  });

  it('--json: test runs are NDJSON journal events; activity adds nothing to stdout', () => {
    const io = { ...createRecordingIo('/x'), isTTY: false };
    const progress = createProgressRenderer(io, { mode: 'json' });
    progress.loop(begin);
    progress.activity({ tool: 'Edit src/x.ts', tokens: 10 });
    progress.loop(tests(1, 7, 2));
    progress.close();
    const lines = io.out().trim().split('\n');
    expect(lines.map((line) => (JSON.parse(line) as { type: string }).type)).toEqual([
      'intent_begun',
      'x-loop.tests',
    ]);
  });
});
