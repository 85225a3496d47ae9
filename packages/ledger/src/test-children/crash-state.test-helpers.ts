import type { JournalEvent } from '../journal-event-schema.js';
import type { Ledger } from '../ledger-schema.js';
import { sampleLedger, withHistory } from '../testing/sample-ledger.js';

const BASE_HISTORY = 150;

/** The n-th state the crash writer saves: a base ledger plus `n` extra history entries and `tick = n`. */
export function crashState(slug: string, n: number): Ledger {
  return { ...withHistory(sampleLedger(slug), BASE_HISTORY + n), tick: n };
}

/** The journal event the crash writer appends after saving state `seq`. */
export function seqEvent(seq: number): JournalEvent {
  return { type: 'note', at: '2026-01-01T00:00:00.000Z', message: `state ${seq}`, data: { seq } };
}
