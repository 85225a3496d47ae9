import { execFile, spawn } from 'node:child_process';
import { chmod, cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parse } from 'yaml';

/**
 * The scale-out flow of examples/ci/allium-loop-slices.yml, run on one machine as the workflow runs it: every job in
 * a fresh clone of one origin repository, in its own processes, executing the workflow's own step scripts (read from
 * the YAML by step id, fed the environment GitHub would give them). Used by the e2e test and by
 * tools/bench/parallel.
 */

const exec = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const MAIN = fileURLToPath(new URL('../main.ts', import.meta.url));
const TSX = new URL('../../../../node_modules/tsx/dist/loader.mjs', import.meta.url).href;
const WORKFLOW = join(ROOT, 'examples', 'ci', 'allium-loop-slices.yml');

interface Step {
  readonly id?: string;
  readonly run?: string;
}

/** The `run:` script of the workflow step with this id (the same in every job that shares the steps). */
export async function stepScript(id: string): Promise<string> {
  const workflow = parse(await readFile(WORKFLOW, 'utf8')) as { jobs: Record<string, { steps: Step[] }> };
  const script = Object.values(workflow.jobs)
    .flatMap((job) => job.steps)
    .find((step) => step.id === id && step.run !== undefined)?.run;
  if (script === undefined) throw new Error(`no step ${id} in the workflow`);
  return script;
}

/** Runs `git` in `cwd` and returns its trimmed stdout. */
export async function git(cwd: string, ...args: string[]): Promise<string> {
  const { stdout } = await exec('git', args, { cwd });
  return stdout.trim();
}

/** What one job (or step) of the flow did, on the wall clock. */
export interface JobRun {
  readonly job: string;
  readonly code: number | null;
  readonly out: string;
  readonly startMs: number;
  readonly endMs: number;
}

/** Runs one workflow step's script with bash in `cwd`, as a runner would (`bash -e`). */
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

/** Runs `tasks` with at most `limit` at once, in order. */
async function pool<T>(limit: number, tasks: readonly (() => Promise<T>)[]): Promise<T[]> {
  const results: T[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < tasks.length) {
      const index = next;
      next += 1;
      results[index] = await tasks[index]!();
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, tasks.length)) }, worker));
  return results;
}

/** What {@link runMatrixFlow} needs. */
export interface MatrixFlowOptions {
  /** A scratch folder for clones, job temp folders and ledgers. */
  readonly work: string;
  /** The origin repository (bare) the jobs clone and push to; its HEAD holds the goal's spec change. */
  readonly origin: string;
  readonly goal: string;
  /**
   * Called once the plan is stored, with the slice keys in plan order; returns the replay script path of each key.
   * The `allium-loop` the workflow calls is the CLI from source, playing the script of the job's slice (wiring for
   * tests only: the workflow runs the published CLI with the project's agent).
   */
  readonly scripts: (keys: readonly string[]) => Promise<Readonly<Record<string, string>>>;
  /** Slice jobs of one wave at once (GitHub's `max-parallel`); unlimited when absent. */
  readonly maxParallel?: number;
  readonly runId?: string;
  /** The workflow's `since` input: plan only what the spec change since this revision touched. */
  readonly since?: string;
}

/** What {@link runMatrixFlow} did: the plan job's outputs and stored plan, every job, and the roll-up. */
export interface MatrixFlowResult {
  readonly outputs: Readonly<Record<string, string>>;
  readonly planFile: string;
  readonly plan: { readonly id: string; readonly slices: readonly { id: string; key: string }[] };
  readonly ledgers: string;
  readonly mergedLedger: string;
  readonly runId: string;
  readonly jobs: readonly JobRun[];
  readonly rollUp: JobRun;
}

/**
 * Runs the workflow: the plan job, each wave's slice jobs (a fresh clone each, at most `maxParallel` at once), the
 * wave's merge job, the integration job when the goal is split, and the roll-up. Stops at the first job that fails
 * (as `needs:` would), but always runs the roll-up.
 */
