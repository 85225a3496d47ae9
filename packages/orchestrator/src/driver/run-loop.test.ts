import { AlliumLoopError } from '@allium-loop/errors';
import { DEFAULT_POLICY } from '@allium-loop/evaluator';
import { createLedger, createMemoryLedgerStore, pendingIntents, type Ledger } from '@allium-loop/ledger';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CAPS, type LoopConfig, type LoopPhase } from '../decide/loop-state.js';
import type { LoopPorts, MeasureReport, PhaseReport, PhaseRequest } from './loop-ports.js';
import { specRecord } from './ledger-sync.js';
import { runLoop, type LoopProgress } from './run-loop.js';

const config: LoopConfig = {
  entry: 'elicit',
  mode: 'spec-first',
  caps: DEFAULT_CAPS,
  policy: DEFAULT_POLICY,
  interactive: false,
};

function report(
  phase: LoopPhase,
  extra: Partial<PhaseReport['observation']> = {},
  costUsd = 0.25,
): PhaseReport {
  return {
    observation: { kind: 'phase_done', phase, ok: true, costUsd, ...extra },
    events: [],
    questions: [],
    costKnown: true,
    durationMs: 5,
  };
}

function measure(failing: string[]): MeasureReport {
  return {
    observation: {
      kind: 'measured',
      measurement: {
        tests: {
          counts: 'known',
          passed: 2,
          failed: failing.length,
          skipped: 0,
          failing,
          exitCode: failing.length > 0 ? 1 : 0,
        },
        structuralErrors: 0,
        openQuestions: { blocking: 0, parked: 0 },
      },
    },
    structuralMessages: [],
    git: { head: null, tree: null },
  };
}

/** A scripted project: elicit changes the spec, propagate adds a failing test, one implement round fixes it. */
function scriptedPorts(calls: string[], overrides: Partial<LoopPorts> = {}): LoopPorts {
  let fixed = false;
  return {
    runPhase: async (request: PhaseRequest) => {
      calls.push(request.key);
      if (request.phase === 'elicit') return report('elicit', { specChanged: true });
      if (request.phase === 'propagate')
        return {
          ...report('propagate', { newTests: ['LendBook lends'] }),
          redCheck: { passing: [], failing: ['LendBook lends'] },
        };
      if (request.phase === 'implement') {
        fixed = true;
        return report('implement');
      }
      return report('weed', { divergences: [] });
    },
    redCheck: async () => ({ passing: [], failing: ['LendBook lends'] }),
    measure: async () => measure(fixed ? [] : ['LendBook lends']),
    reconcile: async () => undefined,
    ...overrides,
  };
}

async function start(goal = 'add lending') {
  const store = createMemoryLedgerStore();
  const { lease } = await store.acquire('add-lending');
  const ledger = createLedger({ goal, slug: 'add-lending', mode: 'spec', now: new Date(0) });
  await store.save(lease, ledger);
  return { store, lease, ledger };
}

const clock = { now: () => 1_000 };

