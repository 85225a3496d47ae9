import { beginIntent, type JournalEvent } from '@allium-loop/ledger';
import { sampleLedger } from '@allium-loop/ledger/testing';
import { describe, expect, it } from 'vitest';
import { ledgerAtJournaledEnd } from './run-record.js';

const AT = '2026-01-01T00:10:00.000Z';
const started = (at: string): JournalEvent => ({
  type: 'run_started',
  at,
  goal: 'goal of sample-run',
  mode: 'verify',
  resumed: false,
  pid: 1,
  host: 'h',
});
const terminal = (state: 'converged' | 'cancelled', at = AT): JournalEvent => ({
  type: 'terminal',
  at,
  tick: 3,
  state,
  reason: state,
  detail: `${state} at tick 3`,
});

describe('ledgerAtJournaledEnd (a kill between journaling the end and saving the ledger)', () => {
  const { ledger: withCall } = beginIntent(sampleLedger(), 'tick-3:step', {
    tick: 3,
    phase: 'step',
    action: 'agent-call',
    at: new Date('2026-01-01T00:09:00.000Z'),
  });

  it('brings a running ledger level with the end journaled since the last run_started, calls abandoned with it', () => {
    const events = [
      started('2026-01-01T00:00:00.000Z'),
      terminal('converged'),
      {
        type: 'intent_ended',
        at: AT,
        tick: 3,
        key: 'tick-3:step',
        status: 'abandoned',
        detail: 'the run ended before this call was re-run',
      },
    ] satisfies JournalEvent[];
    const settled = ledgerAtJournaledEnd(withCall, events);
    expect(settled?.status).toBe('terminal');
    expect(settled?.terminal).toEqual({
      state: 'converged',
      reason: 'converged',
      detail: 'converged at tick 3',
      at: AT,
    });
    expect(settled?.intents.map((intent) => intent.outcome?.status)).toEqual(['abandoned']);
  });

  it('leaves alone an end from an earlier session, a ledger that ended, and a journal with no end', () => {
    // Cancelled, then resumed (a new run_started): the old end is not this session's.
    const resumedAfterCancel = [started('2026-01-01T00:00:00.000Z'), terminal('cancelled'), started(AT)];
    expect(ledgerAtJournaledEnd(withCall, resumedAfterCancel)).toBeUndefined();
    const ended = { ...withCall, status: 'terminal' as const };
    expect(ledgerAtJournaledEnd(ended, [started(AT), terminal('converged')])).toBeUndefined();
    expect(ledgerAtJournaledEnd(withCall, [started(AT)])).toBeUndefined();
    expect(ledgerAtJournaledEnd(withCall, [])).toBeUndefined();
  });
});
