import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFileLedgerStore, createLedger, type Ledger } from '@allium-loop/ledger';
import { describe, expect, it } from 'vitest';
import { readLedgerFacts } from './ledger-facts.js';

async function withLedger(edit: (ledger: Ledger) => Ledger): Promise<string> {
  const cwd = await mkdtemp(join(tmpdir(), 'facts-'));
  const store = createFileLedgerStore({ dir: join(cwd, '.allium-loop') });
  const { lease } = await store.acquire('gift-cards');
  await store.save(
    lease,
    edit(createLedger({ goal: 'gift cards', slug: 'gift-cards', mode: 'spec', now: new Date(0) })),
  );
  await store.release(lease);
  return cwd;
}

describe('readLedgerFacts', () => {
  it('says weed did not run when there is no ledger', async () => {
    const facts = await readLedgerFacts(await mkdtemp(join(tmpdir(), 'facts-')));
    expect(facts.weed).toEqual({ status: 'not_run' });
    expect(facts.note).toContain('no spec-loop ledger');
  });

  it('takes the last tick weed verdict and the open blocking questions (parked ones are not listed)', async () => {
    const cwd = await withLedger((ledger) => ({
      ...ledger,
      verdicts: [
        {
          tick: 2,
          at: new Date(0).toISOString(),
          tests: { status: 'known', passed: 3, failed: 0, skipped: 0, failing: [] },
          weed: { status: 'dirty', divergences: [{ kind: 'code_bug', construct: 'rule:X', detail: 'd' }] },
          structural: { errors: 0, messages: [] },
          openQuestions: { blocking: 0, parked: 1 },
          distillNew: null,
          fingerprint: 'f',
          git: { head: null, tree: null },
          converged: false,
        },
      ],
      questions: [
        {
          id: 'q-1',
          text: 'Can gift cards expire?',
          classification: 'parked',
          assumption: 'no',
          answer: null,
          status: 'open',
          raisedAtTick: 1,
          phase: 'elicit',
        },
        {
          id: 'q-2',
          text: 'Who pays for postage?',
          classification: 'blocking',
          assumption: null,
          answer: null,
          status: 'open',
          raisedAtTick: 1,
          phase: 'elicit',
        },
      ],
    }));
    const facts = await readLedgerFacts(cwd);
    expect(facts.weed).toEqual({ status: 'dirty', divergences: 1 });
    expect(facts.blockingQuestions).toEqual(['Who pays for postage?']);
    expect(facts.note).toBe('weed verdict from ledger gift-cards (tick 2)');
  });
});
