import { execFile } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const exec = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const WORKFLOW = join(ROOT, 'examples', 'ci', 'allium-loop-verify.yml');
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
