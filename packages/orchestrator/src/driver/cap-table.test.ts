import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { AgentRunner, AgentRunRequest, AgentRunResult } from '@allium-loop/agents';
import { DEFAULT_POLICY } from '@allium-loop/evaluator';
import {
  createFileLedgerStore,
  createLedger,
  type JournalEvent,
  type Ledger,
  type TerminalState,
} from '@allium-loop/ledger';
import { describe, expect, it } from 'vitest';
import type { LoopCaps, LoopPhase } from '../decide/loop-state.js';
import type { ModeSpec } from '../modes/mode-spec.js';
import { resumeModeRun, startModeRun } from '../modes/run-mode.js';
import { reopenRun } from '../runs/reopen-run.js';
import type { LoopPorts, PhaseReport } from './loop-ports.js';
import { runLoop } from './run-loop.js';

/**
 * The cap table: every cap case runs against every loop program (the spec loop of `decide`, `--verify`,
 * `--stories`, `--state-file`) through the one driver, and must end the same way. Nothing here depends on machine
 * speed: the clock is frozen (only the wall-clock timer of a call can end it), sleeps are recorded, not slept.
 */

const MINUTE = 60_000;

/** What the agent does on its n-th call (0-based). */
interface CallScript {
  /** Hang until the call's signal fires (a wall-clock deadline or Ctrl-C). */
  readonly hang?: boolean;
  /** Abort the run's controller as the call starts (Ctrl-C during a call). */
  readonly cancel?: boolean;
  readonly rateLimitedUntil?: number;
  readonly costUsd?: number;
}

interface CallSeen {
  readonly phase: string;
  readonly budgetUsd: number | undefined;
  aborted: boolean;
}

interface Scenario {
  readonly caps: Partial<LoopCaps>;
  /** The program's own notion of "stuck": nothing the agent does changes what is measured. */
  readonly stuck?: boolean;
  readonly script: (n: number) => CallScript;
}

interface Harness {
  readonly controller: AbortController;
  readonly calls: CallSeen[];
  readonly sleeps: number[];
  readonly clock: { now(): number };
  readonly sleep: (ms: number) => Promise<void>;
  /** Plays the scenario's script for one call; resolves once the call is over. */
  call(phase: string, budgetUsd: number | undefined, signal: AbortSignal): Promise<CallScript>;
}

function harness(scenario: Scenario, controller = new AbortController()): Harness {
  let offset = 0;
  const calls: CallSeen[] = [];
  const sleeps: number[] = [];
  const start = Date.parse('2026-01-01T00:00:00Z');
  return {
    controller,
    calls,
    sleeps,
    clock: { now: () => start + offset },
    sleep: async (ms) => {
      sleeps.push(ms);
      offset += ms;
    },
    async call(phase, budgetUsd, signal) {
      const seen: CallSeen = { phase, budgetUsd, aborted: false };
      calls.push(seen);
      const script = scenario.script(calls.length - 1);
      if (script.cancel === true) controller.abort();
      if (script.hang === true || script.cancel === true) {
        await new Promise<void>((resolve, reject) => {
          const guard = setTimeout(() => reject(new Error('the call was never aborted')), 120_000);
          const done = () => (clearTimeout(guard), resolve());
          if (signal.aborted) done();
          else signal.addEventListener('abort', done, { once: true });
        });
        seen.aborted = true;
      }
      return script;
    },
  };
}

interface ProgramRun {
  readonly ledger: Ledger;
}

interface Program {
  readonly name: string;
  /** Starts a run, or (with `resumeOf`) resumes the one the previous call left in `cwd`. */
  run(scenario: Scenario, h: Harness, cwd: string, resume: boolean): Promise<ProgramRun>;
}

function agentResult(script: CallScript, aborted: boolean): AgentRunResult {
  if (aborted)
    return { outcome: 'aborted', exitCode: null, signal: 'SIGTERM', durationMs: 1, transcriptPath: '' };
  if (script.rateLimitedUntil !== undefined)
    return {
      outcome: 'rate_limited',
      exitCode: 1,
      signal: null,
      durationMs: 1,
      transcriptPath: '',
      rateLimitResetAt: script.rateLimitedUntil,
    };
  return {
    outcome: 'ok',
    exitCode: 0,
    signal: null,
    durationMs: 1,
    transcriptPath: '',
    ...(script.costUsd === undefined ? {} : { costUsd: script.costUsd }),
  };
}

