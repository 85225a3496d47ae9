import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { analyzeSpecs } from '@allium-loop/allium';
import { planSlices } from '@allium-loop/decomposer';
import { describe, expect, it } from 'vitest';
import { readLoopState } from '../driver/ledger-sync.js';
import { startSliceRun, type RunSettings } from '../run-goal.js';
import { sliceRunMark } from './slice-run.js';
import { storePlan } from './stored-plan.js';

const SPEC = `-- allium: 3

entity Lamp {
    status: off | on
}

entity Door {
    status: shut | open
}

rule SwitchOn {
    when: SwitchOn(lamp)
    requires: lamp.status = off
    ensures: lamp.status = on
}

rule OpenDoor {
    when: OpenDoor(door)
    requires: door.status = shut
    ensures: door.status = open
}
`;

const LAMP_TEST = `import assert from 'node:assert/strict';
import { test } from 'node:test';
import { switchOn } from '../src/lamp.js';
test('SwitchOn turns an off lamp on', () => { const lamp = { status: 'off' }; switchOn(lamp); assert.equal(lamp.status, 'on'); });
`;

const STEPS = [
  {
    phase: 'propagate',
    write: { 'test/lamp.test.js': LAMP_TEST },
    result: {
      phase: 'propagate',
      obligations: { total: 1, covered: 1, uncovered: 0 },
      uncovered_obligations: [],
      generated_tests: [
        {
          path: 'test/lamp.test.js',
          hash: `sha256:${createHash('sha256').update(LAMP_TEST, 'utf8').digest('hex')}`,
        },
      ],
      summary: 'lamp',
    },
    loop: { covers: [{ path: 'test/lamp.test.js', obligations: ['SwitchOn'] }] },
  },
  {
    phase: 'implement',
    write: { 'src/lamp.js': "export function switchOn(lamp) { lamp.status = 'on'; }\n" },
    result: { phase: 'implement', files_changed: ['src/lamp.js'], contested_tests: [], summary: 'lamp' },
  },
  { phase: 'weed', result: { phase: 'weed', verdict: 'clean', divergences: [], summary: 'clean' } },
];

async function project(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'slice-run-'));
  await mkdir(join(dir, 'specs'));
  await mkdir(join(dir, 'src'));
  await writeFile(join(dir, 'specs', 'house.allium'), SPEC);
  await writeFile(join(dir, 'src', 'lamp.js'), 'export {};\n');
  await writeFile(join(dir, 'package.json'), '{ "type": "module", "private": true }\n');
  await writeFile(join(dir, 'script.json'), JSON.stringify({ version: 1, steps: STEPS }));
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@localhost', ...args], { cwd: dir });
  git('init', '--quiet');
  git('add', '-A');
  git('commit', '--quiet', '-m', 'house');
  return dir;
}

function settings(cwd: string, signal: AbortSignal): RunSettings {
  return {
    cwd,
    agent: { kind: 'replay', script: join(cwd, 'script.json') },
    caps: { agentTimeoutMs: 120_000, testTimeoutMs: 120_000 },
    strictQuestions: false,
    interactive: false,
    env: {},
    signal,
    clock: { now: () => Date.now() },
    testCommand: 'node --test',
  };
}

describe('startSliceRun: one slice of a stored plan in one checkout', () => {
  it(
    'runs only its slice, refuses another slice in the same checkout, and continues its own after a stop',
    { timeout: 300_000 },
    async () => {
      const cwd = await project();
      const plan = storePlan({
        goal: 'lamps and doors',
        base: null,
        specFiles: ['specs/house.allium'],
        questions: [],
        plan: planSlices(analyzeSpecs([{ path: 'specs/house.allium', text: SPEC }]).graph),
      });
      expect(plan.slices.map((s) => s.id)).toContain('entity-lifecycle:Lamp');

      // Stopped before its first call (Ctrl-C at once): the run ends cancelled, recorded as that slice's run.
      const stop = new AbortController();
      stop.abort();
      const stopped = await startSliceRun(plan, 'entity-lifecycle-Lamp', settings(cwd, stop.signal));
      expect(stopped.ledger.terminal?.state).toBe('cancelled');
      expect(stopped.exitCode).toBe(130);
      expect(sliceRunMark(stopped.ledger)?.slice.id).toBe('entity-lifecycle:Lamp');
      expect(stopped.ledger.subGoals.map((g) => g.id)).toEqual(['entity-lifecycle:Lamp']);

      // Another slice in the same checkout would mix two slices' edits: refused, nothing changed.
      await expect(
        startSliceRun(plan, 'entity-lifecycle:Door', settings(cwd, new AbortController().signal)),
      ).rejects.toMatchObject({ code: 'run.slice_conflict' });

      // The same slice again continues it: propagate, implement, weed on the Lamp's constructs, converged.
      const done = await startSliceRun(
        plan,
        'entity-lifecycle:Lamp',
        settings(cwd, new AbortController().signal),
      );
      expect(done.ledger.terminal?.state).toBe('converged');
      expect(done.exitCode).toBe(0);
      expect(done.ledger.subGoals).toMatchObject([{ id: 'entity-lifecycle:Lamp', status: 'converged' }]);
      expect(done.ledger.intents.map((i) => i.key)).toEqual([
        'slice:entity-lifecycle:Lamp/tick-1/propagate/1',
        'slice:entity-lifecycle:Lamp/tick-1/implement/1',
        'slice:entity-lifecycle:Lamp/tick-1/weed/1',
      ]);
      expect(readLoopState(done.ledger, 'entity-lifecycle:Lamp')?.terminal?.state).toBe('converged');
      expect(readLoopState(done.ledger)).toBeUndefined();
    },
  );
});
