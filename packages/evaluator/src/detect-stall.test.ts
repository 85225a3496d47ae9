import { describe, expect, it } from 'vitest';
import { DEFAULT_STALL_CAPS, detectStall, type StallCaps, type TickSummary } from './detect-stall.js';

const ticks = (...fingerprints: string[]): TickSummary[] =>
  fingerprints.map((fingerprint) => ({ fingerprint }));
const kinds = (history: readonly TickSummary[], caps: StallCaps = DEFAULT_STALL_CAPS) =>
  detectStall(history, caps).reasons.map((reason) => reason.kind);

describe('detectStall: no progress', () => {
  // N = 2 unchanged ticks means three equal fingerprints in a row.
  const cases: [string, TickSummary[], boolean][] = [
    ['empty history', [], false],
    ['one tick', ticks('A'), false],
    ['N−1 unchanged', ticks('X', 'A', 'A'), false],
    ['exactly N unchanged', ticks('X', 'A', 'A', 'A'), true],
    ['N+1 unchanged', ticks('A', 'A', 'A', 'A'), true],
    ['unchanged earlier, progress at the end', ticks('A', 'A', 'A', 'B'), false],
  ];
  it.each(cases)('%s', (_name, history, stalled) => {
    expect(kinds(history).includes('no_progress')).toBe(stalled);
  });

  it.each([1, 3])('honours noProgressTicks = %i at its boundary', (n) => {
    const caps = { ...DEFAULT_STALL_CAPS, noProgressTicks: n };
    const same = (count: number) => ticks('X', ...Array<string>(count).fill('A'));
    expect(kinds(same(n), caps)).not.toContain('no_progress');
    expect(kinds(same(n + 1), caps)).toContain('no_progress');
    expect(detectStall(same(n + 1), caps).reasons[0]).toMatchObject({ terminal: 'no_progress' });
  });
});

describe('detectStall: oscillation', () => {
  const cases: [string, TickSummary[], boolean, boolean][] = [
    ['the first A→B→A is one backtrack, tolerated', ticks('A', 'B', 'A'), true, false],
    ['A→B→A→B is the second backtrack', ticks('A', 'B', 'A', 'B'), true, true],
    ['A→B→A→B off', ticks('A', 'B', 'A', 'B'), false, false],
    ['two separate backtracks: A→B→A→C→D→C', ticks('A', 'B', 'A', 'C', 'D', 'C'), true, true],
    [
      'a second backtrack long ago does not stop a run moving on',
      ticks('A', 'B', 'A', 'B', 'C'),
      true,
      false,
    ],
    ['A→B→C', ticks('A', 'B', 'C'), true, false],
    ['A→A→A is no progress, not oscillation', ticks('A', 'A', 'A'), true, false],
    ['A→B→A→C', ticks('A', 'B', 'A', 'C'), true, false],
    ['two ticks', ticks('A', 'B'), true, false],
  ];
  it.each(cases)('%s (oscillation %s)', (_name, history, on, stalled) => {
    expect(kinds(history, { ...DEFAULT_STALL_CAPS, oscillation: on }).includes('oscillation')).toBe(stalled);
  });

  it('tolerates as many backtracks as asked: 0 stops the first A→B→A, 2 lets a second pass', () => {
    expect(kinds(ticks('A', 'B', 'A'), { ...DEFAULT_STALL_CAPS, toleratedBacktracks: 0 })).toContain(
      'oscillation',
    );
    expect(kinds(ticks('A', 'B', 'A', 'B'), { ...DEFAULT_STALL_CAPS, toleratedBacktracks: 2 })).not.toContain(
      'oscillation',
    );
    expect(detectStall(ticks('A', 'B', 'A', 'B')).reasons[0]?.message).toBe(
      'oscillating between A and B (2 backtracks; 1 tolerated)',
    );
  });
});

