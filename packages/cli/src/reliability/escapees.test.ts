import { hostname } from 'node:os';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  DRIFT_GOAL,
  DRIFT_SLUG,
  makeProject,
  readLedger,
  runCli,
  startCli,
  type CliRun,
} from '../e2e/e2e.test-helpers.js';
import {
  BROKEN_TALLY,
  CLEAN_WEED,
  DIRTY_WEED,
  FAST_TALLY,
  implementResult,
  recordFigure,
  writePlan,
} from './reliability.test-helpers.js';

const FIXED_TALLY = FAST_TALLY['src/tally.js']!;

interface ProcInfo {
  readonly pid: number;
  readonly pgid: number;
  readonly marker: string | undefined;
}

/** Every live (non-zombie) process, with its process group and its `ALLIUM_LOOP_CALL` marker, read from /proc. */
async function processes(): Promise<ProcInfo[]> {
  const found: ProcInfo[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (stat === '' || fields[0] === 'Z') continue;
    const environ = await readFile(`/proc/${entry}/environ`, 'latin1').catch(() => '');
    const marker = environ
      .split('\0')
      .find((v) => v.startsWith('ALLIUM_LOOP_CALL='))
      ?.slice('ALLIUM_LOOP_CALL='.length);
    found.push({ pid: Number(entry), pgid: Number(fields[2]), marker });
  }
  return found;
}

/**
 * Waits (up to a minute, for the kernel to finish killing) until no live process has one of `pids` as its pid or
 * its group, and none carries a marker of the engine process `enginePid`; returns what is still there.
 */
