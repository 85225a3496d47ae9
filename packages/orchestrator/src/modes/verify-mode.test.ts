import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FakeAgentRunner, type FakeAgentScript } from '@allium-loop/agents/testing';
import type { Caps } from '@allium-loop/ledger';
import { describe, expect, it } from 'vitest';
import { gitOut, makeGitRepo } from './git-checkpoint.test-helpers.js';
import { loopRecord } from './mode-session.js';
import { resumeModeRun, startModeRun, type ModeRunSettings } from './run-mode.js';

/** Settings on a run clock that the fake sleep advances; `sleeps` records each wait. */
function harness(responses: FakeAgentScript[], caps: Partial<Caps>, controller = new AbortController()) {
  let offset = 0;
  const sleeps: number[] = [];
  const lines: string[] = [];
  const settings = (cwd: string, agent = new FakeAgentRunner(responses)): ModeRunSettings => ({
    cwd,
    agent: { kind: 'command', argv: ['unused'] },
    caps,
    env: { PATH: process.env['PATH'] },
    signal: controller.signal,
    clock: { now: () => Date.now() + offset },
    sleep: async (ms) => {
      sleeps.push(ms);
      offset += ms;
    },
    createAgent: () => agent,
    onProgress: (progress) => {
      if (progress.kind === 'line') lines.push(progress.text);
    },
  });
  return { settings, sleeps, lines };
}

async function journal(cwd: string): Promise<{ type: string; data?: Record<string, unknown> }[]> {
  const dir = join(cwd, '.allium-loop');
  const file = (await readdir(dir)).find((name) => name.endsWith('.events.ndjson'))!;
  return (await readFile(join(dir, file), 'utf8'))
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { type: string });
}

const verify = (command: string, intervalMs: number) => ({
  mode: 'verify' as const,
  config: { command, intervalMs },
  defaultCaps: {},
});

