import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const exec = promisify(execFile);
const SHIM = fileURLToPath(new URL('../bin/allium-loop.js', import.meta.url));
const MAIN = fileURLToPath(new URL('./main.ts', import.meta.url));

async function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, args, {
      env: { ...process.env, FORCE_COLOR: '0' },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe('the bin shim', () => {
  it('answers --version and -v itself, without loading the CLI, with the very text the CLI prints', async () => {
    // A copy of the shim beside a package.json and no dist/: only an answer that loads nothing else succeeds.
    const dir = await mkdtemp(join(tmpdir(), 'allium-loop-bin-'));
    await mkdir(join(dir, 'bin'));
    await copyFile(SHIM, join(dir, 'bin', 'allium-loop.js'));
    await writeFile(join(dir, 'package.json'), JSON.stringify({ type: 'module', version: '7.8.9' }));
    const bin = join(dir, 'bin', 'allium-loop.js');
    for (const flag of ['--version', '-v'])
      expect(await run([bin, flag])).toEqual({ code: 0, stdout: 'allium-loop 7.8.9\n', stderr: '' });
    // Anything else needs the CLI, which is missing here: the shim says how to build it.
    const help = await run([bin, '--help']);
    expect(help.code).toBe(1);
    expect(help.stderr).toContain('the CLI is not built yet');
    const both = await run([bin, '--version', '--help']);
    expect(both.stderr).toContain('the CLI is not built yet');

    const own = await run([SHIM, '--version']);
    const cli = await run(['--conditions=development', '--import', 'tsx', MAIN, '--version']);
    expect(cli.code).toBe(0);
    expect(own).toEqual(cli);
  });
});
