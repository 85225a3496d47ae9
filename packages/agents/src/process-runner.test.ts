import { mkdtemp, writeFile, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AlliumLoopError } from '@allium-loop/errors';
import { DEFAULT_CAPTURE_LIMITS, runProcess, sweepWhile, type ProcessRunOptions } from './process-runner.js';
import { isProcessGroupAlive } from './process-group.js';
import { PROCESS_MARKER } from './process-marker.js';

const base = (cwd: string, script: string, extra: Partial<ProcessRunOptions> = {}): ProcessRunOptions => ({
  file: process.execPath,
  args: ['-e', script],
  cwd,
  env: { PATH: process.env['PATH'] ?? '' },
  timeoutMs: 10_000,
  killGraceMs: 300,
  capture: DEFAULT_CAPTURE_LIMITS,
  ...extra,
});

describe('runProcess', () => {
  it('passes the prompt on stdin, only the given environment, and reports the exit code', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'al-run-'));
    const lines: string[] = [];
    const result = await runProcess(
      base(
        cwd,
        `let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{console.log(JSON.stringify({s,keys:Object.keys(process.env).sort(),cwd:process.cwd()}));process.exit(3)})`,
        {
          stdin: 'hello prompt',
          env: { PATH: process.env['PATH'] ?? '', ONLY_ME: '1' },
          onStdoutLine: (l) => lines.push(l),
        },
      ),
    );
    expect(result.exitCode).toBe(3);
    expect(result.timedOut).toBe(false);
    const seen = JSON.parse(lines[0]!) as { s: string; keys: string[]; cwd: string };
    expect(seen.s).toBe('hello prompt');
    expect(seen.keys.filter((k) => k !== 'PWD' && k !== 'SHLVL' && k !== '_')).toEqual(
      [PROCESS_MARKER, 'ONLY_ME', 'PATH'].sort(),
    );
    expect(seen.cwd).toBe(cwd);
  });

  it('kills the whole group on timeout, including a grandchild that ignores SIGTERM', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'al-run-'));
    const grandchild = `process.on('SIGTERM',()=>{});setInterval(()=>{},1000)`;
    const script = `require('child_process').spawn(process.execPath,['-e',${JSON.stringify(grandchild)}],{stdio:'inherit'});setInterval(()=>{},1000)`;
    const result = await runProcess(base(cwd, script, { timeoutMs: 500 }));
    expect(result.timedOut).toBe(true);
    expect(result.signal).not.toBeNull();
    expect(isProcessGroupAlive(result.pid!)).toBe(false);
    expect(result.durationMs).toBeLessThan(8_000);
  });

  it('ends processes the agent leaves behind after it exits', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'al-run-'));
    const grandchild = `process.on('SIGTERM',()=>{});setInterval(()=>{},1000)`;
    const script = `require('child_process').spawn(process.execPath,['-e',${JSON.stringify(grandchild)}],{stdio:'ignore'}).unref();setTimeout(()=>process.exit(0),200)`;
    const result = await runProcess(base(cwd, script));
    expect(result.exitCode).toBe(0);
    expect(result.timedOut).toBe(false);
    expect(isProcessGroupAlive(result.pid!)).toBe(false);
  });

  it('stops on abort and reports it', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'al-run-'));
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const result = await runProcess(base(cwd, 'setInterval(()=>{},1000)', { signal: controller.signal }));
    expect(result.aborted).toBe(true);
    expect(isProcessGroupAlive(result.pid!)).toBe(false);
  });

  it('keeps head and tail of a large output and counts the rest', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'al-run-'));
    const script = `const b=Buffer.alloc(1<<20,120);process.stdout.write('START\\n');for(let i=0;i<20;i++)process.stdout.write(b);process.stdout.write('\\nEND\\n')`;
    const lines: string[] = [];
    const result = await runProcess(
      base(cwd, script, {
        capture: { headBytes: 1000, tailBytes: 1000, maxLineBytes: 4096 },
        onStdoutLine: (l) => lines.push(l),
      }),
    );
    expect(result.stdout.totalBytes).toBe(20 * (1 << 20) + 11);
    expect(result.stdout.head.startsWith('START\n')).toBe(true);
    expect(result.stdout.tail.endsWith('\nEND\n')).toBe(true);
    expect(result.stdout.omittedBytes).toBe(result.stdout.totalBytes - 2000);
    expect(lines).toEqual(['START', 'END']);
    expect(result.skippedLines).toBe(1);
  });

  it('names a missing binary in a typed, non-retryable error', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'al-run-'));
    const error: unknown = await runProcess({
      ...base(cwd, ''),
      file: 'no-such-agent-binary',
      installHint: 'npm i -g no-such-agent',
    }).catch((e: unknown) => e);
    expect(AlliumLoopError.is(error)).toBe(true);
    const typed = error as AlliumLoopError;
    expect(typed.code).toBe('agents.binary_not_found');
    expect(typed.retryable).toBe(false);
    expect(typed.message).toContain('no-such-agent-binary');
    expect(typed.hint).toContain('npm i -g no-such-agent');
  });

  it('rejects a missing working directory before starting anything', async () => {
    const error: unknown = await runProcess(base('/nonexistent/dir/x', '')).catch((e: unknown) => e);
    expect((error as AlliumLoopError).code).toBe('agents.spawn_failed');
  });

  it('reports a non-executable file as a spawn failure', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'al-run-'));
    const file = join(cwd, 'not-exec');
    await writeFile(file, '#!/bin/sh\n');
    await chmod(file, 0o644);
    const error: unknown = await runProcess({ ...base(cwd, ''), file, args: [] }).catch((e: unknown) => e);
    expect((error as AlliumLoopError).code).toBe('agents.spawn_failed');
  });
});

describe('sweepWhile (the marked processes swept again while the pipes stay open)', () => {
  it('sweeps until the output ends, however many sweeps a daemon takes to be found, and stops there', async () => {
    // A sweep that misses the escapee twice (caught mid-exec, /proc shows it no environment) finds it the third time.
    let sweeps = 0;
    let endOutput: () => void = () => undefined;
    const outputEnded = new Promise<void>((resolve) => (endOutput = resolve));
    const never = new Promise<void>(() => undefined);
    await sweepWhile(outputEnded, never, async () => {
      sweeps += 1;
      if (sweeps === 3) endOutput();
    });
    expect(sweeps).toBe(3);
  });

  it('stops when the call’s limit cuts the pipes off, and does not sweep once they have ended', async () => {
    let sweeps = 0;
    await sweepWhile(new Promise<void>(() => undefined), Promise.resolve(), async () => {
      sweeps += 1;
    });
    await sweepWhile(Promise.resolve(), new Promise<void>(() => undefined), async () => {
      sweeps += 1;
    });
    expect(sweeps).toBe(0);
  });
});