export async function runMatrixFlow(options: MatrixFlowOptions): Promise<MatrixFlowResult> {
  const { work, origin, goal } = options;
  const runId = options.runId ?? '4242';
  const wrapper = join(work, 'allium-loop');
  await writeFile(
    wrapper,
    [
      '#!/bin/bash',
      `cli=(node --conditions=development --import ${TSX} ${MAIN})`,
      'if [ "$1" = run ]; then exec "${cli[@]}" "$@" --agent replay --agent-script "$AGENT_SCRIPT"; fi',
      'exec "${cli[@]}" "$@"',
      '',
    ].join('\n'),
  );
  await chmod(wrapper, 0o755);
  const jobEnv = (job: string, extra: Record<string, string> = {}): Record<string, string> => ({
    ALLIUM_LOOP: wrapper,
    GOAL: goal,
    RUN_ID: runId,
    MAX_WAVES: '3',
    PLAN_SINCE: options.since ?? '',
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
  const merged = `allium-loop/${runId}/merged`;
  const planFile = join(work, 'temp', 'plan', 'plan.json');
  const ledgers = join(work, 'ledgers');
  await mkdir(ledgers, { recursive: true });
  const jobs: JobRun[] = [];
  const timed = async (job: string, body: () => Promise<{ code: number | null; out: string }>) => {
    const startMs = Date.now();
    const result = await body();
    const run = { job, ...result, startMs, endMs: Date.now() };
    jobs.push(run);
    return run;
  };

  const planned = await timed('plan', async () =>
    runStep('plan', await checkout('plan'), jobEnv('plan', { PLAN_FILE: planFile })),
  );
  const outputs = planned.code === 0 ? await readOutputs(join(work, 'temp', 'plan', 'output')) : {};
  const plan = (
    planned.code === 0 ? JSON.parse(await readFile(planFile, 'utf8')) : { id: '', slices: [] }
  ) as {
    id: string;
    slices: { id: string; key: string }[];
  };
  const scripts = await options.scripts(plan.slices.map((s) => s.key));

  const sliceJob = (slice: string, key: string) =>
    timed(`slice ${slice}`, async () => {
      const dir = await checkout(`slice-${key}`, merged);
      const temp = join(work, 'temp', `slice-${key}`);
      await cp(planFile, join(temp, 'plan.json'));
      const env = jobEnv(`slice-${key}`, {
        SLICE: slice,
        SLICE_SLUG: key,
        PLAN_FILE: join(temp, 'plan.json'),
        LEDGER_FILE: join(temp, `ledger-${key}.json`),
        AGENT_SCRIPT: scripts[key] ?? '',
      });
      const ran = await runStep('run-slice', dir, env);
      // The ledger artifact is uploaded whatever the outcome (if: always()).
      await cp(env['LEDGER_FILE']!, join(ledgers, `ledger-${key}.json`)).catch(() => undefined);
      if (ran.code !== 0) return ran;
      const pushed = await runStep('push-slice', dir, env);
      return { code: pushed.code, out: `${ran.out}${pushed.out}` };
    });

  let ok = planned.code === 0;
  for (const wave of [1, 2, 3]) {
    if (!ok) break;
    const matrix = JSON.parse(outputs[`wave${String(wave)}`] ?? '{"include":[]}') as {
      include: { slice: string; key: string }[];
    };
    if (matrix.include.length === 0) continue;
    const runs = await pool(
      options.maxParallel ?? matrix.include.length,
      matrix.include.map((entry) => () => sliceJob(entry.slice, entry.key)),
    );
    ok = runs.every((run) => run.code === 0);
    if (!ok) break;
    const mergeRun = await timed(`merge${String(wave)}`, async () =>
      runStep(
        'merge-wave',
        await checkout(`merge${String(wave)}`, merged),
        jobEnv(`merge${String(wave)}`, { MATRIX: outputs[`wave${String(wave)}`]! }),
      ),
    );
    ok = mergeRun.code === 0;
  }
  if (ok && outputs['split'] === 'true') await sliceJob('integration', 'integration');

  const mergedLedger = join(work, 'merged-ledger.json');
  const rollUp = await timed('roll-up', async () =>
    runStep(
      'roll-up',
      work,
      jobEnv('roll-up', { PLAN_FILE: planFile, LEDGERS: ledgers, MERGED_FILE: mergedLedger }),
    ),
  );
  return { outputs, planFile, plan, ledgers, mergedLedger, runId, jobs, rollUp };
}

/**
 * A bare origin repository holding the files of `copyFrom` (when given) in one commit and `files` (path → text) in
 * the next; returns its path.
 */
export async function makeOrigin(
  work: string,
  files: Readonly<Record<string, string>>,
  copyFrom?: string,
): Promise<string> {
  const seed = join(work, 'seed');
  await mkdir(seed, { recursive: true });
  const commit = (message: string) =>
    git(seed, '-c', 'user.name=t', '-c', 'user.email=t@localhost', 'commit', '--quiet', '-m', message);
  await git(work, 'init', '--quiet', seed);
  if (copyFrom !== undefined) {
    // The project before the goal first, then the goal's spec change: `plan --since HEAD~1` sees what it touched.
    await cp(copyFrom, seed, { recursive: true });
    await git(seed, 'add', '-A');
    await commit('project');
  }
  for (const [path, text] of Object.entries(files)) {
    await mkdir(join(seed, path, '..'), { recursive: true });
    await writeFile(join(seed, path), text);
  }
  await git(seed, 'add', '-A');
  await commit('spec');
  const origin = join(work, 'origin.git');
  await git(work, 'clone', '--quiet', '--bare', seed, origin);
  return origin;
}