async function survivors(pids: readonly number[], enginePid: number): Promise<ProcInfo[]> {
  const scope = `lease:${hostname()}:${String(enginePid)}:`;
  const until = Date.now() + 60_000;
  for (;;) {
    const left = (await processes()).filter(
      (p) => pids.includes(p.pid) || pids.includes(p.pgid) || p.marker?.startsWith(scope) === true,
    );
    if (left.length === 0 || Date.now() > until) return left;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function readPidLines(file: string, run?: CliRun): Promise<Record<string, number>[]> {
  const text = await readFile(file, 'utf8').catch(() => {
    throw new Error(
      `no pid file ${file}${run === undefined ? '' : `; the CLI printed:\n${run.stdout}${run.stderr}`}`,
    );
  });
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, number>);
}

async function waitForFile(file: string): Promise<void> {
  for (let i = 0; i < 2400; i += 1) {
    if ((await readFile(file, 'utf8').catch(() => '')).trim() !== '') return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${file}`);
}

describe.skipIf(process.platform !== 'linux')(
  'escapees: daemons, stale agents after kill -9, timer limits (issue 14 items 7, 8, 10)',
  { timeout: 300_000 },
  () => {
    it('a setsid daemon the agent starts, holding its stdout, does not hang the run and does not survive it', async () => {
      const dir = await makeProject({ ...FAST_TALLY, 'src/tally.js': BROKEN_TALLY });
      const pidFile = `${dir}-agent-pids.json`;
      const plan = await writePlan(dir, {
        weed: [{ result: DIRTY_WEED }],
        implement: [{ hang: true, daemon: true, pidFile }],
      });
      const { child, done } = startCli(
        [
          'run',
          DRIFT_GOAL,
          '--agent',
          'command',
          '--agent-command',
          plan.command,
          '--agent-timeout',
          '2',
          '--max-ticks',
          '2',
        ],
        dir,
      );
      const run = await done;
      const calls = await readPidLines(pidFile, run);
      const pids = calls.flatMap((c) => [c['agent']!, c['child']!, c['daemon']!]);
      expect(calls.every((c) => typeof c['daemon'] === 'number')).toBe(true);
      expect(await survivors(pids, child.pid!)).toEqual([]);
      expect(run.code).not.toBe(0);
      const ledger = await readLedger(dir, DRIFT_SLUG);
      expect(ledger['terminal'].state).not.toBe('converged');
      await recordFigure(
        'agent-daemon',
        `an agent's setsid daemon holding stdout: the run ended at the 2 s agent timeout (exit ${String(run.code)}), ${String(pids.length)} processes, 0 left by pid, group or marker`,
      );
    });

    it('a setsid daemon the test command starts does not survive the run', async () => {
      const dir = await makeProject({ ...FAST_TALLY, 'src/tally.js': BROKEN_TALLY });
      const pidFile = `${dir}-test-daemons`;
      await writeFile(
        join(dir, 'allium-loop.yaml'),
        `testCommand: "setsid sleep 300 & echo $! >> ${pidFile}; node test/check.mjs"\n`,
      );
      const plan = await writePlan(dir, {
        weed: [{ result: DIRTY_WEED }, { result: CLEAN_WEED }],
        implement: [{ write: { 'src/tally.js': FIXED_TALLY }, result: implementResult(['src/tally.js']) }],
      });
      const { child, done } = startCli(
        ['run', DRIFT_GOAL, '--agent', 'command', '--agent-command', plan.command],
        dir,
      );
      const run = await done;
      const daemons = (await readFile(pidFile, 'utf8').catch(() => ''))
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map(Number);
      expect(daemons.length, `${run.stdout}${run.stderr}`).toBeGreaterThan(0);
      expect(await survivors(daemons, child.pid!)).toEqual([]);
      expect(run.code).toBe(0);
      await recordFigure(
        'test-daemon',
        `${String(daemons.length)} setsid daemon(s) started by the test command, 0 left after the run (checked by pid, group and marker)`,
      );
    });

    it('a second Ctrl-C, while the first still waits for an agent that ignores SIGTERM, leaves no agent behind', async () => {
      const dir = await makeProject({ ...FAST_TALLY, 'src/tally.js': BROKEN_TALLY });
      const pidFile = `${dir}-stubborn-pids.json`;
      const plan = await writePlan(dir, {
        weed: [{ result: DIRTY_WEED }],
        implement: [{ hang: true, ignoreTerm: true, pidFile }],
      });
      const { child, done } = startCli(
        ['run', DRIFT_GOAL, '--agent', 'command', '--agent-command', plan.command, '--agent-timeout', '600'],
        dir,
      );
      await waitForFile(pidFile);
      let stderr = '';
      child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      // The first Ctrl-C sends the agent's group SIGTERM, which it ignores, and gives it 5 s before SIGKILL; the second,
      // as soon as the first is acknowledged, ends the engine at once: its exit hooks must kill the group.
      child.kill('SIGINT');
      while (!stderr.includes('cancelling')) await new Promise((resolve) => setTimeout(resolve, 20));
      child.kill('SIGINT');
      const run = await done;
      expect(run.signal, `${run.stdout}${run.stderr}`).toBe('SIGINT');
      const [call] = await readPidLines(pidFile, run);
      expect(await survivors([call!['agent']!, call!['child']!], child.pid!)).toEqual([]);
    });

    it('resume kills the agent (and its setsid daemon) that a kill -9 of the engine left running, before its first call', async () => {
      const dir = await makeProject({ ...FAST_TALLY, 'src/tally.js': BROKEN_TALLY });
      const pidFile = `${dir}-stale-pids.json`;
      const plan = await writePlan(dir, {
        weed: [{ result: DIRTY_WEED }, { result: CLEAN_WEED }],
        implement: [
          { hang: true, daemon: true, pidFile },
          { write: { 'src/tally.js': FIXED_TALLY }, result: implementResult(['src/tally.js']) },
        ],
      });
      const agent = ['--agent', 'command', '--agent-command', plan.command];
      const first = startCli(['run', DRIFT_GOAL, ...agent, '--agent-timeout', '600'], dir);
      await waitForFile(pidFile);
      first.child.kill('SIGKILL');
      const killed = await first.done;
      expect(killed.signal).toBe('SIGKILL');
      const [stale] = await readPidLines(pidFile);
      const pids = [stale!['agent']!, stale!['child']!, stale!['daemon']!];
      // kill -9 runs no exit hook: the dead engine's agent, its child and its daemon still run.
      expect(
        (await processes())
          .filter((p) => pids.includes(p.pid))
          .map((p) => p.pid)
          .sort(),
      ).toEqual([...pids].sort());
      const resumed = startCli(['resume', DRIFT_SLUG, ...agent], dir);
      const run = await resumed.done;
      expect(run.stdout).toContain('Took over the lease');
      expect(run.stdout).toMatch(/Killed \d+ process\(es\) the previous supervisor left running/);
      const announced = /Killed \d+ process\(es\)[^(]*\(pid ([\d, ]+)\)/.exec(run.stdout)?.[1] ?? '';
      for (const pid of pids) expect(announced.split(', ').map(Number)).toContain(pid);
      expect(await survivors(pids, first.child.pid!)).toEqual([]);
      expect(await survivors([], resumed.child.pid!)).toEqual([]);
      expect(run.code).toBe(0);
      expect(await plan.calls()).toEqual({ weed: 2, implement: 2 });
      await recordFigure(
        'stale-agent',
        `after kill -9 of the engine its agent, child and setsid daemon kept running; resume killed all ${String(pids.length)} before its first call and converged`,
      );
    });

    it.each([
      ['run', '--agent-timeout'],
      ['run', '--test-timeout'],
      ['run', '--wall-clock'],
      ['verify-mode', '--agent-timeout'],
    ])(
      '%s %s 3000000 (past the 2^31-1 ms timer limit) is a usage error, not a 1 ms timeout',
      async (mode, flag) => {
        const dir = await makeProject(FAST_TALLY);
        const plan = await writePlan(dir, { weed: [{ result: CLEAN_WEED }] });
        const args =
          mode === 'run'
            ? ['run', DRIFT_GOAL, '--agent', 'command', '--agent-command', plan.command, flag, '3000000']
            : [
                'run',
                'make the check pass',
                '--verify',
                'node test/check.mjs',
                '--agent',
                'command',
                '--agent-command',
                plan.command,
                flag,
                '3000000',
              ];
        const run = await runCli(args, dir);
        expect(run.code, `${run.stdout}${run.stderr}`).toBe(2);
        expect(run.stderr).toContain('longest timer Node can set');
        expect(await plan.calls()).toEqual({});
      },
    );
  },
);
