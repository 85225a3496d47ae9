import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
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
});