describe('runLoop', () => {
  it('drives the scripted project to convergence and records everything in the ledger and journal', async () => {
    const { store, lease, ledger } = await start();
    const calls: string[] = [];
    const progress: LoopProgress[] = [];
    const final = await runLoop({
      store,
      lease,
      ledger,
      config,
      ports: scriptedPorts(calls),
      clock,
      signal: new AbortController().signal,
      onProgress: (p) => progress.push(p),
    });
    expect(final.terminal?.state).toBe('converged');
    expect(calls).toEqual(['tick-1/elicit/1', 'tick-1/propagate/1', 'tick-1/implement/1', 'tick-1/weed/1']);
    expect(pendingIntents(final)).toEqual([]);
    expect(final.spent.usd).toBeCloseTo(1.0);
    expect(final.verdicts).toHaveLength(1);
    expect(final.verdicts[0]?.converged).toBe(true);
    const ticks = progress.filter((p) => p.kind === 'tick').map((p) => (p.kind === 'tick' ? p.line : ''));
    expect(ticks).toEqual(['tick 1 · tests 2/2 · weed clean · openQ blocking 0 / parked 0 · $1.00']);
    const loaded = await store.load('add-lending');
    expect(loaded.ok && loaded.value.ledger.terminal?.state).toBe('converged');
    const journal = await store.readJournal('add-lending');
    expect(journal.events.map((e) => e.type)).toContain('terminal');
  });

  it('accepts a valid result left by an interrupted call instead of running the phase again', async () => {
    const { store, lease, ledger } = await start();
    // First process: dies inside the implement call (the intent is written, its outcome is not).
    const calls: string[] = [];
    const dying = scriptedPorts(calls, {
      runPhase: async (request) => {
        calls.push(request.key);
        if (request.phase === 'implement') throw Object.assign(new Error('killed'), { fatal: true });
        return scriptedPorts([]).runPhase(request);
      },
    });
    const abort = new AbortController();
    const crashed = await runLoop({
      store,
      lease,
      ledger,
      config,
      ports: {
        ...dying,
        runPhase: async (r) => {
          if (r.phase === 'implement') {
            abort.abort();
            throw new Error('killed');
          }
          return dying.runPhase(r);
        },
      },
      clock,
      signal: abort.signal,
    });
    expect(crashed.terminal?.state).toBe('cancelled');
    // Simulate the crash: reopen the run as a fresh process would, with the implement intent still pending.
    const stored = await store.load('add-lending');
    if (!stored.ok) throw new Error('ledger did not load');
    const interrupted: Ledger = {
      ...stored.value.ledger,
      status: 'running',
      terminal: null,
      intents: stored.value.ledger.intents.map((i) =>
        i.phase === 'implement' ? { ...i, outcome: null } : i,
      ),
      modeState: (() => {
        const record = specRecord(stored.value.ledger);
        const { terminal: _terminal, ...loop } = record.loop!;
        return { ...record, loop: { ...loop, stage: 'implement' as const } };
      })(),
    };
    const again: string[] = [];
    let fixed = false;
    const resumed = await runLoop({
      store,
      lease,
      ledger: JSON.parse(JSON.stringify(interrupted)) as Ledger,
      config,
      clock,
      signal: new AbortController().signal,
      ports: scriptedPorts(again, {
        reconcile: async (request) => {
          fixed = true;
          return report(request.phase);
        },
        measure: async () => measure(fixed ? [] : ['LendBook lends']),
      }),
    });
    expect(resumed.terminal?.state).toBe('converged');
    expect(again).not.toContain('tick-1/implement/1');
    expect(again).toEqual(['tick-1/weed/1']);
    expect(pendingIntents(resumed)).toEqual([]);
  });

  it('ends as cancelled when the signal is aborted, with the ledger intact', async () => {
    const { store, lease, ledger } = await start();
    const abort = new AbortController();
    const calls: string[] = [];
    const ports = scriptedPorts(calls);
    const final = await runLoop({
      store,
      lease,
      ledger,
      config,
      clock,
      signal: abort.signal,
      ports: {
        ...ports,
        runPhase: async (r) => {
          const out = await ports.runPhase(r);
          abort.abort();
          return out;
        },
      },
    });
    expect(final.terminal?.state).toBe('cancelled');
    expect(calls).toEqual(['tick-1/elicit/1']);
    const loaded = await store.load('add-lending');
    expect(loaded.ok).toBe(true);
  });
});

