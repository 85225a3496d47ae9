import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findMarkedProcesses, killScopeProcesses, runInProcessScope } from './process-marker.js';
import { DEFAULT_CAPTURE_LIMITS, runProcess } from './process-runner.js';

/** Polls until `read` gives a value (a pid file written by a daemon), for up to a minute. */
async function eventually<T>(read: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 1200; i += 1) {
    const value = await read();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('timed out waiting');
}

const pidIn = (file: string) => async () => {
  const text = await readFile(file, 'utf8').catch(() => '');
  return /^\d+\n$/.test(text) ? Number(text) : undefined;
};

/** Live (non-zombie) processes whose pid, or whose process group, is `id`: read from /proc. */
async function liveByPidOrGroup(id: number): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (stat === '' || fields[0] === 'Z') continue;
    if (Number(entry) === id || Number(fields[2]) === id) found.push(Number(entry));
  }
  return found;
}

/** The live processes of a scope, by the marker in their environment (read from /proc). */
async function scopeSurvivors(scope: string): Promise<number[]> {
  return (await findMarkedProcesses((marker) => marker.startsWith(`${scope}/`))).map((p) => p.pid);
}

/** A shell that starts a `setsid` daemon holding stdout and stderr, which writes its pid to `pidFile`. */
const daemonScript = (pidFile: string, thenExit: boolean) =>
  `setsid sh -c 'echo $$ > ${pidFile}; exec sleep 300' & echo started; ${thenExit ? 'exit 0' : 'sleep 300'}`;

describe.skipIf(process.platform !== 'linux')('process marker: no process escapes a call (issue 14 item 7)', () => {
  it.each([
    ['the agent exits and leaves the daemon behind', true],
    ['the agent hangs and the call times out', false],
  ])(
    'a setsid daemon holding stdout: %s; the call ends and the daemon is killed',
    { timeout: 120_000 },
    async (_case, thenExit) => {
      const dir = await mkdtemp(join(tmpdir(), 'al-daemon-'));
      const pidFile = join(dir, 'daemon.pid');
      const scope = `test-${randomUUID()}`;
      const result = await runInProcessScope(scope, () =>
        runProcess({
          file: '/bin/sh',
          args: ['-c', daemonScript(pidFile, thenExit)],
          cwd: dir,
          env: { PATH: process.env['PATH'] ?? '' },
          timeoutMs: thenExit ? 600_000 : 1_500,
          killGraceMs: 300,
          capture: DEFAULT_CAPTURE_LIMITS,
        }),
      );
      const daemon = await eventually(pidIn(pidFile));
      expect(result.stdout.head).toContain('started');
      expect(result.timedOut).toBe(!thenExit);
      // The daemon led its own session and group: both are gone, and no process carries the scope's marker.
      expect(await liveByPidOrGroup(daemon)).toEqual([]);
      expect(await liveByPidOrGroup(result.pid!)).toEqual([]);
      expect(await scopeSurvivors(scope)).toEqual([]);
    },
  );

  it('kills every process of a scope from another context (a dead engine’s agents)', { timeout: 120_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'al-stale-'));
    const pidFile = join(dir, 'daemon.pid');
    const scope = `test-${randomUUID()}`;
    const controller = new AbortController();
    // A call still running in the scope: the agent and its setsid daemon.
    const running = runInProcessScope(scope, () =>
      runProcess({
        file: '/bin/sh',
        args: ['-c', daemonScript(pidFile, false)],
        cwd: dir,
        env: { PATH: process.env['PATH'] ?? '' },
        timeoutMs: 600_000,
        killGraceMs: 300,
        capture: DEFAULT_CAPTURE_LIMITS,
        signal: controller.signal,
      }),
    );
    const daemon = await eventually(pidIn(pidFile));
    expect((await scopeSurvivors(scope)).length).toBeGreaterThanOrEqual(2);
    const killed = await killScopeProcesses(scope, 300);
    expect(killed).toContain(daemon);
    expect(await scopeSurvivors(scope)).toEqual([]);
    const result = await running;
    expect(result.exitCode === null || result.signal !== null || result.exitCode !== 0).toBe(true);
    controller.abort();
  });
});

describe('runProcess reads the output to its end', () => {
  it('sees the last line of a large output that ends right before exit, on a busy event loop', { timeout: 300_000 }, async () => {
    const script = `const b=Buffer.alloc(1<<16,97);b[b.length-1]=10;let n=16*16;const w=()=>{while(n-->0){if(!process.stdout.write(b))return process.stdout.once('drain',w)}process.stdout.write('FINAL\\n',()=>process.exit(0))};w()`;
    for (let round = 0; round < 4; round += 1) {
      const busy = setInterval(() => {
        const until = Date.now() + 20;
        while (Date.now() < until);
      }, 1);
      let final = false;
      const result = await runProcess({
        file: process.execPath,
        args: ['-e', script],
        cwd: tmpdir(),
        env: { PATH: process.env['PATH'] ?? '' },
        timeoutMs: 600_000,
        killGraceMs: 300,
        capture: DEFAULT_CAPTURE_LIMITS,
        onStdoutLine: (line) => (final ||= line === 'FINAL'),
      }).finally(() => clearInterval(busy));
      expect(result.stdout.totalBytes).toBe(16 * 1024 * 1024 + 6);
      expect(final).toBe(true);
    }
  });
});
