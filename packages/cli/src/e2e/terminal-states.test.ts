import { describe, expect, it } from 'vitest';
import {
  DRIFT_GOAL,
  DRIFT_SLUG,
  TALLY_PROJECT,
  idleImplement,
  makeProject,
  readJournal,
  readLedger,
  runCli,
  startCli,
  weedStep,
  writeScript,
} from './e2e.test-helpers.js';

/** Runs the drift goal (entry: weed) on the tally project with a replay script and extra flags. */
async function drift(steps: Record<string, unknown>[], flags: string[]) {
  const dir = await makeProject(TALLY_PROJECT);
  const script = await writeScript(dir, steps);
  const run = await runCli(['run', DRIFT_GOAL, '--agent', 'replay', '--agent-script', script, ...flags], dir);
  return { dir, run, ledger: await readLedger(dir, DRIFT_SLUG) };
}

describe('terminal states, through the CLI as a child process', () => {
  it('converged: exit 0 when weed is clean and the tests pass', async () => {
    const { run, ledger } = await drift([weedStep(false)], []);
    expect(run.stdout).toContain('Starting with weed');
    expect(run.stdout).toMatch(/tick 1 · tests 1\/1 · weed clean/);
    expect(run.code).toBe(0);
    expect(ledger['terminal'].state).toBe('converged');
  });

  it('max_ticks: stops at exactly the tick cap, exit 3', async () => {
    const { run, ledger } = await drift(
      [weedStep(true, { repeat: true }), idleImplement({ repeat: true })],
      ['--max-ticks', '2'],
    );
    expect(run.code).toBe(3);
    expect(ledger['terminal'].state).toBe('max_ticks');
    expect(ledger['verdicts']).toHaveLength(2);
  });

  it('no_progress: an unchanged fingerprint for 2 ticks stops the run, exit 4', async () => {
    const { run, ledger } = await drift(
      [weedStep(true, { repeat: true }), idleImplement({ repeat: true })],
      ['--max-ticks', '10'],
    );
    expect(run.code).toBe(4);
    expect(ledger['terminal'].state).toBe('no_progress');
    expect(ledger['verdicts']).toHaveLength(3);
  });

  it.each([
    { budget: '0.10', calls: 2, spent: 0.1 },
    { budget: '0.09', calls: 1, spent: 0.05 },
  ])(
    'budget_exhausted: budget $budget with $0.05 calls → $calls call(s) run, exit 7',
    async ({ budget, calls, spent }) => {
      const { run, ledger } = await drift(
        [weedStep(true, { repeat: true, costUsd: 0.05 }), idleImplement({ repeat: true, costUsd: 0.05 })],
        ['--max-ticks', '10', '--budget-usd', budget, '--max-call-usd', '0.05'],
      );
      expect(run.code).toBe(7);
      expect(ledger['terminal'].state).toBe('budget_exhausted');
      expect(ledger['spent'].agentCalls).toBe(calls);
      expect(ledger['spent'].usd).toBeCloseTo(spent);
    },
  );

  it('timed_out: the wall-clock cap stops the run before the next call, exit 6', async () => {
    const { run, ledger } = await drift(
      [weedStep(true, { repeat: true, delayMs: 2500 }), idleImplement({ repeat: true })],
      ['--wall-clock', '2'],
    );
    expect(run.code).toBe(6);
    expect(ledger['terminal'].state).toBe('timed_out');
    // However slow the machine, no call starts once 2 s have passed: at most the first weed ran.
    expect(ledger['spent'].agentCalls).toBeLessThanOrEqual(1);
    expect(ledger['spent'].wallMs).toBeGreaterThanOrEqual(2000);
  });

  it('cancelled: SIGINT ends the run as cancelled with exit 130, the agent killed and the ledger intact', async () => {
    const dir = await makeProject(TALLY_PROJECT);
    const script = await writeScript(dir, [weedStep(false, { delayMs: 600_000 })]);
    const { child, done } = startCli(['run', DRIFT_GOAL, '--agent', 'replay', '--agent-script', script], dir);
    for (let i = 0; i < 3000; i += 1) {
      const started = await readJournal(dir, DRIFT_SLUG).catch(() => []);
      if (started.some((e) => e['type'] === 'phase_started' && e['phase'] === 'weed')) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const began = Date.now();
    child.kill('SIGINT');
    const run = await done;
    expect(run.code).toBe(130);
    // The call would take ten minutes: ending well before that shows it was aborted, on a machine of any speed.
    expect(Date.now() - began).toBeLessThan(120_000);
    const ledger = await readLedger(dir, DRIFT_SLUG);
    expect(ledger['terminal'].state).toBe('cancelled');
    const journal = await readJournal(dir, DRIFT_SLUG);
    expect(journal.at(-1)?.['type']).toBe('terminal');
  });

  it('a malformed allium-loop.yaml is a clear error (exit 2) and nothing is written', async () => {
    const dir = await makeProject({
      ...TALLY_PROJECT,
      'allium-loop.yaml': 'testCommand: node --test\ncaps:\n  maxTick: 3\n',
    });
    const run = await runCli(
      ['run', DRIFT_GOAL, '--agent', 'replay', '--agent-script', '/nonexistent.json'],
      dir,
    );
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('caps: Unrecognized key: "maxTick"');
    await expect(readLedger(dir, DRIFT_SLUG)).rejects.toThrow();
  });

  it('an unknown flag and a bad cap value are usage errors with clear messages', async () => {
    const dir = await makeProject(TALLY_PROJECT);
    const unknown = await runCli(['run', DRIFT_GOAL, '--frobnicate'], dir);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("Unknown option '--frobnicate'");
    const bad = await runCli(['run', DRIFT_GOAL, '--max-ticks', 'many'], dir);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--max-ticks takes a positive whole number');
  });
});

describe('port failures, through the CLI as a child process', () => {
  const MISSING = 'allium-loop-no-such-agent-binary';

  it('failed: an agent that cannot be started ends the run with its code, hint and cause in the output and the ledger', async () => {
    const dir = await makeProject(TALLY_PROJECT);
    const run = await runCli(
      ['run', DRIFT_GOAL, '--agent', 'command', '--agent-command', `${MISSING} {phase}`],
      dir,
    );
    expect(run.code, `${run.stdout}${run.stderr}`).toBe(1);
    const ledger = await readLedger(dir, DRIFT_SLUG);
    expect(ledger['terminal'].state).toBe('failed');
    const error = ledger['terminal'].error;
    expect(error.code).toBe('agents.binary_not_found');
    expect(run.stdout).toContain(`[${String(error.code)}]`);
    expect(typeof error.hint).toBe('string');
    expect(run.stdout).toContain(String(error.hint));
    expect(run.stdout).toContain(`caused by: ${String(error.cause)}`);
    const journal = await readJournal(dir, DRIFT_SLUG);
    expect(journal.find((e) => e['type'] === 'terminal')).toMatchObject({ state: 'failed', error });
  });

  it('failed: the same in verify mode', async () => {
    const dir = await makeProject(TALLY_PROJECT);
    const run = await runCli(
      [
        'run',
        'make it pass',
        '--verify',
        'test -f done.txt',
        '--agent',
        'command',
        '--agent-command',
        `${MISSING} {phase}`,
      ],
      dir,
    );
    expect(run.code, `${run.stdout}${run.stderr}`).toBe(1);
    const ledger = await readLedger(dir, 'make-it-pass');
    expect(ledger['terminal']).toMatchObject({ state: 'failed', error: { code: 'agents.binary_not_found' } });
    expect(run.stdout).toContain('[agents.binary_not_found]');
    expect(run.stdout).toContain(`caused by: ${String(ledger['terminal'].error.cause)}`);
  });
});