describe('runLoop: decomposed goals', () => {
  it('runs each slice as its own loop, then the integration pass, and records the roll-up', async () => {
    const { store, lease, ledger } = await start();
    const calls: string[] = [];
    const focusSlices: string[] = [];
    const integrationFocus: unknown[] = [];
    const ports: LoopPorts = {
      ...scriptedPorts(calls),
      runPhase: async (request) => {
        calls.push(request.key);
        if (request.focus.slice?.integration === true) integrationFocus.push(request.focus.slice);
        if (request.focus.slice !== undefined) focusSlices.push(request.focus.slice.id);
        if (request.phase === 'tend') return report('tend', { specChanged: true });
        if (request.phase === 'propagate') return { ...report('propagate', { newTests: [] }) };
        return report(request.phase, request.phase === 'weed' ? { divergences: [] } : {});
      },
      measure: async () => measure([]),
      plan: async () => [
        { id: 'entity-lifecycle:Book', constructs: ['entity:Book', 'rule:LendBook'], dependsOn: [] },
        {
          id: 'entity-lifecycle:Loan',
          constructs: ['entity:Loan', 'rule:ReturnBook'],
          dependsOn: ['entity-lifecycle:Book'],
        },
        {
          id: 'integration',
          constructs: ['rule:LendBook', 'rule:ReturnBook'],
          dependsOn: ['entity-lifecycle:Book', 'entity-lifecycle:Loan'],
          chains: [['rule:LendBook', 'entity:Loan', 'rule:ReturnBook']],
        },
      ],
    };
    const final = await runLoop({
      store,
      lease,
      ledger,
      config: { ...config, entry: 'tend', decompose: true },
      ports,
      clock,
      signal: new AbortController().signal,
    });
    expect(final.terminal?.state).toBe('converged');
    expect(final.subGoals.map((g) => [g.id, g.status])).toEqual([
      ['entity-lifecycle:Book', 'converged'],
      ['entity-lifecycle:Loan', 'converged'],
      ['integration', 'converged'],
    ]);
    expect(calls).toEqual([
      'tick-1/tend/1',
      'slice:entity-lifecycle:Book/tick-1/propagate/1',
      'slice:entity-lifecycle:Book/tick-1/weed/1',
      'slice:entity-lifecycle:Loan/tick-1/propagate/1',
      'slice:entity-lifecycle:Loan/tick-1/weed/1',
      'slice:integration/tick-1/propagate/1',
      'slice:integration/tick-1/weed/1',
    ]);
    expect(new Set(focusSlices)).toEqual(
      new Set(['entity-lifecycle:Book', 'entity-lifecycle:Loan', 'integration']),
    );
    // The integration pass is the decomposer's: its chains and only their constructs, never every construct.
    expect(integrationFocus[0]).toEqual({
      id: 'integration',
      constructs: ['rule:LendBook', 'rule:ReturnBook'],
      integration: true,
      chains: [['rule:LendBook', 'entity:Loan', 'rule:ReturnBook']],
    });
    // The decomposer's rollUp decides and records the outcome; slice reports have its SliceReport shape.
    const journal = (await store.readJournal('add-lending')).events;
    const rolled = journal.find((e) => e.type === 'note' && e.message.startsWith('roll-up:'));
    expect(rolled).toMatchObject({
      message: 'roll-up: converged, 3/3 converged over 3 tick(s)',
      data: { converged: true, totals: { slices: 3, ticks: 3 } },
    });
    expect(final.subGoals[0]?.report).toMatchObject({
      sliceId: 'entity-lifecycle:Book',
      status: 'converged',
      ticks: 1,
    });
  });
});

describe('runLoop: an outcome recorded just before the supervisor stopped', () => {
  it('is replayed on resume instead of running the finished call again', async () => {
    const { store, lease, ledger } = await start();
    const abort = new AbortController();
    const calls: string[] = [];
    const ports = scriptedPorts(calls);
    // The weed call ends and its outcome is recorded, then the supervisor is stopped before acting on it.
    const stopped = await runLoop({
      store,
      lease,
      ledger,
      config,
      clock,
      signal: abort.signal,
      ports: {
        ...ports,
        runPhase: async (r) => {
          const out = await ports.runPhase(r);
          if (r.phase === 'weed') abort.abort();
          return out;
        },
      },
    });
    expect(stopped.terminal?.state).toBe('cancelled');
    expect(calls.at(-1)).toBe('tick-1/weed/1');
    const record = specRecord(stopped);
    const { terminal: _terminal, ...reopened } = record.loop!;
    const resumedLedger: Ledger = {
      ...stopped,
      status: 'running',
      terminal: null,
      modeState: { ...record, loop: reopened },
    };
    const again: string[] = [];
    const resumed = await runLoop({
      store,
      lease,
      ledger: resumedLedger,
      config,
      clock,
      signal: new AbortController().signal,
      ports: scriptedPorts(again, { measure: async () => measure([]) }),
    });
    expect(again).toEqual([]);
    expect(resumed.terminal?.state).toBe('converged');
    const journal = await store.readJournal('add-lending');
    expect(
      journal.events.some((e) => e.type === 'note' && e.message.includes('its recorded outcome is used')),
    ).toBe(true);
  });
});

