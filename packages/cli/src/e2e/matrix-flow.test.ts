import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { runCli, type LooseJson } from './e2e.test-helpers.js';
import { git, makeOrigin, runMatrixFlow } from './matrix-flow.test-helpers.js';

/**
 * The scale-out flow of examples/ci/allium-loop-slices.yml run as the workflow runs it (see
 * matrix-flow.test-helpers.ts): every job in a fresh clone of one origin, the slices of a wave as parallel
 * processes, the workflow's own step scripts. Its report must equal the single-process run of the same demo goal.
 */

const exec = promisify(execFile);
const DEMO = fileURLToPath(new URL('../../../../examples/demo', import.meta.url));
const GOAL = 'add loans, returns and overdue notices to the lending desk';

/**
 * The demo's replay script cut at each propagate: the first part (after tend) plays the first slice, the next the
 * second slice, the last the integration pass — the order a single-process run plays them in.
 */
async function sliceScripts(dir: string, keys: readonly string[]): Promise<Record<string, string>> {
  const script = JSON.parse(await readFile(join(DEMO, 'replay', 'script.json'), 'utf8')) as {
    steps: { phase: string }[];
  };
  const parts: { phase: string }[][] = [];
  for (const step of script.steps.filter((s) => s.phase !== 'tend')) {
    if (step.phase === 'propagate') parts.push([]);
    parts.at(-1)!.push(step);
  }
  expect(parts).toHaveLength(keys.length);
  // Next to the demo's files, which the steps copy from (paths are relative to the script).
  await cp(join(DEMO, 'replay'), dir, { recursive: true });
  const paths: Record<string, string> = {};
  for (const [index, key] of keys.entries()) {
    paths[key] = join(dir, `${key}.json`);
    await writeFile(paths[key], JSON.stringify({ version: 1, steps: parts[index] }));
  }
  return paths;
}

describe('scale-out: the slices of a plan as separate jobs in separate clones', () => {
  it(
    'plans, runs each wave as parallel jobs, merges with tests, runs the integration pass, and rolls up to the single-process report',
    { timeout: 900_000 },
    async () => {
      const work = await mkdtemp(join(tmpdir(), 'allium-loop-matrix-'));

      // The single-process run of the demo goal, from the project before the goal (tend writes the spec).
      const single = join(work, 'single');
      await cp(join(DEMO, 'project'), single, { recursive: true });
      await git(work, 'init', '--quiet', single);
      await git(single, 'add', '-A');
      await git(
        single,
        '-c',
        'user.name=t',
        '-c',
        'user.email=t@localhost',
        'commit',
        '--quiet',
        '-m',
        'desk',
      );
      const singleRun = runCli(
        ['run', GOAL, '--agent', 'replay', '--agent-script', join(DEMO, 'replay', 'script.json')],
        single,
      );

      // The matrix flow, from the same project with the goal's spec change pushed (gather done).
      const origin = await makeOrigin(
        work,
        { 'specs/desk.allium': await readFile(join(DEMO, 'replay', 'desk-v2.allium'), 'utf8') },
        join(DEMO, 'project'),
      );
      const flow = await runMatrixFlow({
        work,
        origin,
        goal: GOAL,
        // As a run plans it: only what the goal's spec change touched (the commit before it holds the project).
        since: 'HEAD~1',
        scripts: (keys) => sliceScripts(join(work, 'replay'), keys),
      });
      for (const job of flow.jobs) expect(job.code, `${job.job}\n${job.out}`).toBe(0);
      // No job's environment makes an ordinary word look like a secret (a variable named KEY holding the slice's
      // key once redacted every "integration" in the integration job's output).
      for (const job of flow.jobs) expect(job.out, job.job).not.toContain('[REDACTED]');
      expect(flow.outputs['waves']).toBe('2');
      expect(flow.outputs['split']).toBe('true');
      expect(JSON.parse(flow.outputs['wave1']!)).toEqual({
        include: [{ wave: 1, slice: 'cycle:entity-lifecycle:Book', key: 'cycle-entity-lifecycle-Book' }],
      });
      expect(JSON.parse(flow.outputs['wave3']!)).toEqual({ include: [] });
      expect(flow.jobs.map((job) => job.job)).toEqual([
        'plan',
        'slice cycle:entity-lifecycle:Book',
        'merge1',
        'slice entity-lifecycle:Notice',
        'merge2',
        'slice integration',
        'roll-up',
      ]);
      expect(flow.rollUp.out).toContain(`Roll-up of plan ${flow.plan.id}: converged, 3/3 converged`);

      // The same roll-up as JSON, to compare with the single-process run's.
      const files = (await readdir(flow.ledgers)).map((file) => join(flow.ledgers, file));
      const json = await runCli(['merge-ledgers', '--plan', flow.planFile, '--json', ...files], work);
      expect(json.code, json.stderr).toBe(0);
      const matrixRollUp = (JSON.parse(json.stdout) as LooseJson)['rollUp'] as LooseJson;

      const done = await singleRun;
      expect(done.code, done.stderr).toBe(0);
      const journal = await readFile(
        join(single, '.allium-loop', 'add-loans-returns-and-overdue-notices-to-the.events.ndjson'),
        'utf8',
      );
      const note = journal
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as LooseJson)
        .find((event) => event['type'] === 'note' && String(event['message']).startsWith('roll-up:'));
      expect(note).toBeDefined();
      expect(matrixRollUp).toEqual(note!['data']);
      expect(matrixRollUp['converged']).toBe(true);

      // The merged branch holds every slice's work, and its suite is green.
      const final = join(work, 'final');
      await git(work, 'clone', '--quiet', '--branch', `allium-loop/${flow.runId}/merged`, origin, final);
      const tests = await exec('node', ['--test'], { cwd: final });
      expect(tests.stdout).toMatch(/# fail 0/);
      const merged = JSON.parse(await readFile(flow.mergedLedger, 'utf8')) as LooseJson;
      expect(merged['terminal']['state']).toBe('converged');
      expect((merged['subGoals'] as LooseJson[]).map((g) => [g['id'], g['status']])).toEqual([
        ['cycle:entity-lifecycle:Book', 'converged'],
        ['entity-lifecycle:Notice', 'converged'],
        ['integration', 'converged'],
      ]);
    },
  );
});