describe('detectStall: tokens climbing while the state does not move', () => {
  const spend = (...ticks: [string, number | undefined][]): TickSummary[] =>
    ticks.map(([fingerprint, tokens]) => (tokens === undefined ? { fingerprint } : { fingerprint, tokens }));
  // The no-progress cap is set high so that only the token rule can fire; the threshold is 3 here (default 2).
  const caps = { ...DEFAULT_STALL_CAPS, noProgressTicks: 10, tokenClimbTicks: 3 };
  const cases: [string, TickSummary[], boolean][] = [
    [
      'three ticks, same state, tokens rising each tick',
      spend(['A', 100], ['A', 200], ['A', 400], ['A', 800]),
      true,
    ],
    ['exactly the threshold: 3 rises', spend(['X', 1], ['A', 100], ['A', 200], ['A', 300]), false],
    ['tokens rising but the state moves', spend(['A', 100], ['B', 200], ['C', 400], ['D', 800]), false],
    ['same state, tokens flat', spend(['A', 100], ['A', 100], ['A', 100], ['A', 100]), false],
    ['same state, tokens falling once', spend(['A', 100], ['A', 200], ['A', 150], ['A', 800]), false],
    ['tokens unknown on a tick', spend(['A', 100], ['A', 200], ['A', undefined], ['A', 800]), false],
  ];
  it.each(cases)('%s', (_name, history, stalled) => {
    expect(kinds(history, caps).includes('token_climb')).toBe(stalled);
  });

  it('names the climb; the threshold is tokenClimbTicks, 0 turns it off', () => {
    const history = spend(['A', 100], ['A', 200], ['A', 400], ['A', 800]);
    expect(detectStall(history, caps).reasons[0]).toEqual({
      kind: 'token_climb',
      terminal: 'no_progress',
      message:
        'tokens climbing while the state does not move: 100 → 200 → 400 → 800 tokens over 3 ticks at A',
    });
    expect(kinds(history, { ...caps, tokenClimbTicks: 0 })).not.toContain('token_climb');
    expect(kinds(history.slice(1), { ...caps, tokenClimbTicks: 2 })).toContain('token_climb');
    // By default two climbing flat ticks stop the run, named before the plain no-progress reason.
    expect(detectStall(spend(['A', 1], ['A', 2], ['A', 3])).reasons.map((r) => r.kind)).toEqual([
      'token_climb',
      'no_progress',
    ]);
  });
});

describe('detectStall: repeated action', () => {
  const acts = (...hashes: (string | undefined)[]): TickSummary[] =>
    hashes.map((actionHash, index) =>
      actionHash === undefined ? { fingerprint: String(index) } : { fingerprint: String(index), actionHash },
    );
  const cases: [string, TickSummary[], boolean][] = [
    ['N−1 = 2 times', acts('d1', 'd1'), false],
    ['exactly N = 3 times', acts('d1', 'd1', 'd1'), true],
    ['N+1 = 4 times', acts('d1', 'd1', 'd1', 'd1'), true],
    ['3 times, not consecutive', acts('d1', 'd2', 'd1', 'd3', 'd1'), true],
    ['3 times earlier, latest differs', acts('d1', 'd1', 'd1', 'd2'), false],
    ['latest tick without an action', acts('d1', 'd1', 'd1', undefined), false],
  ];
  it.each(cases)('%s', (_name, history, stalled) => {
    expect(kinds(history).includes('repeated_action')).toBe(stalled);
  });
});

describe('detectStall: failed fix attempts', () => {
  const attempt = (targets: string[], stillFailing: string[], fingerprint = 'f'): TickSummary => ({
    fingerprint,
    fixAttempt: { targets, stillFailing },
  });
  const failed = (count: number, targets = ['t1', 't2']) =>
    Array.from({ length: count }, (_unused, index) => attempt(targets, ['t1'], String(index)));
  const cases: [string, TickSummary[], boolean][] = [
    ['N−1 = 2 failed attempts', failed(2), false],
    ['exactly N = 3 failed attempts', failed(3), true],
    ['N+1 = 4 failed attempts', failed(4), true],
    ['same tests in another order', [...failed(2), attempt(['t2', 't1'], ['t2'], 'z')], true],
    ['a different set breaks the streak', [...failed(2, ['t1']), ...failed(2, ['t1', 't2'])], false],
    [
      'a successful attempt breaks the streak',
      [...failed(2), attempt(['t1', 't2'], []), ...failed(2)],
      false,
    ],
    ['latest attempt succeeded', [...failed(3), attempt(['t1', 't2'], [], 'ok')], false],
    [
      'ticks without attempts in between do not reset',
      [...failed(2), { fingerprint: 'x' }, ...failed(1)],
      true,
    ],
  ];
  it.each(cases)('%s', (_name, history, stalled) => {
    const verdict = detectStall(history, { ...DEFAULT_STALL_CAPS, oscillation: false, noProgressTicks: 99 });
    expect(verdict.reasons.some((reason) => reason.kind === 'failed_fix_attempts')).toBe(stalled);
    if (stalled) expect(verdict.reasons.at(-1)).toMatchObject({ terminal: 'awaiting_input' });
  });
});

describe('detectStall: verdict', () => {
  it('is not stalled with steady progress, and lists every reason that applies', () => {
    expect(detectStall(ticks('A', 'B', 'C', 'D'))).toEqual({ stalled: false, reasons: [] });
    const history: TickSummary[] = ['x', 'x', 'x'].map((fingerprint) => ({
      fingerprint,
      actionHash: 'same',
    }));
    expect(detectStall(history).stalled).toBe(true);
    expect(kinds(history)).toEqual(['no_progress', 'repeated_action']);
  });
});
