import { createLedger } from '../create-ledger.js';
import type { Ledger } from '../ledger-schema.js';

/** A valid fresh ledger for `slug` (goal "goal of <slug>", spec mode, created at 2026-01-01), for tests. */
export function sampleLedger(slug = 'sample-run', overrides: Partial<Ledger> = {}): Ledger {
  const ledger = createLedger({
    goal: `goal of ${slug}`,
    slug,
    mode: 'spec',
    now: new Date('2026-01-01T00:00:00.000Z'),
  });
  return { ...ledger, ...overrides };
}

/** `ledger` with `count` more history entries (`kind: "note"`, message `entry <n>`), for tests and benchmarks. */
export function withHistory(ledger: Ledger, count: number): Ledger {
  const start = ledger.history.length;
  const added = Array.from({ length: count }, (_, i) => ({
    at: new Date(Date.UTC(2026, 0, 1, 0, 0, start + i)).toISOString(),
    kind: 'note',
    message: `entry ${start + i}`,
  }));
  return { ...ledger, history: [...ledger.history, ...added] };
}
