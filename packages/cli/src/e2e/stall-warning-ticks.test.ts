import { describe, expect, it } from 'vitest';
import {
  DRIFT_GOAL,
  DRIFT_SLUG,
  TALLY_PROJECT,
  idleImplement,
  makeProject,
  readJournal,
  runCli,
  weedStep,
  writeScript,
} from './e2e.test-helpers.js';

/** A stuck drift run (weed dirty, implement changes nothing) for 3 ticks; the ticks the stall warning named. */
async function stuck(flags: string[], config = 'testCommand: node --test\n') {
  const dir = await makeProject({ ...TALLY_PROJECT, 'allium-loop.yaml': config });
  const script = await writeScript(dir, [weedStep(true, { repeat: true }), idleImplement({ repeat: true })]);
  const run = await runCli(
    [
      'run',
      DRIFT_GOAL,
      '--agent',
      'replay',
      '--agent-script',
      script,
      '--max-ticks',
      '3',
      '--no-progress-ticks',
      '9',
      ...flags,
    ],
    dir,
  );
  // Three stuck ticks end it (the tick cap, or the repeated identical action at the same tick).
  expect([3, 4], run.stdout + run.stderr).toContain(run.code);
  expect(run.stdout).toMatch(/tick 3 · tests/);
  // The ticks the warning named, and the stall notes journaled (one per warning).
  const warned = [...run.stdout.matchAll(/⚠ tick (\d+) · no progress/g)].map((m) => Number(m[1]));
  const notes = (await readJournal(dir, DRIFT_SLUG)).filter(
    (e) => e['type'] === 'note' && e['data']?.stall === true,
  );
  expect(notes).toHaveLength(warned.length);
  return { run, warned };
}

describe('--stall-warning-ticks / stallWarningTicks', { timeout: 300_000 }, () => {
  it('default 1: the first flat tick (tick 2) warns', async () => {
    const { run, warned } = await stuck([]);
    expect(run.stdout).toMatch(/⚠ tick 2 · no progress/);
    expect(warned).toEqual([2, 3]);
  });

  it('--stall-warning-ticks 2: no warning at the first flat tick, one at the second (tick 3)', async () => {
    const { run, warned } = await stuck(['--stall-warning-ticks', '2']);
    expect(run.stdout).not.toMatch(/⚠ tick 2 · no progress/);
    expect(run.stdout).toMatch(
      /⚠ tick 3 · no progress — tests stuck at \d+\/\d+ for 3 ticks, weed still dirty/,
    );
    expect(warned).toEqual([3]);
  });

  it('the config key stallWarningTicks sets it; the flag wins over it', async () => {
    const config = 'testCommand: node --test\nstallWarningTicks: 2\n';
    expect((await stuck([], config)).warned).toEqual([3]);
    expect((await stuck(['--stall-warning-ticks', '1'], config)).warned).toEqual([2, 3]);
  });

  it('a bad value is a usage error (exit 2) before anything runs', async () => {
    const dir = await makeProject(TALLY_PROJECT);
    const run = await runCli(['run', DRIFT_GOAL, '--stall-warning-ticks', '0'], dir);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--stall-warning-ticks');
  });
});
