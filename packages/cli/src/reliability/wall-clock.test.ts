import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import {
  DRIFT_GOAL,
  DRIFT_SLUG,
  makeProject,
  readJournal,
  readLedger,
  startCli,
  type CliRun,
  type LooseJson,
} from '../e2e/e2e.test-helpers.js';
import { exists, FAST_TALLY, recordFigure, waitFor, writePlan } from './reliability.test-helpers.js';

/**
 * Issue 14 item 9: `--wall-clock 8` took 42 s because the cap was only checked between calls. Here the agent's one
 * call never ends by itself (it hangs with a child in its process group) and `--agent-timeout` is twenty minutes:
 * the only thing that can end the run is the wall clock enforced DURING the call. Before the fix these runs did not
 * end within the test's limit at all; no assertion here depends on how fast the machine is.
 */
const AGENT_TIMEOUT = ['--agent-timeout', '1200'];
/**
 * The cap: long enough for the run to reach its agent call (baseline, the tick's snapshot, the agent's start) on a
 * loaded machine, since a cap that passes before the agent wrote its pids leaves nothing to check the kill of.
 */
const WALL_CLOCK_S = 20;

/** The hanging agent's pid, its child's and its group (negative), once it wrote them; fails if the run ended first. */
async function hangingAgentPids(pidFile: string, run: { done: Promise<CliRun> }): Promise<number[]> {
  let ended: CliRun | undefined;
  void run.done.then((result) => (ended = result));
  await waitFor(
    async () => ended !== undefined || (await readFile(pidFile, 'utf8').catch(() => '')).trim() !== '',
    120_000,
  );
  const text = await readFile(pidFile, 'utf8').catch(() => {
    throw new Error(
      `the hanging agent never started${ended === undefined ? '' : `; the run ended:\n${ended.stdout}${ended.stderr}`}`,
    );
  });
  const line = JSON.parse(text.trim().split('\n')[0]!) as Record<string, number>;
  return [line['agent']!, line['child']!, -line['pgid']!];
}

/** Waits (up to a minute, for the kernel) until none of the pids / groups (negative) exists; returns those left. */
async function leftAlive(pids: readonly number[]): Promise<number[]> {
  await waitFor(() => Promise.resolve(pids.every((pid) => !exists(pid))), 60_000);
  return pids.filter((pid) => exists(pid));
}

function expectTimedOut(run: CliRun, ledger: LooseJson): void {
  expect(run.code, `${run.stdout}${run.stderr}`).toBe(6);
  expect(ledger['terminal'].state).toBe('timed_out');
  expect(String(ledger['terminal'].detail)).toContain('wall-clock');
}

const CASES = [
  { name: 'spec loop', phase: 'weed', slug: DRIFT_SLUG, args: ['run', DRIFT_GOAL] },
  {
    name: 'verify mode',
    phase: 'step',
    slug: 'make-the-check-pass',
    args: ['run', 'make the check pass', '--verify', 'test -f done.txt'],
  },
];

describe(
  'reliability: the wall clock is enforced during a call (issue 14 item 9)',
  { timeout: 300_000 },
  () => {
    it.each(CASES)(
      `$name: --wall-clock ${String(WALL_CLOCK_S)} with an agent that never returns ends timed_out, the agent group killed`,
      async ({ name, phase, slug, args }) => {
        const dir = await makeProject(FAST_TALLY);
        const pidFile = `${dir}-hang-pids.json`;
        const plan = await writePlan(dir, { [phase]: [{ hang: true, pidFile }] });
        const agent = ['--agent', 'command', '--agent-command', plan.command];
        const started = startCli(
          [...args, ...agent, '--wall-clock', String(WALL_CLOCK_S), ...AGENT_TIMEOUT],
          dir,
        );
        const pids = await hangingAgentPids(pidFile, started);
        const run = await started.done;
        const ledger = await readLedger(dir, slug);
        expectTimedOut(run, ledger);
        expect(await plan.calls()).toEqual({ [phase]: 1 });
        expect(await leftAlive(pids)).toEqual([]);
        const journal = await readJournal(dir, slug);
        expect(journal.filter((e) => e['type'] === 'terminal').at(-1)).toMatchObject({ state: 'timed_out' });
        await recordFigure(
          `wall-clock-${phase}`,
          `${name}, --wall-clock ${String(WALL_CLOCK_S)}, agent hanging with a 20 min agent timeout: ended timed_out after ${String(Math.round(ledger['spent'].wallMs / 1000))} s of wall clock, the agent's group killed`,
        );
      },
    );
  },
);
