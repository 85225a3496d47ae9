import { describe, expect, it } from 'vitest';
import { createLedger, DEFAULT_CAPS } from './create-ledger.js';
import { decodeLedger, LEDGER_MIGRATIONS, type LedgerMigration } from './migrate-ledger.js';
import { formatIssuePath, parseLedger } from './parse-ledger.js';
import { LEDGER_SCHEMA_VERSION } from './ledger-schema.js';
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
      modeState: {
        kind: 'verify',
        run: {
          spec: { mode: 'verify', config: { command: 'true', intervalMs: 0 }, defaultCaps: {} },
          agent: {},
        },
      },
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
    const decoded = decodeLedger(v0, [v0to1, ...LEDGER_MIGRATIONS]);
    expect(decoded.ok).toBe(true);
    if (!decoded.ok) return;
    expect(decoded.value.migratedFrom).toBe(0);
    expect(decoded.value.ledger).toMatchObject({
      schemaVersion: 3,
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
    const newer = decodeLedger({ ...sampleLedger(), schemaVersion: LEDGER_SCHEMA_VERSION + 1 });
    expect(!newer.ok && newer.issues[0]).toMatch(/newer allium-loop/);
    const unversioned = decodeLedger({ goal: 'x' });
    expect(!unversioned.ok && unversioned.issues[0]).toMatch(/^schemaVersion: missing/);
  });

  it('validates the migrated result against the current schema', () => {
    const broken: LedgerMigration = { from: 0, migrate: (doc) => ({ ...doc }) };
    const decoded = decodeLedger(v0, [broken, ...LEDGER_MIGRATIONS]);
    expect(decoded.ok).toBe(false);
  });

  it('leaves current documents alone', () => {
    const decoded = decodeLedger(JSON.parse(JSON.stringify(sampleLedger())));
    expect(decoded.ok && decoded.value.migratedFrom).toBeUndefined();
  });

  it('1 → 2: a release-0.1.0 ledger gets its loop kind from its mode, and its loop state is checked', () => {
    const { modeState: _typed, ...current } = JSON.parse(JSON.stringify(sampleLedger())) as Record<
      string,
      unknown
    >;
    const v1 = {
      ...current,
      schemaVersion: 1,
      mode: 'verify',
      modeState: {
        run: {
          spec: { mode: 'verify', config: { command: 'make check', intervalMs: 0 }, defaultCaps: {} },
          agent: {},
        },
        verify: null,
      },
    };
    // `verify: null` was never written by 0.1.0 (it writes the state or nothing): the loop state is corrupt.
    const corrupt = decodeLedger(v1);
    expect(corrupt.ok).toBe(false);
    expect(!corrupt.ok && corrupt.issues.join('\n')).toMatch(/modeState\.verify/);
    const { verify: _null, ...modeState } = v1.modeState;
    const decoded = decodeLedger({ ...v1, modeState });
    expect(decoded.ok && decoded.value.migratedFrom).toBe(1);
    expect(decoded.ok && decoded.value.ledger.modeState).toEqual({ kind: 'verify', run: modeState.run });
  });

  it('refuses a loop state of another kind than the run mode', () => {
    const ledger = JSON.parse(JSON.stringify(sampleLedger())) as Record<string, unknown>;
    const decoded = decodeLedger({ ...ledger, mode: 'stories' });
    expect(!decoded.ok && decoded.issues.join('\n')).toMatch(/modeState\.kind/);
  });

  it('refuses a spec loop state that is not one (a corrupt loop state is a corrupt ledger)', () => {
    const ledger = JSON.parse(JSON.stringify(sampleLedger())) as Record<string, unknown>;
    const decoded = decodeLedger({ ...ledger, modeState: { kind: 'spec', loop: { tick: 'three' } } });
    expect(!decoded.ok && decoded.issues.join('\n')).toMatch(/modeState\.loop/);
  });
});
