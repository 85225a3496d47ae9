import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const execFileAsync = promisify(execFile);
const main = fileURLToPath(new URL('./main.ts', import.meta.url));

/** Runs the real CLI entry as a child process, from source, the way `node` would run the built one. */
async function runMain(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await execFileAsync(
      process.execPath,
      ['--conditions=development', '--import', 'tsx', main, ...args],
      { env: { ...process.env, FORCE_COLOR: '0' } },
    );
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe('allium-loop as a process', () => {
  it('prints help and exits 0', async () => {
    const result = await runMain('--help');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Usage: allium-loop <command>');
  });

  it('exits 2 on an unknown command', async () => {
    const result = await runMain('frobnicate');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("unknown command 'frobnicate'");
  });
});
