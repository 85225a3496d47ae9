import { readFile } from 'node:fs/promises';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { createLedger } from './create-ledger.js';
import { decodeLedgerText, serializeLedger } from './ledger-codec.js';
import { LEDGER_SCHEMA_VERSION, type Ledger } from './ledger-schema.js';
import { createRedactor } from './redact.js';

const redactor = createRedactor({});

async function upstreamValidator() {
  const url = new URL('../../../docs/schemas/upstream/ledger.schema.json', import.meta.url);
  const schema = JSON.parse(await readFile(url, 'utf8')) as object;
  return new Ajv({ allErrors: true, strict: false }).compile(schema);
}

/** A spec run some way in: entry chosen, a parked and a blocking question, a protected test, a converged slice. */
function runningLedger(): Ledger {
  const ledger = createLedger({
    goal: 'add loans',
    slug: 'add-loans',
    mode: 'spec',
    now: new Date('2026-11-30T10:00:00Z'),
  });
  return {
    ...ledger,
    entry: { path: 'distill', mode: 'code-first', reason: 'code present, capture', overridden: false },
    tick: 3,
    questions: [
      {
        id: 'q-1',
        text: 'Can an overdue loan be renewed?',
        classification: 'parked',
        assumption: 'no',
        answer: null,
        status: 'open',
        raisedAtTick: 1,
        phase: 'distill',
      },
      {
        id: 'q-2',
        text: 'Who pays the fee?',
        classification: 'blocking',
        assumption: null,
        answer: null,
        status: 'open',
        raisedAtTick: 2,
        phase: 'tend',
      },
    ],
    protectedTests: [
      {
        path: 'test/loan.test.js',
        sha256: 'a'.repeat(64),
        storedCopy: 'add-loans/protected/x.orig',
        recordedAtTick: 1,
      },
    ],
    subGoals: [
      {
        id: 'loans',
        slice: { constructs: ['entity:Loan'] },
        dependsOn: [],
        status: 'converged',
        report: null,
      },
      {
        id: 'notices',
        slice: { constructs: ['entity:Notice'] },
        dependsOn: ['loans'],
        status: 'running',
        report: null,
      },
    ],
  };
}

describe('the stored ledger has the upstream top level', () => {
  it('a ledger the engine writes is valid against the upstream ledger.schema.json, with the upstream fields current', async () => {
    const validate = await upstreamValidator();
    const stored = JSON.parse(serializeLedger(runningLedger(), redactor)) as Record<string, unknown>;
    expect(validate(stored), JSON.stringify(validate.errors)).toBe(true);
    expect(stored).toMatchObject({
      goal: 'add loans',
      mode: 'code-first',
      tick: 3,
      runKind: 'spec',
      schemaVersion: LEDGER_SCHEMA_VERSION,
      completed_sub_goals: ['loans'],
      open_questions: ['Can an overdue loan be renewed?'],
      generated_test_hashes: { 'test/loan.test.js': `sha256:${'a'.repeat(64)}` },
      witness_records: [],
    });
    // A fresh run has no entry yet: upstream mode is spec-first until one is chosen.
    const fresh = createLedger({ goal: 'g', slug: 'g', mode: 'spec', now: new Date('2026-11-30T10:00:00Z') });
    const freshStored = JSON.parse(serializeLedger(fresh, redactor)) as Record<string, unknown>;
    expect(validate(freshStored)).toBe(true);
    expect(freshStored['mode']).toBe('spec-first');
  });

  it('reads back exactly the ledger it wrote (the upstream keys are derived, never read)', () => {
    const ledger = runningLedger();
    const decoded = decodeLedgerText(serializeLedger(ledger, redactor));
    expect(decoded.ok && decoded.value.ledger).toEqual(ledger);
    expect(decoded.ok && decoded.value.migratedFrom).toBeUndefined();
  });

  it('ignores what the /allium skill changed in its own keys and keeps the engine state', () => {
    const ledger = runningLedger();
    const stored = JSON.parse(serializeLedger(ledger, redactor)) as Record<string, unknown>;
    const edited = { ...stored, open_questions: [], witness_records: ['witness: PASS'] };
    const decoded = decodeLedgerText(JSON.stringify(edited));
    expect(decoded.ok && decoded.value.ledger).toEqual(ledger);
  });

  it('migrates a version-2 ledger (mode was the run kind) to the upstream top level', async () => {
    const ledger = runningLedger();
    const v2 = { ...ledger, schemaVersion: 2, mode: 'spec' };
    const decoded = decodeLedgerText(JSON.stringify(v2));
    expect(decoded.ok).toBe(true);
    if (!decoded.ok) return;
    expect(decoded.value.migratedFrom).toBe(2);
    expect(decoded.value.ledger).toEqual(ledger);
    const validate = await upstreamValidator();
    expect(validate(JSON.parse(serializeLedger(decoded.value.ledger, redactor)))).toBe(true);
  });

  it('refuses a stored document whose run kind and loop state disagree', () => {
    const stored = JSON.parse(serializeLedger(runningLedger(), redactor)) as Record<string, unknown>;
    const decoded = decodeLedgerText(JSON.stringify({ ...stored, runKind: 'verify' }));
    expect(decoded.ok).toBe(false);
  });
});
