import { execFileSync } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../run-goal.js';
import { goalFromEvidence, inferGoal } from './infer-goal.js';
import { recordBlockingQuestion } from './runs.test-helpers.js';

async function repo(): Promise<string> {
  const cwd = await mkdtemp(join(tmpdir(), 'infer-goal-'));
  await writeFile(join(cwd, 'a.allium'), '-- allium: 3\n');
  const git = (...args: string[]) => execFileSync('git', args, { cwd });
  git('init', '-q');
  git('-c', 'user.name=t', '-c', 'user.email=t@localhost', 'add', '-A');
  git('-c', 'user.name=t', '-c', 'user.email=t@localhost', 'commit', '-q', '-m', 'start');
  return cwd;
}

describe('inferGoal looks in order: blocking question, failing test, spec drift', () => {
  it('a blocking question comes before a failing test (the tests are not even run)', async () => {
    const cwd = await repo();
    await recordBlockingQuestion(cwd);
    const marker = join(cwd, 'tests-ran');
    const inferred = await inferGoal({
      cwd,
      store: openStore(cwd, {}),
      testCommand: `touch ${marker}; exit 1`,
    });
    expect(inferred).toMatchObject({ source: 'blocking-question' });
    expect(inferred?.goal).toContain('"May a closed tally be reopened?"');
    expect(execFileSync('ls', [cwd], { encoding: 'utf8' })).not.toContain('tests-ran');
  });

  it('a failing test comes before drift; without readable names the command and exit code are named', async () => {
    const cwd = await repo();
    await writeFile(join(cwd, 'a.allium'), '-- allium: 3\nentity Tally { count: Integer }\n');
    const inferred = await inferGoal({ cwd, store: openStore(cwd, {}), testCommand: 'exit 3' });
    expect(inferred).toMatchObject({
      source: 'failing-test',
      goal: 'make the tests pass (exit 3 exits with code 3)',
    });
  });

  it('drift: edited and new spec files since the last commit; nothing when the tests pass and the spec is as committed', async () => {
    const cwd = await repo();
    const store = openStore(cwd, {});
    expect(await inferGoal({ cwd, store, testCommand: 'true' })).toBeUndefined();
    await writeFile(join(cwd, 'b.allium'), '-- allium: 3\n');
    await writeFile(join(cwd, 'a.allium'), '-- allium: 3\nentity Tally { count: Integer }\n');
    expect(await inferGoal({ cwd, store, testCommand: 'true' })).toMatchObject({
      source: 'spec-drift',
      goal: 'bring the code in line with the spec changes in a.allium, b.allium',
      reason: 'the spec changed since the last commit',
    });
  });

  it('wording names at most three tests and counts the rest', () => {
    const failing = ['a', 'b', 'c', 'd', 'e'];
    expect(goalFromEvidence({ kind: 'failing-test', command: 'npm test', failing, exitCode: 1 }).goal).toBe(
      'make the failing tests pass: a, b, c and 2 more',
    );
  });
});
