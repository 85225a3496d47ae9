import { JournalEventSchema } from '@allium-loop/ledger';
import { describe, expect, it } from 'vitest';
import { toJournal } from './ledger-sync.js';

describe('toJournal', () => {
  it('journals each test run as an x-loop.tests event with the implement round and the counts', () => {
    const at = new Date('2026-01-01T00:00:00Z');
    const events = toJournal(
      [
        { kind: 'tests_measured', round: 2, counts: { passed: 7, failed: 2, skipped: 1 } },
        { kind: 'tests_measured', round: 0 },
      ],
      3,
      at,
    );
    expect(events).toEqual([
      {
        type: 'x-loop.tests',
        at: at.toISOString(),
        tick: 3,
        data: { round: 2, passed: 7, failed: 2, skipped: 1 },
      },
      { type: 'x-loop.tests', at: at.toISOString(), tick: 3, data: { round: 0 } },
    ]);
    for (const event of events) expect(JournalEventSchema.safeParse(event).success).toBe(true);
  });
});
