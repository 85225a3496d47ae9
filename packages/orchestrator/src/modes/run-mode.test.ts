import { mkdtemp, readFile, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AlliumLoopError } from '@allium-loop/errors';
import { FakeAgentRunner, type FakeAgentScript } from '@allium-loop/agents/testing';
import type { Caps } from '@allium-loop/ledger';
import { describe, expect, it } from 'vitest';
import type { ModeProgress } from './mode-context.js';
import { resumeModeRun, startModeRun, type ModeRunSettings } from './run-mode.js';

const MINUTE = 60_000;

function harness(responses: FakeAgentScript[], caps: Partial<Caps> = {}, controller = new AbortController()) {
  let offset = 0;
  const sleeps: number[] = [];
  const lines: string[] = [];
  const agent = new FakeAgentRunner(responses);
  const settings = (cwd: string): ModeRunSettings => ({
    cwd,
    agent: { kind: 'command', argv: ['unused'] },
    caps,
    env: { PATH: process.env['PATH'] },
    signal: controller.signal,
    clock: { now: () => Date.now() + offset },
    sleep: async (ms) => {
      sleeps.push(ms);
      offset += ms;
    },
    createAgent: () => agent,
    onProgress: (progress: ModeProgress) => {
      if (progress.kind === 'line') lines.push(progress.text);
    },
  });
  return { settings, sleeps, lines, agent };
}

async function journalTypes(cwd: string): Promise<{ type: string; data?: Record<string, unknown> }[]> {
  const dir = join(cwd, '.allium-loop');
  const file = (await readdir(dir)).find((name) => name.endsWith('.events.ndjson'))!;
  return (await readFile(join(dir, file), 'utf8'))
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { type: string });
}

const verify = (command: string) => ({
  mode: 'verify' as const,
  config: { command, intervalMs: 0 },
  defaultCaps: { maxTicks: 5 },
});

