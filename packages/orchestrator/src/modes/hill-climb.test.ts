import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FakeAgentRunner, type FakeAgentScript } from '@allium-loop/agents/testing';
import { describe, expect, it } from 'vitest';
import { gitOut, makeGitRepo } from './git-checkpoint.test-helpers.js';
import { loopRecord } from './mode-session.js';
import { resumeModeRun, startModeRun, type ModeRunSettings } from './run-mode.js';

const SLUG = 'raise-the-score';
const CLIMB = {
  mode: 'verify' as const,
  config: {
    command: 'echo "score: $(cat score.txt)"',
    intervalMs: 1_000,
    hillclimb: { score: 'score: (\\d+)', direction: 'max' as const },
  },
  defaultCaps: {},
};

function settings(
  cwd: string,
  responses: FakeAgentScript[],
  hooks: { between?: () => Promise<void>; lines?: string[]; controller?: AbortController } = {},
): ModeRunSettings {
  return {
    cwd,
    agent: { kind: 'command', argv: ['unused'] },
    caps: { maxTicks: 2 },
    env: { PATH: process.env['PATH'] },
    signal: (hooks.controller ?? new AbortController()).signal,
    clock: { now: () => Date.now() },
    // The pause between ticks is where a user edits files while the run goes on.
    sleep: async () => hooks.between?.(),
    createAgent: () => new FakeAgentRunner(responses),
    onProgress: (progress) => {
      if (progress.kind === 'line') hooks.lines?.push(progress.text);
    },
  };
}

