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
 * Runs a child whose `body` writes 4 MB to stdout in one call into a real pipe (a shell's `|`; Node's own child pipes
 * are socket pairs) whose reader sleeps before it reads; the body then says how much of it Node still held once the
 * call returned (`held N` on stderr).
 */
async function heldAfterOneWrite(body: string): Promise<{ held: number; delivered: number }> {
  const dir = await mkdtemp(join(tmpdir(), 'allium-loop-write-through-'));
  const child = join(dir, 'child.mjs');
  await writeFile(
    child,
    [`const { runAsProcess, writeThrough } = await import(${JSON.stringify(processIo)});`, body].join('\n'),
  );
  const node = `"${process.execPath}" --conditions=development --import tsx "${child}"`;
  const { stdout, stderr } = await execFileAsync('sh', ['-c', `${node} | (sleep 1; wc -c)`]);
  return { held: Number(/held (\d+)/.exec(stderr)?.[1]), delivered: Number(stdout.trim()) };
}

const WRITE_AND_REPORT = `process.stdout.write('x'.repeat(${MB4})); process.stderr.write(\`held \${process.stdout.writableLength}\\n\`);`;

describe('writeThrough', () => {
  it('returns from a big write to a pipe only once the pipe took all of it, where Node would hold the rest', async () => {
    // Without it, Node keeps in memory whatever the pipe cannot take yet (all but the pipe's 64 KB here).
    const buffered = await heldAfterOneWrite(WRITE_AND_REPORT);
    expect(buffered.held).toBeGreaterThan(MB4 / 2);
    expect(buffered.delivered).toBe(MB4);
    const through = await heldAfterOneWrite(`writeThrough(process.stdout); ${WRITE_AND_REPORT}`);
    expect(through).toEqual({ held: 0, delivered: MB4 });
  });

  it('is what runAsProcess does when asked (spec-main), and not by default (main, for run and every other command)', async () => {
    // Through the process boundary's own stdout, as a command writes its output.
    const command = (options: string): string =>
      `await runAsProcess(async (_argv, io) => { io.stdout('x'.repeat(${MB4})); ` +
      `process.stderr.write(\`held \${process.stdout.writableLength}\\n\`); return 0; }, ${options});`;
    expect(await heldAfterOneWrite(command('{ writeThrough: true }'))).toEqual({ held: 0, delivered: MB4 });
    // A reader that stops reading must not stop the engine: by default, writes return at once.
    const byDefault = await heldAfterOneWrite(command('{}'));
    expect(byDefault.held).toBeGreaterThan(MB4 / 2);
    expect(byDefault.delivered).toBe(MB4);
  });
});
