import { execFile, spawn } from 'node:child_process';
import { chmod, cp, mkdir, mkdtemp, readFile, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { runCli, type LooseJson } from './e2e.test-helpers.js';

/**
 * The scale-out flow of examples/ci/allium-loop-slices.yml, run here as the workflow runs it: every job in a fresh
 * clone of one origin repository, in its own processes (the slices of a wave at once), executing the workflow's own
 * step scripts (read from the YAML by step id, fed the environment GitHub would give them), then the roll-up. Its
 * report must equal the single-process run of the same demo goal.
 */

const exec = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const MAIN = fileURLToPath(new URL('../main.ts', import.meta.url));
const TSX = new URL('../../../../node_modules/tsx/dist/loader.mjs', import.meta.url).href;
const DEMO = join(ROOT, 'examples', 'demo');
const WORKFLOW = join(ROOT, 'examples', 'ci', 'allium-loop-slices.yml');
const GOAL = 'add loans, returns and overdue notices to the lending desk';
const RUN_ID = '4242';

interface Step {
  readonly id?: string;
  readonly run?: string;
}

/** The `run:` script of the workflow step with this id (the same in every job that shares the steps). */
async function stepScript(id: string): Promise<string> {
  const workflow = parse(await readFile(WORKFLOW, 'utf8')) as { jobs: Record<string, { steps: Step[] }> };
  const scripts = Object.values(workflow.jobs)
    .flatMap((job) => job.steps)
    .filter((step) => step.id === id && step.run !== undefined)
    .map((step) => step.run!);
  if (scripts.length === 0) throw new Error(`no step ${id} in the workflow`);
  return scripts[0]!;
}

async function git(cwd: string, ...args: string[]): Promise<string> {
  const { stdout } = await exec('git', args, { cwd });
  return stdout.trim();
}

/** Runs one workflow step's script with bash in `cwd`, as a runner would (`bash -e`), and returns what it did. */
async function runStep(
  id: string,
  cwd: string,
  env: Record<string, string>,
): Promise<{ code: number | null; out: string }> {
  const script = await stepScript(id);
  const child = spawn('bash', ['--noprofile', '--norc', '-e', '-o', 'pipefail', '-c', script], {
    cwd,
    env: { ...process.env, FORCE_COLOR: '0', CI: 'true', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
  return { code, out };
}

/** `GITHUB_OUTPUT` lines `name=value` as a record. */
async function readOutputs(path: string): Promise<Record<string, string>> {
  const text = await readFile(path, 'utf8');
  return Object.fromEntries(
    text
      .split('\n')
      .filter((line) => line.includes('='))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
}

/**
 * The demo's replay script cut at each propagate: the first part (after tend) plays the first slice, the next the
 * second slice, the last the integration pass — the order a single-process run plays them in.
 */
async function sliceScripts(dir: string): Promise<string[][]> {
  const script = JSON.parse(await readFile(join(DEMO, 'replay', 'script.json'), 'utf8')) as {
    steps: { phase: string }[];
  };
  const parts: { phase: string }[][] = [];
  for (const step of script.steps.filter((s) => s.phase !== 'tend')) {
    if (step.phase === 'propagate') parts.push([]);
    parts.at(-1)!.push(step);
  }
  await cp(join(DEMO, 'replay'), dir, { recursive: true });
  return parts.map((steps) => steps.map((s) => JSON.stringify(s)));
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
      await git(single, '-c', 'user.name=t', '-c', 'user.email=t@localhost', 'commit', '--quiet', '-m', 'desk');
      const singleRun = runCli(
        ['run', GOAL, '--agent', 'replay', '--agent-script', join(DEMO, 'replay', 'script.json')],
        single,
      );

      // The origin of the matrix flow: the same project with the goal's spec change pushed (gather done).
      const seed = join(work, 'seed');
      await cp(join(DEMO, 'project'), seed, { recursive: true });
      await cp(join(DEMO, 'replay', 'desk-v2.allium'), join(seed, 'specs', 'desk.allium'));
      await git(work, 'init', '--quiet', seed);
      await git(seed, 'add', '-A');
      await git(seed, '-c', 'user.name=t', '-c', 'user.email=t@localhost', 'commit', '--quiet', '-m', 'spec');
      const origin = join(work, 'origin.git');
      await git(work, 'clone', '--quiet', '--bare', seed, origin);

      // Replay scripts per slice, and the `allium-loop` the workflow calls: the CLI from source, playing the
      // script of the job's slice (test wiring only: the workflow itself runs the published CLI with its agent).
      const replay = join(work, 'replay');
      const parts = await sliceScripts(replay);
      const wrapper = join(work, 'allium-loop');
      await writeFile(
        wrapper,
        [
          '#!/bin/bash',
          `cli=(node --conditions=development --import ${TSX} ${MAIN})`,
          'if [ "$1" = run ]; then exec "${cli[@]}" "$@" --agent replay --agent-script "$REPLAY/$KEY.json"; fi',
          'exec "${cli[@]}" "$@"',
          '',
        ].join('\n'),
      );
      await chmod(wrapper, 0o755);
      const jobEnv = (job: string, extra: Record<string, string> = {}): Record<string, string> => ({
        ALLIUM_LOOP: wrapper,
        GOAL,
        RUN_ID,
        MAX_WAVES: '3',
        REPLAY: replay,
        RUNNER_TEMP: join(work, 'temp', job),
        GITHUB_OUTPUT: join(work, 'temp', job, 'output'),
        ...extra,
      });
      const checkout = async (job: string, ref?: string): Promise<string> => {
        const dir = join(work, 'jobs', job);
        await mkdir(join(work, 'temp', job), { recursive: true });
        await writeFile(join(work, 'temp', job, 'output'), '');
        await git(work, 'clone', '--quiet', ...(ref === undefined ? [] : ['--branch', ref]), origin, dir);
        return dir;
      };
      const planFile = join(work, 'temp', 'plan', 'plan.json');
      const ledgers = join(work, 'ledgers');
      await mkdir(ledgers, { recursive: true });

      // plan
      const planDir = await checkout('plan');
      const planned = await runStep('plan', planDir, jobEnv('plan', { PLAN_FILE: planFile }));
      expect(planned.code, planned.out).toBe(0);
      const outputs = await readOutputs(join(work, 'temp', 'plan', 'output'));
      const stored = JSON.parse(await readFile(planFile, 'utf8')) as LooseJson;
      expect(outputs['waves']).toBe('2');
      expect(outputs['split']).toBe('true');
      expect(JSON.parse(outputs['wave1']!)).toEqual({
        include: [{ wave: 1, slice: 'cycle:entity-lifecycle:Book', key: 'cycle-entity-lifecycle-Book' }],
      });
      expect(JSON.parse(outputs['wave3']!)).toEqual({ include: [] });
      const order = (stored['slices'] as LooseJson[]).map((s) => s['key'] as string);
      expect(order).toEqual(['cycle-entity-lifecycle-Book', 'entity-lifecycle-Notice', 'integration']);
      for (const [index, key] of order.entries()) {
        await writeFile(
          join(replay, `${key}.json`),
          `{ "version": 1, "steps": [${parts[index]!.join(',')}] }`,
        );
      }

      // A slice job: fresh clone of the merged work, run the slice, push its work, keep its ledger.
      const sliceJob = async (slice: string, key: string): Promise<void> => {
        const dir = await checkout(`slice-${key}`, `allium-loop/${RUN_ID}/merged`);
        await cp(planFile, join(work, 'temp', `slice-${key}`, 'plan.json'));
        const env = jobEnv(`slice-${key}`, {
          SLICE: slice,
          KEY: key,
          PLAN_FILE: join(work, 'temp', `slice-${key}`, 'plan.json'),
          LEDGER_FILE: join(work, 'temp', `slice-${key}`, `ledger-${key}.json`),
        });
        const ran = await runStep('run-slice', dir, env);
        expect(ran.code, ran.out).toBe(0);
        const pushed = await runStep('push-slice', dir, env);
        expect(pushed.code, pushed.out).toBe(0);
        await cp(env['LEDGER_FILE']!, join(ledgers, `ledger-${key}.json`));
      };

      for (const wave of [1, 2, 3]) {
        const matrix = JSON.parse(outputs[`wave${String(wave)}`]!) as {
          include: { slice: string; key: string }[];
        };
        if (matrix.include.length === 0) continue;
        await Promise.all(matrix.include.map((entry) => sliceJob(entry.slice, entry.key)));
        const mergeDir = await checkout(`merge${String(wave)}`, `allium-loop/${RUN_ID}/merged`);
        const merged = await runStep(
          'merge-wave',
          mergeDir,
          jobEnv(`merge${String(wave)}`, { MATRIX: outputs[`wave${String(wave)}`]! }),
        );
        expect(merged.code, merged.out).toBe(0);
      }
      await sliceJob('integration', 'integration');

      // roll-up: the workflow's step, then the same roll-up as JSON to compare.
      const rolled = await runStep(
        'roll-up',
        work,
        jobEnv('roll-up', {
          PLAN_FILE: planFile,
          LEDGERS: ledgers,
          MERGED_FILE: join(work, 'merged-ledger.json'),
        }),
      );
      expect(rolled.code, rolled.out).toBe(0);
      expect(rolled.out).toContain(`Roll-up of plan ${String(stored['id'])}: converged, 3/3 converged`);
      const files = (await readdir(ledgers)).map((file) => join(ledgers, file));
      const json = await runCli(['merge-ledgers', '--plan', planFile, '--json', ...files], work);
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
      const final = await checkout('final', `allium-loop/${RUN_ID}/merged`);
      const tests = await exec('node', ['--test'], { cwd: final });
      expect(tests.stdout).toMatch(/# fail 0/);
      const merged = JSON.parse(await readFile(join(work, 'merged-ledger.json'), 'utf8')) as LooseJson;
      expect(merged['terminal']['state']).toBe('converged');
      expect((merged['subGoals'] as LooseJson[]).map((g) => [g['id'], g['status']])).toEqual([
        ['cycle:entity-lifecycle:Book', 'converged'],
        ['entity-lifecycle:Notice', 'converged'],
        ['integration', 'converged'],
      ]);
    },
  );
});
