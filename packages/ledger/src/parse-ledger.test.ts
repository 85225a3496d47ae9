import { describe, expect, it } from 'vitest';
import { createLedger, DEFAULT_CAPS } from './create-ledger.js';
import { decodeLedger, type LedgerMigration } from './migrate-ledger.js';
import { formatIssuePath, parseLedger } from './parse-ledger.js';
import { sampleLedger } from './testing/sample-ledger.js';

describe('parseLedger', () => {
  it('accepts a fresh ledger and returns it typed', () => {
    const ledger = sampleLedger('gift-cards');
    const parsed = parseLedger(JSON.parse(JSON.stringify(ledger)));
    expect(parsed).toEqual({ ok: true, value: ledger });
  });

  it('returns readable issue paths into nested arrays', () => {
    const ledger = sampleLedger('gift-cards');
    const bad = {
      ...ledger,
      verdicts: [
        {
          tick: 1,
          at: '2026-01-01T00:00:00.000Z',
          tests: { status: 'known', passed: 'many', failed: 0, skipped: 0, failing: [] },
          weed: { status: 'clean', divergences: [] },
          structural: { errors: 0, messages: [] },
          openQuestions: { blocking: 0, parked: 0 },
          distillNew: null,
          fingerprint: 'f',
          git: { head: null, tree: null },
          converged: false,
        },
      ],
      status: 'paused',
    };
    const parsed = parseLedger(bad);
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.issues).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^verdicts\[0\]\.tests\.passed: /),
        expect.stringMatching(/^status: /),
      ]),
    );
  });

  it('never throws on garbage', () => {
    for (const value of [null, 42, 'text', [], { schemaVersion: 1 }]) {
      expect(parseLedger(value).ok).toBe(false);
    }
  });

  it.each([
    [[], '(root)'],
    [['caps', 'maxTicks'], 'caps.maxTicks'],
    [['history', 3, 'at'], 'history[3].at'],
  ])('formats the path %j as %s', (path, expected) => {
    expect(formatIssuePath(path)).toBe(expected);
  });
});

describe('createLedger', () => {
  it('starts running at tick 0 with the default caps and nothing spent', () => {
    const ledger = createLedger({
      goal: 'add gift cards',
      slug: 'add-gift-cards',
      mode: 'spec',
      now: new Date(0),
    });
    expect(ledger).toMatchObject({ status: 'running', tick: 0, terminal: null, caps: DEFAULT_CAPS });
    expect(ledger.spent).toMatchObject({ ticks: 0, usd: null, agentCalls: 0 });
  });

  it('applies cap overrides and rejects invalid input', () => {
    const ledger = createLedger({
      goal: 'g',
      slug: 'g',
      mode: 'verify',
      caps: { maxTicks: 9, budgetUsd: 2 },
      now: new Date(0),
    });
    expect(ledger.caps.maxTicks).toBe(9);
    expect(ledger.caps.budgetUsd).toBe(2);
    expect(() => createLedger({ goal: '', slug: 'g', mode: 'spec', now: new Date(0) })).toThrow();
    expect(() => createLedger({ goal: 'g', slug: 'Not A Slug', mode: 'spec', now: new Date(0) })).toThrow();
  });
});

describe('decodeLedger (migration chain)', () => {
  // A synthetic version-0 shape: flat counters, no caps object, questions as plain strings.
  const v0 = {
    schemaVersion: 0,
    goal: 'capture billing',
    slug: 'capture-billing',
    startedAt: '2025-12-01T10:00:00.000Z',
    ticks: 3,
    costUsd: 1.25,
    maxTicks: 8,
    openQuestions: ['Which currency?'],
  };
  const v0to1: LedgerMigration = {
    from: 0,
    migrate: (doc) => {
      const fresh = createLedger({
        goal: String(doc['goal']),
        slug: String(doc['slug']),
        mode: 'spec',
        caps: { maxTicks: Number(doc['maxTicks']) },
        now: new Date(String(doc['startedAt'])),
      });
      const questions = (doc['openQuestions'] as string[]).map((text, i) => ({
        id: `q${i + 1}`,
        text,
        classification: 'parked' as const,
        assumption: null,
        answer: null,
        status: 'open' as const,
        raisedAtTick: 0,
        phase: 'unknown',
      }));
      return {
        ...fresh,
        tick: Number(doc['ticks']),
        spent: { ...fresh.spent, ticks: Number(doc['ticks']), usd: Number(doc['costUsd']) },
        questions,
      };
    },
  };

  it('migrates an older document to the current version and reports where it came from', () => {
    const decoded = decodeLedger(v0, [v0to1]);
    expect(decoded.ok).toBe(true);
    if (!decoded.ok) return;
    expect(decoded.value.migratedFrom).toBe(0);
    expect(decoded.value.ledger).toMatchObject({
      schemaVersion: 1,
      tick: 3,
      caps: { maxTicks: 8 },
      spent: { usd: 1.25 },
      questions: [{ id: 'q1', text: 'Which currency?' }],
    });
  });

  it('fails readably when no step covers a version or a step throws', () => {
    expect(decodeLedger(v0, [])).toEqual({
      ok: false,
      issues: ['schemaVersion: no migration from version 0'],
    });
    const throwing: LedgerMigration = {
      from: 0,
      migrate: () => {
        throw new Error('bad shape');
      },
    };
    expect(decodeLedger(v0, [throwing])).toEqual({
      ok: false,
      issues: ['schemaVersion: migration from version 0 failed: bad shape'],
    });
  });

  it('refuses documents from a newer allium-loop and documents without a version', () => {
    const newer = decodeLedger({ ...sampleLedger(), schemaVersion: 2 });
    expect(!newer.ok && newer.issues[0]).toMatch(/newer allium-loop/);
    const unversioned = decodeLedger({ goal: 'x' });
    expect(!unversioned.ok && unversioned.issues[0]).toMatch(/^schemaVersion: missing/);
  });

  it('validates the migrated result against the current schema', () => {
    const broken: LedgerMigration = { from: 0, migrate: (doc) => ({ ...doc }) };
    const decoded = decodeLedger(v0, [broken]);
    expect(decoded.ok).toBe(false);
  });

  it('leaves current documents alone', () => {
    const decoded = decodeLedger(JSON.parse(JSON.stringify(sampleLedger())));
    expect(decoded.ok && decoded.value.migratedFrom).toBeUndefined();
  });
});
