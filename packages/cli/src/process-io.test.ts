import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const execFileAsync = promisify(execFile);
const processIo = fileURLToPath(new URL('./process-io.ts', import.meta.url));
const MB4 = 4 * 1024 * 1024;

/**
 * Runs a child that writes 4 MB to stdout in one call into a real pipe (a shell's `|`; Node's own child pipes are
 * socket pairs) whose reader sleeps before it reads, then says how much of it Node still held once the call returned.
 */
async function heldAfterOneWrite(through: boolean): Promise<{ held: number; delivered: number }> {
  const dir = await mkdtemp(join(tmpdir(), 'allium-loop-write-through-'));
  const child = join(dir, 'child.mjs');
  await writeFile(
    child,
    [
      `const { writeThrough } = await import(${JSON.stringify(processIo)});`,
      `if (${String(through)}) writeThrough(process.stdout);`,
      `process.stdout.write('x'.repeat(${MB4}));`,
      'process.stderr.write(`held ${process.stdout.writableLength}\\n`);',
    ].join('\n'),
  );
  const node = `"${process.execPath}" --conditions=development --import tsx "${child}"`;
  const { stdout, stderr } = await execFileAsync('sh', ['-c', `${node} | (sleep 1; wc -c)`]);
  return { held: Number(/held (\d+)/.exec(stderr)?.[1]), delivered: Number(stdout.trim()) };
}

describe('writeThrough', () => {
  it('returns from a big write to a pipe only once the pipe took all of it, where Node would hold the rest', async () => {
    // Without it, Node keeps in memory whatever the pipe cannot take yet (all but the pipe's 64 KB here).
    const buffered = await heldAfterOneWrite(false);
    expect(buffered.held).toBeGreaterThan(MB4 / 2);
    expect(buffered.delivered).toBe(MB4);
    const through = await heldAfterOneWrite(true);
    expect(through).toEqual({ held: 0, delivered: MB4 });
  });
});