async function journal(cwd: string): Promise<Record<string, unknown>[]> {
  const dir = join(cwd, '.allium-loop');
  const file = (await readdir(dir)).find((name) => name.endsWith('.events.ndjson'))!;
  return (await readFile(join(dir, file), 'utf8'))
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('hill-climb runs (real git, real verify command, scripted agent in process)', () => {
  it("a reverted tick leaves the user's edits made between ticks alone, even in a file the agent also rewrote", async () => {
    const cwd = await makeGitRepo({ 'score.txt': '10\n', 'README.md': 'readme\n', 'src.txt': 'code\n' });
    const run = await startModeRun(
      'raise the score',
      CLIMB,
      settings(
        cwd,
        [
          { files: { 'score.txt': '20\n' } },
          { files: { 'score.txt': '5\n', 'src.txt': 'agent\n', 'junk.txt': 'x\n' } },
        ],
        {
          between: async () => {
            await writeFile(join(cwd, 'README.md'), 'readme, edited by the user\n');
            await writeFile(join(cwd, 'notes.txt'), 'a note the user is writing\n');
            await writeFile(join(cwd, 'src.txt'), 'code, edited by the user\n');
          },
        },
      ),
    );
    expect(run.ledger.terminal?.state).toBe('max_ticks');
    expect(await readFile(join(cwd, 'score.txt'), 'utf8')).toBe('20\n');
    expect(existsSync(join(cwd, 'junk.txt'))).toBe(false);
    expect(await readFile(join(cwd, 'README.md'), 'utf8')).toBe('readme, edited by the user\n');
    expect(await readFile(join(cwd, 'notes.txt'), 'utf8')).toBe('a note the user is writing\n');
    expect(await readFile(join(cwd, 'src.txt'), 'utf8')).toBe('code, edited by the user\n');
    const reverted = (await journal(cwd)).find((e) => e['type'] === 'x-verify.reverted');
    expect((reverted?.['data'] as { paths: string[] }).paths.sort()).toEqual([
      'junk.txt',
      'score.txt',
      'src.txt',
    ]);
    expect(await gitOut(cwd, 'show', `refs/allium-loop/${SLUG}/reverted-2:src.txt`)).toBe('agent');
    expect(await gitOut(cwd, 'for-each-ref', '--format=%(refname)', `refs/allium-loop/${SLUG}/pending`)).toBe(
      '',
    );
  });

  it('a tick a crash left open is rolled back on resume: its unscored edits never reach the best checkpoint', async () => {
    const cwd = await makeGitRepo({ 'score.txt': '10\n' });
    const crash: FakeAgentScript = {
      effect: async (request) => {
        await writeFile(join(request.cwd, 'score.txt'), '5\n');
        await writeFile(join(request.cwd, 'half-done.txt'), 'unscored\n');
        throw new Error('the supervisor died here');
      },
    };
    // A failing port ends the run `failed` (the tick rolled back at the stop); a real crash is the CLI kill test.
    const first = await startModeRun('raise the score', CLIMB, settings(cwd, [crash])).catch(() => undefined);
    expect(first?.exitCode ?? 1).toBe(1);
    const lines: string[] = [];
    const resumed = await resumeModeRun(SLUG, settings(cwd, [{ files: { 'score.txt': '20\n' } }], { lines }));
    expect(resumed.ledger.terminal?.state).toBe('max_ticks');
    expect(existsSync(join(cwd, 'half-done.txt'))).toBe(false);
    const best = await gitOut(cwd, 'rev-parse', `refs/allium-loop/${SLUG}/best`);
    expect((await gitOut(cwd, 'ls-tree', '-r', '--name-only', best)).split('\n')).not.toContain(
      'half-done.txt',
    );
    expect(await gitOut(cwd, 'show', `${best}:score.txt`)).toBe('20');
    expect(await gitOut(cwd, 'show', `refs/allium-loop/${SLUG}/reverted-1:half-done.txt`)).toBe('unscored');
    const rolled = (await journal(cwd)).find((e) => e['type'] === 'x-verify.rolled_back');
    expect(rolled?.['data']).toMatchObject({ tick: 1 });
  });

  it('a run stopped inside a tick (Ctrl-C during the agent step) rolls the tick back before it ends', async () => {
    const cwd = await makeGitRepo({ 'score.txt': '10\n' });
    const controller = new AbortController();
    const lines: string[] = [];
    const run = await startModeRun(
      'raise the score',
      CLIMB,
      settings(
        cwd,
        [{ effect: () => controller.abort(), files: { 'score.txt': '99\n', 'unscored.txt': 'x\n' } }],
        { controller, lines },
      ),
    );
    expect(run.ledger.terminal?.state).toBe('cancelled');
    expect(await readFile(join(cwd, 'score.txt'), 'utf8')).toBe('10\n');
    expect(existsSync(join(cwd, 'unscored.txt'))).toBe(false);
    expect(lines).toContain(
      `tick 1 was stopped before it was scored: rolled back 2 file(s) (score.txt, unscored.txt); its edits are kept under refs/allium-loop/${SLUG}/reverted-1`,
    );
    const state = loopRecord(run.ledger, 'verify').verify;
    expect(state?.pending).toBeNull();
    expect(state?.best?.tick).toBe(0);
  });

  it('a best ref the agent moves is a violation, journaled and put back where the ledger says', async () => {
    const cwd = await makeGitRepo({ 'score.txt': '10\n' });
    const head = await gitOut(cwd, 'rev-parse', 'HEAD');
    const forge: FakeAgentScript = {
      effect: (request) => {
        execFileSync('git', ['update-ref', `refs/allium-loop/${SLUG}/best`, head], { cwd: request.cwd });
      },
      files: { 'score.txt': '5\n' },
    };
    const run = await startModeRun(
      'raise the score',
      CLIMB,
      settings(cwd, [{ files: { 'score.txt': '20\n' } }, forge]),
    );
    const best = loopRecord(run.ledger, 'verify').verify?.best;
    expect(best?.tick).toBe(1);
    expect(await gitOut(cwd, 'rev-parse', `refs/allium-loop/${SLUG}/best`)).toBe(best?.commit);
    expect(run.summary).toContain(`(${String(best?.commit).slice(0, 12)})`);
    const violation = (await journal(cwd)).find((e) => e['type'] === 'violation');
    expect(violation).toMatchObject({
      kind: 'checkpoint_ref_moved',
      path: `refs/allium-loop/${SLUG}/best`,
      reverted: true,
    });
    expect(String(violation?.['detail'])).toContain(`was moved to ${head}`);
  });
});