describe('mode runs: rate limits, caps and cancellation', () => {
  it('waits out a rate limit until its reset time without burning a tick', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'modes-rate-'));
    const responses: FakeAgentScript[] = [
      { outcome: { outcome: 'rate_limited', rateLimitResetAt: Date.now() + 30 * MINUTE, detail: '429' } },
      { files: { 'ok.txt': 'ok\n' } },
    ];
    const run = harness(responses);
    const outcome = await startModeRun('make ok', verify('test -f ok.txt'), run.settings(cwd));
    expect(outcome.exitCode).toBe(0);
    expect(outcome.ledger).toMatchObject({ tick: 1, spent: { agentCalls: 2, ticks: 1 } });
    expect(run.sleeps).toHaveLength(1);
    expect(run.sleeps[0]).toBeGreaterThan(29 * MINUTE);
    expect(run.lines.some((line) => line.startsWith('rate limited by fake; waiting until'))).toBe(true);
    expect(outcome.ledger.spent.wallMs).toBeGreaterThanOrEqual(29 * MINUTE);
    const wait = (await journalTypes(cwd)).find((e) => e.type === 'x-verify.rate_limit_wait');
    expect(wait?.data).toMatchObject({ kind: 'waited', resetKnown: true, agent: 'fake' });
  });

  it('ends timed_out when the reset lies beyond the wall-clock cap, having waited only until the cap', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'modes-rate-'));
    const run = harness(
      [{ outcome: { outcome: 'rate_limited', rateLimitResetAt: Date.now() + 60 * MINUTE } }],
      {
        wallClockMs: 10 * MINUTE,
      },
    );
    const outcome = await startModeRun('make ok', verify('test -f ok.txt'), run.settings(cwd));
    expect(outcome.exitCode).toBe(6);
    expect(outcome.ledger.terminal).toMatchObject({ state: 'timed_out' });
    expect(run.sleeps[0]).toBeLessThanOrEqual(10 * MINUTE);
    expect(run.sleeps[0]).toBeGreaterThan(9 * MINUTE);
  });

  it('stops no_progress when the command output does not change', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'modes-stall-'));
    const run = harness([{}], { noProgressTicks: 2 });
    const outcome = await startModeRun('never', verify('echo same; exit 1'), run.settings(cwd));
    expect(outcome.exitCode).toBe(4);
    expect(outcome.ledger.tick).toBe(3);
    expect(outcome.summary.split('\n').filter((line) => /^\d/.test(line))).toHaveLength(4);
  });

  it('ends cancelled (exit 130) when the signal fires during a tick, and resumes from the ledger', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'modes-cancel-'));
    const controller = new AbortController();
    const run = harness([{ effect: () => controller.abort() }], {}, controller);
    const outcome = await startModeRun('make ok', verify('test -f ok.txt'), run.settings(cwd));
    expect(outcome.exitCode).toBe(130);
    const again = harness([{ files: { 'ok.txt': 'ok\n' } }]);
    const resumed = await resumeModeRun(outcome.ledger.slug, again.settings(cwd));
    expect(resumed.exitCode).toBe(0);
    expect(resumed.ledger.tick).toBe(2);
    const types = (await journalTypes(cwd)).map((e) => e.type);
    expect(types.filter((t) => t === 'run_started')).toHaveLength(2);
    expect(types.filter((t) => t === 'x-verify.baseline')).toHaveLength(1);
  });

  it('passes the remaining budget to the agent and stops when it is spent', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'modes-budget-'));
    const run = harness([{ outcome: { costUsd: 0.6 } }], { budgetUsd: 1 });
    const outcome = await startModeRun('never', verify('date +%N; exit 1'), run.settings(cwd));
    expect(outcome.exitCode).toBe(7);
    expect(run.agent.calls.map((call) => call.budgetUsd)).toEqual([1, expect.closeTo(0.4, 5)]);
  });

  it("reserves the worst case of the agent's model in the budget pre-flight by default; --max-call-usd overrides it", async () => {
    // The claude agent's default model reserves $1.56 a call: after $0.60 of a $2 budget the next call does not fit.
    const cwd = await mkdtemp(join(tmpdir(), 'modes-reserve-'));
    const run = harness([{ outcome: { costUsd: 0.6 } }], { budgetUsd: 2 });
    const claude = { ...run.settings(cwd), agent: { kind: 'claude' } };
    const reserved = await startModeRun('never', verify('date +%N; exit 1'), claude);
    expect(reserved.ledger.caps.reserveUsd).toBeCloseTo(1.56, 6);
    expect(reserved.ledger.terminal).toMatchObject({ state: 'budget_exhausted' });
    expect(reserved.ledger.terminal?.detail).toContain("up to $1.56 (reserved from the model's price table)");
    expect(run.agent.calls).toHaveLength(1);
    // An explicit ceiling of $0.50 replaces the reservation: three calls fit ($0.60 each, the last leaving $0.20).
    const cwd2 = await mkdtemp(join(tmpdir(), 'modes-reserve-'));
    const ceiling = harness([{ outcome: { costUsd: 0.6 } }], { budgetUsd: 2, maxCallUsd: 0.5 });
    await startModeRun('never', verify('date +%N; exit 1'), {
      ...ceiling.settings(cwd2),
      agent: { kind: 'claude' },
    });
    expect(ceiling.agent.calls).toHaveLength(3);
  });

  it('refuses to replace a run of the same goal in another mode, and restarts one whose settings changed', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'modes-slug-'));
    const run = harness([{}], { maxTicks: 1 });
    await startModeRun('shared goal', verify('exit 1'), run.settings(cwd));
    const stateFile = { mode: 'state-file' as const, config: { path: join(cwd, 's.json') }, defaultCaps: {} };
    await expect(startModeRun('shared goal', stateFile, run.settings(cwd))).rejects.toMatchObject({
      code: 'modes.slug_taken',
    });
    const lines: string[] = [];
    const again = await startModeRun('shared goal', verify('exit 2'), {
      ...run.settings(cwd),
      announce: (line) => lines.push(line),
    });
    expect(lines[0]).toContain('replacing the ended run of the same goal');
    // Bounds are cumulative per goal: the tick the first run used counts, so the cap of 1 is reached at once.
    expect(lines[1]).toContain('Bounds are cumulative per goal: this run goes on from the 1 tick(s)');
    expect(again.ledger).toMatchObject({ tick: 1, terminal: { state: 'max_ticks' } });
  });

  it('bounds are cumulative per goal: a shell loop of re-runs stays bounded; larger caps or fresh raise it', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'modes-bounds-'));
    const run = harness([{ outcome: { costUsd: 0.25 } }], { maxTicks: 2 });
    const goal = 'never passes';
    const spec = verify('date +%N; exit 1');
    // `while ! allium-loop run "never passes" --verify … --max-ticks 2; do :; done`, five times round.
    const outcomes = [];
    for (let round = 0; round < 5; round += 1)
      outcomes.push(await startModeRun(goal, spec, run.settings(cwd)));
    expect(outcomes.map((o) => o.ledger.terminal?.state)).toEqual(Array(5).fill('max_ticks'));
    expect(run.agent.calls).toHaveLength(2);
    const last = outcomes.at(-1)!.ledger;
    expect(last).toMatchObject({ tick: 2, spent: { ticks: 2, agentCalls: 2, usd: 0.5 } });
    expect(last.history.filter((h) => h.kind === 'bounds_carried')).toHaveLength(4);
    // The budget is cumulative too: $0.50 spent of a $0.50 budget leaves no call.
    await startModeRun(goal, spec, { ...run.settings(cwd), caps: { maxTicks: 10, budgetUsd: 0.5 } });
    expect(run.agent.calls).toHaveLength(2);
    // The caps carry over too (the budget of the last run stands); deliberately larger caps give exactly the
    // ticks above what was used.
    const raised = await startModeRun(goal, spec, {
      ...run.settings(cwd),
      caps: { maxTicks: 3, budgetUsd: 1 },
    });
    expect(raised.ledger).toMatchObject({ tick: 3, terminal: { state: 'max_ticks' } });
    expect(run.agent.calls).toHaveLength(3);
    // --fresh starts the goal's bounds from zero.
    const fresh = await startModeRun(goal, spec, { ...run.settings(cwd), fresh: true });
    expect(fresh.ledger).toMatchObject({ tick: 2, spent: { ticks: 2, agentCalls: 2 } });
    expect(run.agent.calls).toHaveLength(5);
  });

  it('waits --interval between ticks, on the run clock', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'modes-interval-'));
    const run = harness([{}, { files: { 'ok.txt': 'ok\n' } }]);
    const spec = {
      mode: 'verify' as const,
      config: { command: 'test -f ok.txt', intervalMs: 5_000 },
      defaultCaps: {},
    };
    const outcome = await startModeRun('make ok', spec, run.settings(cwd));
    expect(outcome.exitCode).toBe(0);
    expect(run.sleeps).toEqual([5_000]);
    expect(run.lines).toContain('waiting 5 s before tick 2');
  });
});