describe('verify mode: the interval, the revision per step and the /loop restart rule', () => {
  it('the wait between ticks never runs past the wall clock: the run ends timed_out when it passes', async () => {
    const cwd = await makeGitRepo({ 'README.md': 'x\n' });
    const run = harness([{ files: { 'a.txt': '1\n' } }], { wallClockMs: 10_000, maxTicks: 5 });
    const outcome = await startModeRun('make ok', verify('test -f ok.txt', 30_000), run.settings(cwd));
    expect(outcome.ledger.terminal).toMatchObject({ state: 'timed_out', reason: 'wall_clock' });
    expect(outcome.ledger.tick).toBe(1);
    expect(run.sleeps).toHaveLength(1);
    expect(run.sleeps[0]).toBeGreaterThan(0);
    expect(run.sleeps[0]).toBeLessThanOrEqual(10_000);
    expect(run.lines.some((l) => /before tick 2 \(the wall-clock cap ends the run then\)/.test(l))).toBe(
      true,
    );
    // A bound ended the run: /loop scripts read EXHAUSTED beside our timed_out.
    const exit = (await journal(cwd)).find((e) => e.type === 'x-verify.exit');
    expect(exit?.data).toEqual({ status: 'EXHAUSTED', state: 'timed_out' });
  });

  it("feeds each agent call's tokens to stall detection: flat output with climbing tokens stops token_climb", async () => {
    const cwd = await makeGitRepo({ 'README.md': 'x\n' });
    const climbing = (_request: unknown, call: number) => ({
      outcome: { tokens: { input: 1000 * call, output: 100, cacheRead: 10 } },
    });
    const run = harness([climbing], { maxTicks: 10, noProgressTicks: 8 });
    const outcome = await startModeRun('make ok', verify('echo same; exit 1', 0), run.settings(cwd));
    expect(outcome.ledger.terminal).toMatchObject({ state: 'no_progress', reason: 'token_climb' });
    const ticks = loopRecord(outcome.ledger, 'verify').verify?.ticks ?? [];
    expect(ticks.map((t) => t.tokens)).toEqual([1110, 2110, 3110]);
  });

  it('records the revision after every tick, and on resume resets only the branch to it, keeping the new HEAD under a ref', async () => {
    const cwd = await makeGitRepo({ 'README.md': 'x\n' });
    const run = harness([{ files: { 'a.txt': '1\n' } }, { files: { 'b.txt': '2\n' } }], { maxTicks: 2 });
    // The first process is stopped (Ctrl-C) in the wait after tick 1.
    const controller = new AbortController();
    const first = await startModeRun('make ok', verify('test -f ok.txt', 1_000), {
      ...run.settings(cwd),
      signal: controller.signal,
      sleep: async () => controller.abort(),
    });
    expect(first.ledger.terminal?.state).toBe('cancelled');
    const recorded = await gitOut(cwd, 'rev-parse', 'HEAD');
    expect(loopRecord(first.ledger, 'verify').verify?.ticks.map((t) => t.head)).toEqual([recorded]);
    // The user commits the agent's work (and stages an edit) after the run stopped.
    const git = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.name=u', '-c', 'user.email=u@localhost', ...args], { cwd });
    git('add', 'a.txt');
    git('commit', '-q', '-m', 'the user keeps a.txt');
    const userCommit = await gitOut(cwd, 'rev-parse', 'HEAD');
    await writeFile(join(cwd, 'README.md'), 'x, staged\n');
    git('add', 'README.md');
    const resumed = await resumeModeRun(first.ledger.slug, run.settings(cwd));
    expect(resumed.ledger.terminal?.state).toBe('max_ticks');
    const kept = `refs/allium-loop/${first.ledger.slug}/moved-${userCommit.slice(0, 12)}`;
    expect(await gitOut(cwd, 'rev-parse', 'HEAD')).toBe(recorded);
    expect(await gitOut(cwd, 'rev-parse', kept)).toBe(userCommit);
    // Only the branch moved: the files are as they were, and the index still holds what the user staged.
    expect(await readFile(join(cwd, 'a.txt'), 'utf8')).toBe('1\n');
    expect((await gitOut(cwd, 'diff', '--cached', '--name-only')).split('\n').sort()).toEqual([
      'README.md',
      'a.txt',
    ]);
    expect(run.lines.join('\n')).toContain(`is kept as ${kept}: 'git reset --soft ${kept}' puts it back`);
    const reset = (await journal(cwd)).find((e) => e.type === 'x-verify.head_reset');
    expect(reset?.data).toEqual({ recorded, now: userCommit, kept });
    expect(loopRecord(resumed.ledger, 'verify').verify?.ticks.map((t) => t.head)).toEqual([
      recorded,
      recorded,
    ]);
  });

  it("a plain verify run stopped inside a tick (Ctrl-C during the agent step) rolls the tick's partial edits back before it ends", async () => {
    const cwd = await makeGitRepo({ 'README.md': 'x\n' });
    const controller = new AbortController();
    const run = harness(
      [{ effect: () => controller.abort(), files: { 'README.md': 'half\n', 'half-done.txt': 'half\n' } }],
      { maxTicks: 5 },
      controller,
    );
    const outcome = await startModeRun('make ok', verify('test -f ok.txt', 0), run.settings(cwd));
    expect(outcome.ledger.terminal?.state).toBe('cancelled');
    expect(await readFile(join(cwd, 'README.md'), 'utf8')).toBe('x\n');
    expect(existsSync(join(cwd, 'half-done.txt'))).toBe(false);
    expect(run.lines).toContain(
      'tick 1 was stopped before it was measured: rolled back 2 file(s) (README.md, half-done.txt); its edits are kept under refs/allium-loop/make-ok/reverted-1',
    );
    expect(await gitOut(cwd, 'show', 'refs/allium-loop/make-ok/reverted-1:half-done.txt')).toBe('half');
    expect(loopRecord(outcome.ledger, 'verify').verify?.pending).toBeNull();
    // Plain verify keeps no best: the rollback moved no `…/best` ref.
    expect(await gitOut(cwd, 'for-each-ref', '--format=%(refname)', 'refs/allium-loop/make-ok/')).toBe(
      'refs/allium-loop/make-ok/reverted-1',
    );
  });
});