/** An agent runner for the mode programs: plays the script, then `act` edits the project. */
function modeAgent(h: Harness, act: (request: AgentRunRequest, n: number) => Promise<void>): AgentRunner {
  return {
    name: 'scripted',
    async run(request) {
      const script = await h.call(request.phase, request.budgetUsd, request.signal!);
      const aborted = h.calls.at(-1)!.aborted;
      if (!aborted && script.rateLimitedUntil === undefined) await act(request, h.calls.length);
      return agentResult(script, aborted);
    },
  };
}

async function write(path: string, text: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, text);
}

function modeProgram(
  name: string,
  spec: (cwd: string, scenario: Scenario) => Promise<ModeSpec>,
  act: (scenario: Scenario) => (request: AgentRunRequest, n: number) => Promise<void>,
): Program {
  return {
    name,
    async run(scenario, h, cwd, resume) {
      const settings = {
        cwd,
        agent: { kind: 'command', argv: ['unused'] },
        caps: scenario.caps,
        env: { PATH: process.env['PATH'] },
        signal: h.controller.signal,
        clock: h.clock,
        sleep: h.sleep,
        createAgent: () => modeAgent(h, act(scenario)),
      };
      if (resume) {
        const slug = (await readFile(join(cwd, 'slug'), 'utf8')).trim();
        return { ledger: (await resumeModeRun(slug, settings)).ledger };
      }
      const outcome = await startModeRun(`cap table ${name}`, await spec(cwd, scenario), settings);
      await writeFile(join(cwd, 'slug'), outcome.ledger.slug);
      return { ledger: outcome.ledger };
    },
  };
}

const verifyProgram = modeProgram(
  'verify',
  async (_cwd, scenario) => ({
    mode: 'verify',
    // Stuck: the same output every tick; otherwise the output names the agent's latest call.
    config: { command: scenario.stuck === true ? 'exit 1' : 'cat calls.txt; exit 1', intervalMs: 0 },
    defaultCaps: {},
  }),
  () => async (request, n) => write(join(request.cwd, 'calls.txt'), `${String(n)}\n`),
);

const storiesProgram = modeProgram(
  'stories',
  async (cwd, scenario) => {
    const prd = {
      userStories: [
        { id: 'US-1', title: 'Export', priority: 1, passes: false, acceptanceCriteria: ['a CSV file'] },
      ],
    };
    await write(join(cwd, 'prd.json'), JSON.stringify(prd));
    return {
      mode: 'stories',
      // Stuck: two rejections block the only story.
      config: {
        prdPath: join(cwd, 'prd.json'),
        skipEval: false,
        evalRetries: scenario.stuck === true ? 2 : 50,
      },
      defaultCaps: {},
    };
  },
  () => async (request, n) => {
    if (request.phase === 'evaluate')
      await write(
        request.resultFile,
        JSON.stringify({ verdict: 'REJECT', reason: `not yet (${String(n)})` }),
      );
  },
);

const stateFileProgram = modeProgram(
  'state-file',
  async (cwd) => ({ mode: 'state-file', config: { path: join(cwd, '.al-state.json') }, defaultCaps: {} }),
  (scenario) => async (request, n) => {
    if (scenario.stuck === true) return;
    const path = join(request.cwd, '.al-state.json');
    const state = JSON.parse(await readFile(path, 'utf8')) as Record<string, unknown>;
    await writeFile(path, JSON.stringify({ ...state, status: 'in_progress', progress: `step ${String(n)}` }));
  },
);

