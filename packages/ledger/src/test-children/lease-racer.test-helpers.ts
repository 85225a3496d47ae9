/**
 * Child process of the lease race test. Reads commands from stdin, one per line, and answers each with one
 * JSON line: `race <slug>` tries to acquire the lease; `save <slug>` saves a ledger (and appends an event) with
 * the lease it won for that slug.
 */
import { createInterface } from 'node:readline';
import { AlliumLoopError } from '@allium-loop/errors';
import { createFileLedgerStore } from '../file-ledger-store.js';
import type { Lease } from '../ledger-store.js';
import { createRedactor } from '../redact.js';
import { sampleLedger } from '../testing/sample-ledger.js';

const [dir] = process.argv.slice(2);
if (dir === undefined) throw new Error('usage: lease-racer <dir>');
const store = createFileLedgerStore({ dir, redactor: createRedactor({}) });
const leases = new Map<string, Lease>();

const reply = (answer: Record<string, unknown>): void => {
  process.stdout.write(`${JSON.stringify({ pid: process.pid, ...answer })}\n`);
};
const codeOf = (error: unknown): string => (AlliumLoopError.is(error) ? error.code : String(error));

async function race(slug: string): Promise<void> {
  try {
    const { lease, takenOver } = await store.acquire(slug);
    leases.set(slug, lease);
    reply({ won: true, takenOver: takenOver?.reason ?? null });
  } catch (error) {
    reply({ won: false, code: codeOf(error) });
  }
}

async function save(slug: string): Promise<void> {
  const lease = leases.get(slug);
  if (lease === undefined) return reply({ saved: false, code: 'no-lease' });
  try {
    await store.save(lease, sampleLedger(slug, { tick: process.pid % 1000 }));
    await store.append(lease, [
      { type: 'note', at: new Date().toISOString(), message: `saved by ${process.pid}` },
    ]);
    reply({ saved: true });
  } catch (error) {
    reply({ saved: false, code: codeOf(error) });
  }
}

reply({ ready: true });
for await (const line of createInterface({ input: process.stdin })) {
  const [command, slug] = line.trim().split(' ');
  if (command === 'race' && slug !== undefined) await race(slug);
  else if (command === 'save' && slug !== undefined) await save(slug);
}