describe('mode runs: port failures', () => {
  /** The fake agent, except that its first `throwing` calls reject with `error()` (a port failure). */
  function failing(run: ReturnType<typeof harness>, throwing: number, error: () => Error) {
    let left = throwing;
    return (cwd: string): ModeRunSettings => ({
      ...run.settings(cwd),
      backoff: { baseMs: 1_000, maxMs: 60_000, maxAttempts: 3 },
      createAgent: () => ({
        name: 'fake',
        run: async (request) => {
          if (left > 0) {
            left -= 1;
            throw error();
          }
          return run.agent.run(request);
        },
      }),
    });
  }
  const transient = () =>
    new AlliumLoopError('could not start the agent', {
      code: 'agents.spawn_failed',
      retryable: true,
      cause: new Error('EAGAIN'),
    });

  it('retries a retryable failure with backoff and converges', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'modes-retry-'));
    const run = harness([{ files: { 'ok.txt': 'ok\n' } }]);
    const outcome = await startModeRun('make ok', verify('test -f ok.txt'), failing(run, 2, transient)(cwd));
    expect(outcome.exitCode).toBe(0);
    expect(run.sleeps).toEqual([1_000, 2_000]);
    expect(outcome.ledger.intents.map((i) => i.outcome?.status)).toEqual(['failed', 'failed', 'succeeded']);
  });

  it('a non-retryable failure stops `failed` with its code, hint and cause in the ledger and the journal', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'modes-fatal-'));
    const run = harness([{ files: { 'ok.txt': 'ok\n' } }]);
    const missing = () =>
      new AlliumLoopError("agent executable 'claude' was not found on PATH", {
        code: 'agents.binary_not_found',
        hint: 'Install it.',
        cause: new Error('spawn claude ENOENT'),
      });
    const outcome = await startModeRun('make ok', verify('test -f ok.txt'), failing(run, 1, missing)(cwd));
    expect(outcome.exitCode).toBe(1);
    expect(run.sleeps).toEqual([]);
    const error = { code: 'agents.binary_not_found', hint: 'Install it.', cause: 'spawn claude ENOENT' };
    expect(outcome.ledger.terminal).toMatchObject({ state: 'failed', error });
    expect(outcome.ledger.terminal?.detail).toContain('[agents.binary_not_found]. Install it.');
    const terminal = (await journalTypes(cwd)).find((e) => e.type === 'terminal');
    expect(terminal).toMatchObject({ state: 'failed', error });
  });

  it('a retryable failure that persists ends `failed` after the tries, never looping', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'modes-persist-'));
    const run = harness([{ files: { 'ok.txt': 'ok\n' } }]);
    const outcome = await startModeRun('make ok', verify('test -f ok.txt'), failing(run, 99, transient)(cwd));
    expect(outcome.ledger.terminal).toMatchObject({
      state: 'failed',
      error: { code: 'agents.spawn_failed' },
    });
    expect(run.sleeps).toEqual([1_000, 2_000]);
  });
});
