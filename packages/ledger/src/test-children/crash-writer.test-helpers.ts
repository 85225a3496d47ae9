/**
 * Child process of the crash test: drives one run's ledger and journal forever until SIGKILLed.
 * Usage: node --conditions=development --import tsx crash-writer.test-helpers.ts <dir> <slug>
 * Loads its modules, waits for a `go` line on stdin (so the parent can start it ahead of time), then prints
 * `ready <n>` once it holds the lease and has reconciled the journal with the ledger, and `wrote <n>` after its
 * first save and append (so the parent can kill it at a random moment of a run that is really writing).
 */
import { once } from 'node:events';
import { createFileLedgerStore } from '../file-ledger-store.js';
import type { Ledger } from '../ledger-schema.js';
import { createRedactor } from '../redact.js';
import { crashState, seqEvent } from './crash-state.test-helpers.js';

const [dir, slug] = process.argv.slice(2);
if (dir === undefined || slug === undefined) throw new Error('usage: crash-writer <dir> <slug>');

process.stdin.setEncoding('utf8');
await once(process.stdin, 'data');

const store = createFileLedgerStore({ dir, redactor: createRedactor({}) });
const { lease } = await store.acquire(slug);
const loaded = await store.load(slug);
if (!loaded.ok && loaded.issues.kind === 'corrupt') throw loaded.issues.error;
let n = loaded.ok ? loaded.value.ledger.history.length - crashState(slug, 0).history.length : 0;

const journal = await store.readJournal(slug);
let seq = journal.events.filter((event) => event.type === 'note').length;
// Reconcile: events for states saved before the last kill but never journaled.
while (seq < n) {
  seq += 1;
  await store.append(lease, [seqEvent(seq)]);
}
process.stdout.write(`ready ${n}\n`);
const first = n + 1;

for (;;) {
  n += 1;
  const next: Ledger = crashState(slug, n);
  await store.save(lease, next);
  seq += 1;
  await store.append(lease, [seqEvent(seq)], { sync: seq % 2 === 0 });
  if (seq === n && n === first) process.stdout.write(`wrote ${n}\n`);
}
