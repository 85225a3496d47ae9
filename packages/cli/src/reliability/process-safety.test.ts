import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  DRIFT_GOAL,
  DRIFT_SLUG,
  makeProject,
  readJournal,
  readLedger,
  runCli,
  startCli,
  type CliRun,
  type LooseJson,
} from '../e2e/e2e.test-helpers.js';
import {
  BROKEN_TALLY,
  CLEAN_WEED,
  DIRTY_WEED,
  FAST_TALLY,
  HANG_TESTS,
  exists,
  implementResult,
  recordFigure,
  writePlan,
} from './reliability.test-helpers.js';

const FIXED_TALLY = FAST_TALLY['src/tally.js']!;

/** Waits up to `ms` for every pid (and process group) to be gone; returns the ones still alive. */
async function survivors(pids: readonly number[], ms = 5000): Promise<number[]> {
  const until = Date.now() + ms;
  for (;;) {
    const alive = pids.filter((pid) => exists(pid));
    if (alive.length === 0 || Date.now() > until) return alive;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The pids the fixtures recorded, one JSON line per process they started; fails with the CLI's output if none. */
async function readPids(file: string, run: CliRun): Promise<Record<string, number>[]> {
  const text = await readFile(file, 'utf8').catch(() => {
    throw new Error(`no pid file ${file}; the CLI printed:\n${run.stdout}${run.stderr}`);
  });
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, number>);
}

describe.concurrent(
  'process safety: timeouts, leases, a stop right before the verdict',
  { timeout: 240_000 },
  () => {
    it('a hanging test command is killed at --test-timeout with its whole process group; the tick records unknown tests', async () => {
      const dir = await makeProject(FAST_TALLY);
      const pidFile = join(dir, '..', `${dir.split('/').pop() ?? 'x'}-test-pids.json`);
      const plan = await writePlan(dir, { weed: [{ result: CLEAN_WEED }] });
      const yaml = `testCommand: node ${HANG_TESTS} ${pidFile}\n`;
      await writeFile(join(dir, 'allium-loop.yaml'), yaml);
      const began = Date.now();
      const run = await runCli(
        [
          'run',
          DRIFT_GOAL,
          '--agent',
          'command',
          '--agent-command',
          plan.command,
          '--test-timeout',
          '2',
          '--max-ticks',
          '1',
        ],
        dir,
      );
      const elapsed = Date.now() - began;
      const runs = await readPids(pidFile, run);
      const all = runs.flatMap((p) => [p['runner']!, p['child']!, -p['runner']!]);
      expect(all.length).toBeGreaterThan(0);
      expect(await survivors(all)).toEqual([]);
      const ledger = await readLedger(dir, DRIFT_SLUG);
      expect(ledger['terminal'].state).not.toBe('converged');
      expect(run.code).not.toBe(0);
      const verdicts = ledger['verdicts'] as LooseJson[];
      expect(verdicts.length).toBeGreaterThan(0);
      expect(verdicts.every((v) => v['tests'].status !== 'known' || v['tests'].failed > 0)).toBe(true);
      await recordFigure(
        'hanging-tests',
        `test command killed at its 2 s timeout, ${String(all.length - runs.length)} processes and ${String(runs.length)} group(s), 0 left; run ended ${String(ledger['terminal'].state)} (exit ${String(run.code)}) in ${(elapsed / 1000).toFixed(1)} s`,
      );
    });

    it('a hanging agent is killed at --agent-timeout with its whole process group; the phase is failed and the caps stop the run', async () => {
      const dir = await makeProject({ ...FAST_TALLY, 'src/tally.js': BROKEN_TALLY });
      const pidFile = join(dir, '..', `${dir.split('/').pop() ?? 'x'}-agent-pids.json`);
      const plan = await writePlan(dir, {
        weed: [{ result: DIRTY_WEED }],
        implement: [{ hang: true, pidFile }],
      });
      const run = await runCli(
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
      const calls = await readPids(pidFile, run);
      const all = calls.flatMap((p) => [p['agent']!, p['child']!, -p['pgid']!]);
      expect(all.length).toBeGreaterThan(0);
      expect(await survivors(all)).toEqual([]);
      const journal = await readJournal(dir, DRIFT_SLUG);
      const failed = journal.filter((e) => e['type'] === 'phase_ended' && e['phase'] === 'implement');
      expect(failed.length).toBeGreaterThan(0);
      expect(failed.every((e) => e['outcome'] !== 'ok')).toBe(true);
      const ledger = await readLedger(dir, DRIFT_SLUG);
      expect(['max_ticks', 'no_progress', 'failed']).toContain(ledger['terminal'].state);
      expect(run.code).not.toBe(0);
      await recordFigure(
        'hanging-agent',
        `${String(failed.length)} hanging implement call(s) killed at the 2 s timeout, ${String(all.length - calls.length)} processes and ${String(calls.length)} group(s), 0 left; run ended ${String(ledger['terminal'].state)} (exit ${String(run.code)})`,
      );
    });

    it('two supervisors on one goal: exactly one runs, the other exits naming the holder; a killed holder is taken over', async () => {
      const dir = await makeProject({ ...FAST_TALLY, 'src/tally.js': BROKEN_TALLY });
      const plan = await writePlan(dir, {
        weed: [{ result: DIRTY_WEED }, { result: CLEAN_WEED }],
        implement: [{ write: { 'src/tally.js': FIXED_TALLY }, result: implementResult(['src/tally.js']) }],
      });
      const agent = ['--agent', 'command', '--agent-command', plan.command];
      const first = startCli(['run', DRIFT_GOAL, ...agent], dir);
      const second = startCli(['run', DRIFT_GOAL, ...agent], dir);
      const [a, b] = await Promise.all([first.done, second.done]);
      const codes = [a.code, b.code].sort();
      const loser = a.code === 0 ? b : a;
      expect(codes).toEqual([0, 1]);
      const started = (await readJournal(dir, DRIFT_SLUG)).filter((e) => e['type'] === 'run_started');
      expect(started).toHaveLength(1);
      expect(loser.stderr).toMatch(/already driven by pid \d+ on /);
      expect(loser.stderr).toContain(String(started[0]?.['pid']));
      expect(await plan.calls()).toEqual({ weed: 2, implement: 1 });
      await recordFigure(
        'two-supervisors',
        `1 of 2 concurrent supervisors ran; the other exited ${String(loser.code)}: "${loser.stderr.trim().split('\n')[0] ?? ''}"`,
      );
    });

    it('a stop after the last phase wrote its result but before the verdict: resume converges without re-running it', async () => {
      const dir = await makeProject({ ...FAST_TALLY, 'src/tally.js': BROKEN_TALLY });
      const plan = await writePlan(dir, {
        weed: [{ result: DIRTY_WEED }, { result: CLEAN_WEED, killParent: true }],
        implement: [{ write: { 'src/tally.js': FIXED_TALLY }, result: implementResult(['src/tally.js']) }],
      });
      const agent = ['--agent', 'command', '--agent-command', plan.command];
      const killed = await runCli(['run', DRIFT_GOAL, ...agent], dir);
      expect(killed.signal).toBe('SIGKILL');
      const before = await readJournal(dir, DRIFT_SLUG);
      expect(before.some((e) => e['type'] === 'terminal')).toBe(false);
      expect(before.filter((e) => e['type'] === 'verdict')).toHaveLength(1);
      const resumed = await runCli(['resume', DRIFT_SLUG, ...agent], dir);
      expect(resumed.stdout).toContain('Took over the lease');
      expect(resumed.code).toBe(0);
      expect(await plan.calls()).toEqual({ weed: 2, implement: 1 });
      const ledger = await readLedger(dir, DRIFT_SLUG);
      expect(ledger['terminal'].state).toBe('converged');
      await recordFigure(
        'stop-before-verdict',
        `resume converged; the last weed ran 1 time (not re-run), 3 agent calls in all`,
      );
    });
  },
);
