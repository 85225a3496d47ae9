import { execFile } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const exec = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const WORKFLOW = join(ROOT, 'examples', 'ci', 'allium-loop-verify.yml');
const SLICES = join(ROOT, 'examples', 'ci', 'allium-loop-slices.yml');
const VALIDATOR = join(ROOT, 'node_modules', '.bin', 'action-validator');

async function validate(path: string): Promise<{ code: number; out: string }> {
  try {
    const { stdout } = await exec(VALIDATOR, [path]);
    return { code: 0, out: stdout };
  } catch (error) {
    const failed = error as { code: number; stdout: string };
    return { code: failed.code, out: failed.stdout };
  }
}

describe('examples/ci: the GitHub Actions gate', () => {
  it('passes the workflow linter and runs allium-loop verify on pull requests', async () => {
    expect(await validate(WORKFLOW)).toEqual({ code: 0, out: '' });
    const text = await readFile(WORKFLOW, 'utf8');
    expect(text).toMatch(/^on:\n {2}pull_request:/m);
    expect(text).toMatch(/run: npx --yes allium-loop@\d+\.\d+\.\d+ verify/);
  });

  it('the linter is not a rubber stamp: a broken copy fails', async () => {
    const broken = join(await mkdtemp(join(tmpdir(), 'allium-loop-ci-')), 'broken.yml');
    await writeFile(broken, (await readFile(WORKFLOW, 'utf8')).replace('runs-on:', 'runs_on:'));
    expect((await validate(broken)).code).not.toBe(0);
  });
});

describe('examples/ci: the slices of a goal as jobs', () => {
  it('passes the workflow linter and chains plan → waves → merges → integration → roll-up with needs:', async () => {
    expect(await validate(SLICES)).toEqual({ code: 0, out: '' });
    const workflow = parse(await readFile(SLICES, 'utf8')) as {
      jobs: Record<string, { needs?: string | string[]; strategy?: { matrix?: unknown } }>;
    };
    const needs = Object.fromEntries(
      Object.entries(workflow.jobs).map(([name, job]) => [name, [job.needs ?? []].flat()]),
    );
    expect(needs).toEqual({
      plan: [],
      wave1: ['plan'],
      merge1: ['plan', 'wave1'],
      wave2: ['plan', 'merge1'],
      merge2: ['plan', 'wave2'],
      wave3: ['plan', 'merge2'],
      merge3: ['plan', 'wave3'],
      integration: ['plan', 'merge1', 'merge2', 'merge3'],
      'roll-up': ['plan', 'wave1', 'wave2', 'wave3', 'integration'],
    });
    expect(workflow.jobs['wave2']!.strategy!.matrix).toBe('${{ fromJSON(needs.plan.outputs.wave2) }}');
    const text = await readFile(SLICES, 'utf8');
    expect(text).toMatch(/plan \$\{PLAN_SINCE:\+--since "\$PLAN_SINCE"\} --github-matrix --wave/);
    expect(text).toMatch(/run --slice "\$SLICE" --plan "\$PLAN_FILE" --ledger-out "\$LEDGER_FILE"/);
    expect(text).toMatch(/merge-ledgers --plan "\$PLAN_FILE"/);
  });

  it('the linter checks the shared (anchored) steps too: a broken one fails', async () => {
    const broken = join(await mkdtemp(join(tmpdir(), 'allium-loop-ci-')), 'broken.yml');
    const text = await readFile(SLICES, 'utf8');
    await writeFile(broken, text.replace('if-no-files-found: ignore', 'if-no-files-found: [1, 2]'));
    expect((await validate(broken)).code).not.toBe(0);
    await writeFile(broken, text.replace('    steps: *merge-steps\n', '    steps: *no-such-anchor\n'));
    expect((await validate(broken)).code).not.toBe(0);
  });
});
