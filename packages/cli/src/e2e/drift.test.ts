import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  DRIFT_GOAL,
  DRIFT_SLUG,
  TALLY_PROJECT,
  idleImplement,
  makeProject,
  readLedger,
  runCli,
  weedStep,
  writeScript,
} from './e2e.test-helpers.js';

const BROKEN = "export function closeTally(t) { t.status = 'open'; }\n";
const FIXED = TALLY_PROJECT['src/tally.js']!;

/** A stuck implementer that still changes something each time (so it is not the same action three times). */
const flailing = [1, 2, 3].map((n) => idleImplement({ write: { 'notes.txt': `attempt ${String(n)}\n` } }));
const steps = [weedStep(false, { repeat: true }), ...flailing, idleImplement({ repeat: true })];

describe('resume after the working tree drifted', { timeout: 180_000 }, () => {
  it('escalates failed fix attempts, then --on-drift stop refuses, reset restores, and reverify converges', async () => {
    const dir = await makeProject({ ...TALLY_PROJECT, 'src/tally.js': BROKEN });
    const script = await writeScript(dir, steps);
    const agent = ['--agent', 'replay', '--agent-script', script];
    const first = await runCli(
      ['run', DRIFT_GOAL, ...agent, '--inner-loop-max', '1', '--no-progress-ticks', '9', '--max-ticks', '9'],
      dir,
    );
    expect(first.code).toBe(5);
    expect((await readLedger(dir, DRIFT_SLUG))['terminal'].detail).toContain('failed fix attempts');

    // The user steps in and fixes the code by hand: the tree now differs from the last checkpoint.
    await writeFile(join(dir, 'src/tally.js'), FIXED);
    const stopped = await runCli(['resume', DRIFT_SLUG, ...agent, '--on-drift', 'stop'], dir);
    expect(stopped.stdout).toContain('The working tree changed since tick');
    expect(stopped.stderr).toContain('drifted');
    expect(stopped.code).toBe(1);
    expect(await readFile(join(dir, 'src/tally.js'), 'utf8')).toBe(FIXED);

    const bad = await runCli(['resume', DRIFT_SLUG, '--on-drift', 'sideways'], dir);
    expect(bad.code).toBe(2);

    const resumed = await runCli(['resume', DRIFT_SLUG, ...agent], dir);
    expect(resumed.stdout).toContain('--on-drift reverify');
    expect(resumed.code).toBe(0);
    expect((await readLedger(dir, DRIFT_SLUG))['terminal'].state).toBe('converged');
  });

  it('--on-drift reset puts the checkpointed files back', async () => {
    const dir = await makeProject({ ...TALLY_PROJECT, 'src/tally.js': BROKEN });
    const script = await writeScript(dir, steps);
    const agent = ['--agent', 'replay', '--agent-script', script];
    expect(
      (
        await runCli(
          [
            'run',
            DRIFT_GOAL,
            ...agent,
            '--inner-loop-max',
            '1',
            '--no-progress-ticks',
            '9',
            '--max-ticks',
            '9',
          ],
          dir,
        )
      ).code,
    ).toBe(5);
    await writeFile(join(dir, 'src/tally.js'), FIXED);
    const reset = await runCli(
      ['resume', DRIFT_SLUG, ...agent, '--on-drift', 'reset', '--max-fix-attempts', '1'],
      dir,
    );
    expect(reset.stdout).toContain('Restored the files of refs/allium-loop/');
    expect(await readFile(join(dir, 'src/tally.js'), 'utf8')).toBe(BROKEN);
  });
});
