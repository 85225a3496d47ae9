import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startRun, type RunSettings } from './run-goal.js';

async function project(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'run-goal-'));
  await writeFile(join(dir, 'notes.txt'), 'no tests, no package.json\n');
  execFileSync('git', ['init', '--quiet'], { cwd: dir });
  return dir;
}

function settings(cwd: string, overrides: Partial<RunSettings>): RunSettings {
  return {
    cwd,
    agent: { kind: 'replay', script: join(cwd, 'missing-script.json') },
    caps: {},
    strictQuestions: false,
    interactive: true,
    env: {},
    signal: new AbortController().signal,
    clock: { now: () => Date.now() },
    ...overrides,
  };
}

describe('startRun: the test command', () => {
  it('asks once on a terminal when none is found and remembers the answer in allium-loop.yaml', async () => {
    const cwd = await project();
    const asked: string[] = [];
    const lines: string[] = [];
    // The replay script does not exist, so the run stops right after set-up; the answer is already saved.
    await startRun(
      'add a tally',
      settings(cwd, {
        promptLine: async (q) => (asked.push(q), 'node --test'),
        announce: (l) => lines.push(l),
      }),
    ).catch(() => undefined);
    expect(asked).toEqual(['No test command found. Which command runs your tests? ']);
    expect(await readFile(join(cwd, 'allium-loop.yaml'), 'utf8')).toContain('testCommand: node --test');
    expect(lines).toContain('Saved testCommand: node --test in allium-loop.yaml.');
  });

  it('without a terminal, fails with the instruction to set testCommand', async () => {
    const cwd = await project();
    await expect(startRun('add a tally', settings(cwd, { interactive: false }))).rejects.toMatchObject({
      code: 'verify.no_test_command',
      hint: expect.stringContaining('testCommand'),
    });
  });
});