/** The spec loop of `decide`, on scripted ports: weed always finds a divergence and the tests never all pass. */
const specProgram: Program = {
  name: 'spec',
  async run(scenario, h, cwd, resume) {
    const store = createFileLedgerStore({ dir: join(cwd, '.allium-loop') });
    const { lease } = await store.acquire('cap-table');
    let ledger: Ledger;
    if (resume) {
      const loaded = await store.load('cap-table');
      if (!loaded.ok) throw new Error('no ledger to resume');
      // The reopening `resumeRun` does for a cancelled run.
      const reopened = reopenRun(loaded.value.ledger);
      if (reopened === undefined) throw new Error('the run cannot be reopened');
      ledger = reopened;
    } else {
      ledger = createLedger({
        goal: 'cap table',
        slug: 'cap-table',
        mode: 'spec',
        now: new Date(h.clock.now()),
      });
      await store.save(lease, ledger);
    }
    let measured = 0;
    const ports: LoopPorts = {
      async runPhase(request) {
        const script = await h.call(request.phase, request.budgetUsd, request.signal);
        const result = agentResult(script, h.calls.at(-1)!.aborted);
        const ok = result.outcome === 'ok';
        const report: PhaseReport = {
          observation: {
            kind: 'phase_done',
            phase: request.phase as LoopPhase,
            ok,
            ...(ok ? {} : { detail: result.outcome }),
            ...(result.costUsd === undefined ? {} : { costUsd: result.costUsd }),
            ...(request.phase === 'weed'
              ? {
                  divergences: [
                    { construct: 'rule:R', classification: 'code-bug' as const, detail: 'still wrong' },
                  ],
                }
              : {}),
          },
          events: [],
          questions: [],
          costKnown: result.costUsd !== undefined,
          durationMs: 1,
          ...(result.outcome === 'rate_limited'
            ? { rateLimited: { resetAt: result.rateLimitResetAt! } }
            : {}),
        };
        return report;
      },
      redCheck: async () => ({ passing: [], failing: [] }),
      async measure() {
        measured += 1;
        // Stuck: the same measurement every tick; otherwise one more test passes each time.
        const passed = scenario.stuck === true ? 1 : measured;
        return {
          observation: {
            kind: 'measured',
            measurement: {
              tests: {
                counts: 'known',
                passed,
                failed: 1,
                skipped: 0,
                failing: [`t${String(scenario.stuck === true ? 0 : measured)}`],
                exitCode: 1,
              },
              structuralErrors: 0,
              openQuestions: { blocking: 0, parked: 0 },
            },
          },
          structuralMessages: [],
          git: { head: null, tree: null },
        };
      },
      reconcile: async () => undefined,
    };
    const caps: LoopCaps = {
      maxTicks: 6,
      noProgressTicks: 50,
      maxFixAttempts: 50,
      innerLoopMax: 1,
      phaseRetries: 0,
      ...scenario.caps,
    };
    const final = await runLoop({
      store,
      lease,
      ledger,
      config: { entry: 'weed', mode: 'spec-first', caps, policy: DEFAULT_POLICY, interactive: false },
      ports,
      clock: h.clock,
      signal: h.controller.signal,
      sleep: h.sleep,
    });
    await store.release(lease);
    return { ledger: final };
  },
};

const PROGRAMS: readonly Program[] = [specProgram, verifyProgram, storiesProgram, stateFileProgram];

/** Caps that keep every program going unless the case under test stops it. */
const LOOSE: Partial<LoopCaps> = { maxTicks: 6, noProgressTicks: 50 };

async function project(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'cap-table-'));
}

async function journal(cwd: string, slug: string): Promise<JournalEvent[]> {
  const text = await readFile(join(cwd, '.allium-loop', `${slug}.events.ndjson`), 'utf8');
  return text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as JournalEvent);
}

function terminal(run: ProgramRun): TerminalState | undefined {
  return run.ledger.terminal?.state;
}

