import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { findMarkedProcesses, runInProcessScope } from '@allium-loop/agents';
import { buildCommandLine, runTests } from './run-tests.js';

const command = (line: string) => ({ command: line, source: 'test', reason: 'test' });

async function dir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'verify-run-'));
}

/** Live (non-zombie) members of a process group, read from /proc: a killed orphan may linger as a zombie. */
async function liveMembers(pgid: number): Promise<number[]> {
  const members: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    // Fields after the parenthesised command: state, ppid, pgrp, …
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === pgid && fields[0] !== 'Z') members.push(Number(entry));
  }
  return members;
}

async function groupAlive(pgid: number): Promise<boolean> {
  for (let attempt = 0; attempt < 20; attempt += 1) {
    if ((await liveMembers(pgid)).length === 0) return false;
    await sleep(100);
  }
  return true;
}

describe('runTests', () => {
  it('writes interleaved stdout and stderr to the output file and returns the exit code', async () => {
    const cwd = await dir();
    const result = await runTests({
      command: command('echo out; echo err >&2; exit 3'),
      cwd,
      outputDir: join(cwd, 'o'),
    });
    expect(result.exitCode).toBe(3);
    expect(result.timedOut).toBe(false);
    expect(await readFile(result.outputPath, 'utf8')).toBe('out\nerr\n');
    expect(result.counts).toEqual({ kind: 'unknown', reason: 'no known test runner summary in the output' });
  });

  it('kills the whole process tree on timeout: no member of the group survives', async () => {
    const cwd = await dir();
    const started = Date.now();
    // A grandchild in the background and a foreground sleep that ignores nothing: both must die.
    const result = await runTests({
      command: command('echo $$ > pgid; (sleep 300 &); sleep 300'),
      cwd,
      outputDir: cwd,
      timeoutMs: 500,
      killGraceMs: 200,
    });
    expect(result.timedOut).toBe(true);
    expect(result.exitCode).toBeNull();
    expect(Date.now() - started).toBeLessThan(10_000);
    const pgid = Number((await readFile(join(cwd, 'pgid'), 'utf8')).trim());
    expect(await groupAlive(pgid)).toBe(false);
  });

  it('SIGKILLs a tree that ignores SIGTERM after the grace period', async () => {
    const cwd = await dir();
    const result = await runTests({
      command: command("echo $$ > pgid; trap '' TERM; (trap '' TERM; sleep 300) & wait"),
      cwd,
      outputDir: cwd,
      timeoutMs: 300,
      killGraceMs: 300,
    });
    expect(result.timedOut).toBe(true);
    const pgid = Number((await readFile(join(cwd, 'pgid'), 'utf8')).trim());
    expect(await groupAlive(pgid)).toBe(false);
  });

  it('kills what the tests left behind after a normal exit', async () => {
    const cwd = await dir();
    const result = await runTests({
      command: command('echo $$ > pgid; (sleep 300 &); exit 0'),
      cwd,
      outputDir: cwd,
    });
    expect(result.exitCode).toBe(0);
    const pgid = Number((await readFile(join(cwd, 'pgid'), 'utf8')).trim());
    expect(await groupAlive(pgid)).toBe(false);
  });

  it('fills the report option with a quoted path', () => {
    const line = buildCommandLine(
      {
        command: 'pytest',
        source: 's',
        reason: 'r',
        report: { format: 'junit', option: ' --junitxml={file}' },
      },
      "/tmp/it's/r.xml",
    );
    expect(line).toBe("pytest --junitxml='/tmp/it'\\''s/r.xml'");
  });

  it.skipIf(process.platform !== 'linux')(
    'a setsid daemon started by the tests and holding the output is killed; the run ends (issue 14 item 7)',
    { timeout: 120_000 },
    async () => {
      const cwd = await dir();
      const scope = `test-${randomUUID()}`;
      const result = await runInProcessScope(scope, () =>
        runTests({
          command: command(
            "setsid sh -c 'echo $$ > daemon.pid; exec sleep 300' & echo '# pass 1'; echo '# fail 0'; exit 0",
          ),
          cwd,
          outputDir: cwd,
          killGraceMs: 300,
        }),
      );
      expect(result.exitCode).toBe(0);
      const daemon = Number((await readFile(join(cwd, 'daemon.pid'), 'utf8')).trim());
      expect(await groupAlive(daemon)).toBe(false);
      const marked = await findMarkedProcesses((marker) => marker.startsWith(`${scope}/`));
      expect(marked).toEqual([]);
    },
  );

  it('keeps test output bounded on disk and in memory, with a marker, and still reads the summary (issue 14 item 11)', {
    timeout: 300_000,
  }, async () => {
    const cwd = await dir();
    // 64 MiB of output, far beyond the 64 KiB kept, then the summary.
    const script = `const b=Buffer.alloc(1<<16,46);b[b.length-1]=10;let n=1024;const w=()=>{while(n-->0){if(!process.stdout.write(b))return process.stdout.once('drain',w)}process.stdout.write('ok 1 - a\\n1..1\\n# pass 1\\n# fail 0\\n')};w()`;
    await writeFile(join(cwd, 'big.cjs'), script);
    const result = await runTests({
      command: command('node big.cjs'),
      cwd,
      outputDir: cwd,
      outputLimits: { headBytes: 32 * 1024, tailBytes: 32 * 1024 },
    });
    expect(result.exitCode).toBe(0);
    expect(result.counts).toMatchObject({ kind: 'known', passed: 1, failed: 0 });
    const log = await readFile(result.outputPath, 'utf8');
    expect(log.length).toBeLessThan(70 * 1024);
    expect(log).toMatch(/\[allium-loop: \d+ bytes of output omitted here\]/);
    expect(log.endsWith('# fail 0\n')).toBe(true);
  });

  it('redacts secrets in the test output log (issue 14 item 16)', async () => {
    const cwd = await dir();
    const token = `ghp_${'a1B2'.repeat(9)}`;
    const result = await runTests({
      command: command(
        `echo "token ${token}"; echo "url https://bob:hunter22@db.example/x"; echo "env $DEPLOY_PASSWORD" >&2`,
      ),
      cwd,
      outputDir: cwd,
      env: { DEPLOY_PASSWORD: 'correct-horse-battery' },
    });
    const log = await readFile(result.outputPath, 'utf8');
    expect(log).toContain('token [REDACTED]');
    expect(log).toContain('https://bob:[REDACTED]@db.example/x');
    expect(log).toContain('env [REDACTED]');
    for (const secret of [token, 'hunter22', 'correct-horse-battery']) expect(log).not.toContain(secret);
  });
});
