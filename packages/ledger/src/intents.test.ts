import { describe, expect, it } from 'vitest';
import { beginIntent, endIntent, pendingIntents } from './intents.js';
import { sampleLedger } from './testing/sample-ledger.js';

const at = new Date('2026-01-01T00:00:00.000Z');

describe('intents', () => {
  it('records an intent without an outcome and lists it as pending', () => {
    const begun = beginIntent(sampleLedger(), 'tick-1/implement/agent', {
      tick: 1,
      phase: 'implement',
      action: 'agent-call',
      data: { resultFile: '.allium-loop/x/results/1-implement.json' },
      at,
    });
    expect(begun.created).toBe(true);
    expect(pendingIntents(begun.ledger).map((intent) => intent.key)).toEqual(['tick-1/implement/agent']);
    expect(begun.intent.data).toEqual({ resultFile: '.allium-loop/x/results/1-implement.json' });
  });

  it('returns the existing record when the same key begins twice', () => {
    const first = beginIntent(sampleLedger(), 'k', { tick: 1, phase: 'p', action: 'a', at });
    const second = beginIntent(first.ledger, 'k', { tick: 2, phase: 'other', action: 'b', at });
    expect(second.created).toBe(false);
    expect(second.ledger).toBe(first.ledger);
    expect(second.intent).toEqual(first.intent);
    const ended = endIntent(first.ledger, 'k', { status: 'succeeded', at });
    expect(beginIntent(ended, 'k', { tick: 3, phase: 'p', action: 'a', at }).intent.outcome?.status).toBe(
      'succeeded',
    );
  });

  it('closes an intent once; a second end keeps the first outcome', () => {
    const { ledger } = beginIntent(sampleLedger(), 'k', { tick: 1, phase: 'p', action: 'a', at });
    const ended = endIntent(ledger, 'k', { status: 'failed', detail: 'exit 1', at });
    expect(pendingIntents(ended)).toEqual([]);
    expect(ended.intents[0]?.outcome).toEqual({ status: 'failed', detail: 'exit 1', at: at.toISOString() });
    expect(endIntent(ended, 'k', { status: 'succeeded', at })).toBe(ended);
    expect(ledger.intents[0]?.outcome).toBeNull();
  });

  it('throws a typed error for an unknown key', () => {
    expect(() => endIntent(sampleLedger(), 'nope', { status: 'succeeded', at })).toThrow(
      expect.objectContaining({ code: 'ledger.unknown_intent' }),
    );
  });
});
