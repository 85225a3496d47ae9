import { cp, readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { makeProject, readJournal, readLedger, runCli } from '../e2e/e2e.test-helpers.js';
import { writePlan } from './reliability.test-helpers.js';

/** The `/al` setup of examples/al-state, written from the skill's documented formats. */
const AL_FIXTURE = fileURLToPath(new URL('../../../../examples/al-state', import.meta.url));
const AL_GOAL = 'process all CSV files in ./data and write summary to ./output/summary.json';
const AL_SLUG = 'process-all-csv-files-in-data-and-write-summary';

const GOAL = 'list three colours in out/colours.md';
const SLUG = 'list-three-colours-in-outcoloursmd';

/** A state file of the `/al` shape. */
function state(status: string, iteration: number, extra: Record<string, unknown> = {}): string {
  return `${JSON.stringify({ status, iteration, goal: GOAL, ...extra }, null, 2)}\n`;
}

function stateFileArgs(command: string, ...extra: string[]): string[] {
  return ['run', GOAL, '--state-file', ...extra, '--agent', 'command', '--agent-command', command];
}

const DONE = {
  'out/colours.md': '- red\n- green\n- blue\n',
  '.al-state.json': state('done', 1, { progress: 'all three', result: 'Wrote 3 items to out/colours.md' }),
};

describe('--state-file: an /al setup runs unchanged; kill -9, resume and compaction (issue 22)', () => {
  it(
    'the /al fixture (examples/al-state) runs unchanged with workdir= and max=, and leaves its files in the documented formats',
    { timeout: 300_000 },
    async () => {
      const dir = await makeProject({});
      await cp(AL_FIXTURE, dir, { recursive: true });
      const run = await runCli(
        [
          'run',
          '--state-file',
          'workdir=.',
          'max=5',
          '--agent',
          'command',
          '--agent-command',
          `node ${join(dir, 'al-subagent.mjs')}`,
        ],
        dir,
      );
      const output = `${run.stdout}${run.stderr}`;
      expect(run.code, output).toBe(0);
      expect(output).toContain('tick 3 · state done (result verified)');
      // On done the result is printed, as /al reports it.
      expect(output).toContain('result: summary written to ./output/summary.json with 7 records');
      const final = JSON.parse(await readFile(join(dir, '.al-state.json'), 'utf8')) as Record<
        string,
        unknown
      >;
      // Exactly the keys of the documented done state, so the run can be handed back to /al.
      expect(Object.keys(final).sort()).toEqual(['goal', 'iteration', 'progress', 'result', 'status']);
      expect(final).toMatchObject({ status: 'done', iteration: 3, goal: AL_GOAL });
      expect(existsSync(join(dir, '.al-state.tmp'))).toBe(false);
      const summary = JSON.parse(await readFile(join(dir, 'output/summary.json'), 'utf8')) as {
        files: string[];
        records: unknown[];
      };
      expect(summary.files).toEqual(['a.csv', 'b.csv', 'c.csv']);
      expect(summary.records).toHaveLength(7);
      // max=5 is the tick cap; the subagent saw "Iteration: N of 5" (it exits 2 without that line).
      expect((await readLedger(dir, AL_SLUG))['caps']).toMatchObject({ maxTicks: 5 });
    },
  );

  it('at the cap the last progress is shown', { timeout: 300_000 }, async () => {
    const dir = await makeProject({});
    const plan = await writePlan(dir, {
      step: [{ write: { '.al-state.json': state('in_progress', 1, { progress: 'red written' }) } }],
    });
    const run = await runCli(stateFileArgs(plan.command, 'max=1'), dir);
    const output = `${run.stdout}${run.stderr}`;
    expect(run.code, output).toBe(3);
    expect(output).toContain('max_ticks: tick cap of 1 reached; last progress: red written');
  });

  it(
    'kill -9 of the supervisor while the agent is half way through writing .al-state.tmp, then resume: the stale temp file is dropped, the call is abandoned and runs again in a new tick, and the run converges',
    { timeout: 300_000 },
    async () => {
      const dir = await makeProject({});
      const plan = await writePlan(dir, {
        step: [
          { write: { '.al-state.tmp': '{"status": "do' }, killParent: true },
          {
            write: {
              ...DONE,
              '.al-state.json': DONE['.al-state.json'].replace('"iteration": 1', '"iteration": 2'),
            },
          },
        ],
      });
      const killed = await runCli(stateFileArgs(plan.command), dir);
      expect(killed.signal, `${killed.stdout}${killed.stderr}`).toBe('SIGKILL');
      expect(existsSync(join(dir, '.al-state.tmp'))).toBe(true);
      const resumed = await runCli(['resume', SLUG], dir);
      const output = `${resumed.stdout}${resumed.stderr}`;
      expect(resumed.code, output).toBe(0);
      expect(output).toContain('result: Wrote 3 items to out/colours.md');
      expect(existsSync(join(dir, '.al-state.tmp'))).toBe(false);
      const final = JSON.parse(await readFile(join(dir, '.al-state.json'), 'utf8')) as Record<
        string,
        unknown
      >;
      expect(final).toMatchObject({ status: 'done', iteration: 2 });
      const journal = await readJournal(dir, SLUG);
      expect(
        journal
          .filter((e) => e['type'] === 'intent_ended' && e['status'] === 'abandoned')
          .map((e) => e['key']),
      ).toEqual(['tick-1/step/1']);
      expect((await readLedger(dir, SLUG))['tick']).toBe(2);
      expect(await plan.calls()).toEqual({ step: 2 });
    },
  );

  it(
    'a forced compaction just before completion (the supervisor dies right after the agent wrote done): resume accepts the verified done from the files alone, without another agent call',
    { timeout: 300_000 },
    async () => {
      const dir = await makeProject({});
      const plan = await writePlan(dir, { step: [{ write: DONE, killParent: true }] });
      const killed = await runCli(stateFileArgs(plan.command), dir);
      expect(killed.signal, `${killed.stdout}${killed.stderr}`).toBe('SIGKILL');
      const resumed = await runCli(['resume', SLUG], dir);
      const output = `${resumed.stdout}${resumed.stderr}`;
      expect(resumed.code, output).toBe(0);
      expect(output).toContain('is done and its result checks out; result: Wrote 3 items to out/colours.md');
      expect(await plan.calls()).toEqual({ step: 1 });
      expect((await readLedger(dir, SLUG))['terminal']).toMatchObject({ state: 'converged' });
    },
  );
});