/** Runs the scripted project with `overrides` of its ports and a fake sleep that records each backoff wait. */
async function runFailing(
  overrides: (ports: LoopPorts, calls: string[]) => Partial<LoopPorts>,
  extra: Partial<Parameters<typeof runLoop>[0]> = {},
) {
  const { store, lease, ledger } = await start();
  const calls: string[] = [];
  const waits: number[] = [];
  const ports = scriptedPorts(calls);
  const final = await runLoop({
    store,
    lease,
    ledger,
    config,
    clock,
    signal: new AbortController().signal,
    backoff: { baseMs: 500, maxMs: 10_000, maxAttempts: 3 },
    sleep: async (ms) => {
      waits.push(ms);
    },
    ports: { ...ports, ...overrides(ports, calls) },
    ...extra,
  });
  return { store, final, calls, waits };
}

describe('runLoop: port failures', () => {
  const transient = () =>
    new AlliumLoopError('could not write the agent transcript', {
      code: 'agents.transcript_failed',
      retryable: true,
      cause: new Error('ENOSPC: no space left on device'),
    });
  const fatal = () =>
    new AlliumLoopError("agent executable 'claude' was not found on PATH", {
      code: 'agents.binary_not_found',
      hint: 'Install it with npm i -g @anthropic-ai/claude-code.',
      cause: new Error('spawn claude ENOENT'),
    });

  it('retries a retryable failure with backoff (waits on the fake sleep) and converges', async () => {
    let failures = 2;
    const { store, final, calls, waits } = await runFailing((ports, calls) => ({
      runPhase: async (request) => {
        if (request.phase === 'implement' && failures > 0) {
          failures -= 1;
          calls.push(request.key);
          throw transient();
        }
        return ports.runPhase(request);
      },
    }));
    expect(final.terminal?.state).toBe('converged');
    expect(waits).toEqual([500, 1_000]);
    // The failed tries re-run under the same intent key; nothing is left pending.
    expect(calls.filter((key) => key.includes('implement'))).toEqual([
      'tick-1/implement/1',
      'tick-1/implement/1',
      'tick-1/implement/1',
    ]);
    expect(pendingIntents(final)).toEqual([]);
    const journal = await store.readJournal('add-lending');
    const notes = journal.events.filter(
      (e) => e.type === 'note' && e.message.includes('agents.transcript_failed'),
    );
    expect(notes).toHaveLength(2);
  });

  it('a retryable failure that keeps failing ends `failed` once the tries are used, with its code and cause', async () => {
    const { final, waits } = await runFailing(() => ({ measure: async () => Promise.reject(transient()) }));
    expect(waits).toEqual([500, 1_000]);
    expect(final.terminal).toMatchObject({
      state: 'failed',
      error: { code: 'agents.transcript_failed', cause: 'ENOSPC: no space left on device' },
    });
  });

  it('a non-retryable failure stops at once as `failed`; code, hint and cause reach the ledger and the journal', async () => {
    const { store, final, waits } = await runFailing(() => ({
      runPhase: async () => Promise.reject(fatal()),
    }));
    expect(waits).toEqual([]);
    const error = {
      code: 'agents.binary_not_found',
      hint: 'Install it with npm i -g @anthropic-ai/claude-code.',
      cause: 'spawn claude ENOENT',
    };
    expect(final.terminal).toMatchObject({ state: 'failed', error });
    expect(final.terminal?.detail).toBe(
      "agent executable 'claude' was not found on PATH [agents.binary_not_found]. Install it with npm i -g @anthropic-ai/claude-code.",
    );
    const loaded = await store.load('add-lending');
    expect(loaded.ok && loaded.value.ledger.terminal?.error).toEqual(error);
    const journal = await store.readJournal('add-lending');
    expect(journal.events.find((e) => e.type === 'terminal')).toMatchObject({ state: 'failed', error });
  });

  it('a retry whose backoff would outlast the wall clock ends `timed_out`, keeping the failure', async () => {
    const { final, waits } = await runFailing(() => ({ runPhase: async () => Promise.reject(transient()) }), {
      config: { ...config, caps: { ...config.caps, wallClockMs: 60_000 } },
      backoff: { baseMs: 120_000, maxMs: 120_000, maxAttempts: 3 },
    });
    expect(waits).toEqual([]);
    expect(final.terminal).toMatchObject({ state: 'timed_out', error: { code: 'agents.transcript_failed' } });
  });
});