describe.each(PROGRAMS)('cap table: $name', (program) => {
  it('max ticks: stops after the tick cap', async () => {
    const scenario: Scenario = { caps: { ...LOOSE, maxTicks: 2 }, script: () => ({}) };
    const run = await program.run(scenario, harness(scenario), await project(), false);
    expect(terminal(run)).toBe('max_ticks');
    expect(run.ledger.spent.ticks).toBe(2);
  });

  it('no progress: stops when nothing measured changes', async () => {
    const scenario: Scenario = { caps: { ...LOOSE, noProgressTicks: 2 }, stuck: true, script: () => ({}) };
    const run = await program.run(scenario, harness(scenario), await project(), false);
    expect(terminal(run)).toBe('no_progress');
  });

  it('wall clock: a call still running when the cap passes is stopped, and the run ends timed_out', async () => {
    // The clock is frozen, so only the call's own deadline timer can end the run.
    const scenario: Scenario = { caps: { ...LOOSE, wallClockMs: 1_500 }, script: () => ({ hang: true }) };
    const h = harness(scenario);
    const run = await program.run(scenario, h, await project(), false);
    expect(terminal(run)).toBe('timed_out');
    expect(h.calls).toHaveLength(1);
    expect(h.calls[0]?.aborted).toBe(true);
    expect(run.ledger.intents.every((intent) => intent.outcome !== null)).toBe(true);
  });

  it('budget pre-flight: no call starts whose worst case (the per-call ceiling) does not fit', async () => {
    const scenario: Scenario = {
      caps: { ...LOOSE, budgetUsd: 1, maxCallUsd: 0.6 },
      script: () => ({ costUsd: 0.5 }),
    };
    const h = harness(scenario);
    const run = await program.run(scenario, h, await project(), false);
    expect(terminal(run)).toBe('budget_exhausted');
    // 0.5 spent; another call could cost 0.6 and overrun the budget of 1.
    expect(h.calls).toHaveLength(1);
    expect(run.ledger.spent.usd).toBeCloseTo(0.5);
  });

  it('per-call ceiling: each call is given the lower of the ceiling and what is left of the budget', async () => {
    const scenario: Scenario = {
      caps: { ...LOOSE, budgetUsd: 1, maxCallUsd: 0.4 },
      script: () => ({ costUsd: 0.3 }),
    };
    const h = harness(scenario);
    const run = await program.run(scenario, h, await project(), false);
    expect(terminal(run)).toBe('budget_exhausted');
    expect(h.calls.map((c) => c.budgetUsd)).toEqual([0.4, 0.4, expect.closeTo(0.4, 6) as number]);
    expect(run.ledger.spent.usd).toBeCloseTo(0.9);
  });

  it('rate limit: the wait is slept on the run clock and the call runs again without a new tick', async () => {
    const resetAt = Date.parse('2026-01-01T00:30:00Z');
    const scenario: Scenario = {
      caps: { ...LOOSE, maxTicks: 1 },
      script: (n) => (n === 0 ? { rateLimitedUntil: resetAt } : {}),
    };
    const h = harness(scenario);
    const run = await program.run(scenario, h, await project(), false);
    expect(terminal(run)).toBe('max_ticks');
    expect(h.sleeps).toEqual([30 * MINUTE]);
    expect(h.calls.length).toBeGreaterThanOrEqual(2);
    expect(h.calls[1]?.phase).toBe(h.calls[0]?.phase);
    expect(run.ledger.spent.ticks).toBe(1);
  });

  it('Ctrl-C during a call: the call is stopped and the run ends cancelled; resume finishes within the caps', async () => {
    const scenario: Scenario = {
      caps: { ...LOOSE, maxTicks: 2 },
      script: (n) => (n === 0 ? { cancel: true } : {}),
    };
    const cwd = await project();
    const first = harness(scenario);
    const stopped = await program.run(scenario, first, cwd, false);
    expect(terminal(stopped)).toBe('cancelled');
    expect(first.calls[0]?.aborted).toBe(true);
    const again: Scenario = { ...scenario, script: () => ({}) };
    const resumed = await program.run(again, harness(again), cwd, true);
    expect(terminal(resumed)).toBe('max_ticks');
    // The tick cap holds across the resume: ticks counted before Ctrl-C are not given again.
    expect(resumed.ledger.spent.ticks).toBeLessThanOrEqual(2);
    expect(resumed.ledger.intents.every((intent) => intent.outcome !== null)).toBe(true);
    const events = await journal(cwd, resumed.ledger.slug);
    expect(events.filter((e) => e.type === 'terminal').map((e) => (e as { state: string }).state)).toEqual([
      'cancelled',
      'max_ticks',
    ]);
  });
});
