import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { JournalEvent } from './journal-event-schema.js';
import { parseJournalText, serializeEvents } from './ledger-codec.js';
import { createRedactor } from './redact.js';

const events = (n: number): JournalEvent[] =>
  Array.from({ length: n }, (_, i) => ({
    type: 'note' as const,
    at: '2026-01-01T00:00:00.000Z',
    message: `event ${i} ✓ ünïcode`,
  }));

describe('parseJournalText', () => {
  it('recovers exactly the complete lines of any prefix of a journal (a crash at any byte)', () => {
    const all = events(12);
    const text = serializeEvents(all, createRedactor({}));
    fc.assert(
      fc.property(fc.integer({ min: 0, max: text.length }), (cut) => {
        const prefix = text.slice(0, cut);
        const read = parseJournalText(prefix);
        const completeLines = prefix.split('\n').length - 1;
        const kept = read.events.length;
        // An unterminated tail that happens to be a whole JSON line counts as complete.
        return (
          read.invalidLines.length === 0 &&
          (kept === completeLines || kept === completeLines + 1) &&
          JSON.stringify(read.events) === JSON.stringify(all.slice(0, kept)) &&
          read.tornTail === (kept === completeLines && !prefix.endsWith('\n') && prefix.length > 0)
        );
      }),
      { numRuns: 400 },
    );
  });

  it('skips blank lines and reports invalid complete lines by number', () => {
    const good = serializeEvents(events(1), createRedactor({}));
    const read = parseJournalText(`${good}\nnot json\n{"type":"nope","at":"x"}\n${good}`);
    expect(read.events).toHaveLength(2);
    expect(read.invalidLines.map((line) => line.line)).toEqual([3, 4]);
  });
});
