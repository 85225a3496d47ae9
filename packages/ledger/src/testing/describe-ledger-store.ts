import { AlliumLoopError } from '@allium-loop/errors';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JournalEvent } from '../journal-event-schema.js';
import type { Lease, LedgerStore } from '../ledger-store.js';
import type { FakeClock } from './fake-clock.js';
import type { FakeProcessTable } from './fake-process-table.js';
import { sampleLedger, withHistory } from './sample-ledger.js';

/** Which process a store plays. */
export interface StoreIdentity {
  readonly pid: number;
  readonly host?: string;
}

/** What the conformance suite needs from an adapter under test. */
export interface LedgerStoreHarness {
  /** A store as seen by one process; all stores of a harness share storage, clock and process table. */
  open(identity: StoreIdentity): LedgerStore;
  readonly clock: FakeClock;
  readonly processes: FakeProcessTable;
  /** The heartbeat age after which the stores consider a lease stale. */
  readonly staleAfterMs: number;
  /** The value of a secret-named variable in the environment the stores' redactor was built from. */
  readonly envSecret: string;
  writeRawLedger(slug: string, text: string): Promise<void>;
  readRawLedger(slug: string): Promise<string | undefined>;
  writeRawJournal(slug: string, text: string): Promise<void>;
  readRawJournal(slug: string): Promise<string | undefined>;
  dispose(): Promise<void>;
}

const note = (message: string, at = '2026-01-01T00:00:00.000Z'): JournalEvent => ({
  type: 'note',
  at,
  message,
});

function codeOf(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    () => 'resolved',
    (error: unknown) => (AlliumLoopError.is(error) ? error.code : `untyped: ${String(error)}`),
  );
}

/**
 * The conformance suite of the `LedgerStore` port. Every adapter runs it with a harness factory; a fresh harness
 * is made for each test and disposed after it.
 */
export function describeLedgerStore(name: string, makeHarness: () => Promise<LedgerStoreHarness>): void {
  describe(`LedgerStore conformance: ${name}`, () => {
    let h: LedgerStoreHarness;
    let a: LedgerStore;
    let b: LedgerStore;
    beforeEach(async () => {
      h = await makeHarness();
      a = h.open({ pid: 101 });
      b = h.open({ pid: 202 });
    });
    afterEach(async () => {
      await h.dispose();
    });

    const acquire = async (store: LedgerStore, slug = 'run-one'): Promise<Lease> =>
      (await store.acquire(slug)).lease;

    describe('documents', () => {
      it('reports a missing ledger as missing', async () => {
        const loaded = await a.load('nothing-here');
        expect(loaded.ok).toBe(false);
        if (!loaded.ok) expect(loaded.issues.kind).toBe('missing');
      });

      it('loads what it saved, and another process sees it too', async () => {
        const lease = await acquire(a);
        const ledger = withHistory(sampleLedger('run-one'), 3);
        expect(await a.save(lease, ledger)).toBe('written');
        for (const store of [a, b]) {
          const loaded = await store.load('run-one');
          expect(loaded.ok && loaded.value.ledger).toEqual(ledger);
          expect(loaded.ok && loaded.value.migratedFrom).toBeUndefined();
        }
      });

      it('does not rewrite unchanged content', async () => {
        const lease = await acquire(a);
        const ledger = sampleLedger('run-one');
        await a.save(lease, ledger);
        const before = await h.readRawLedger('run-one');
        expect(await a.save(lease, structuredClone(ledger))).toBe('unchanged');
        expect(await h.readRawLedger('run-one')).toBe(before);
      });

      it('stores a stable key order whatever order the producer used', async () => {
        const lease = await acquire(a);
        const call = (key: string) => ({
          key,
          observation: { kind: 'phase_done' as const, phase: 'weed' as const, ok: true },
        });
        await a.save(
          lease,
          sampleLedger('run-one', {
            modeState: { kind: 'spec', lastCalls: { zeta: call('z'), alpha: call('a') } },
          }),
        );
        const first = await h.readRawLedger('run-one');
        await a.save(lease, {
          ...sampleLedger('run-one'),
          modeState: { lastCalls: { alpha: call('a'), zeta: call('z') }, kind: 'spec' },
        });
        expect(await h.readRawLedger('run-one')).toBe(first);
        expect(first?.indexOf('"schemaVersion"')).toBeLessThan(first?.indexOf('"goal"') ?? -1);
        expect(first?.indexOf('"alpha"')).toBeLessThan(first?.indexOf('"zeta"') ?? -1);
      });

      it('lists ledgers only, sorted', async () => {
        for (const slug of ['run-b', 'run-a']) {
          await a.save(await acquire(a, slug), sampleLedger(slug));
        }
        await a.append(await acquire(a, 'journal-only'), [note('x')]);
        expect(await b.list()).toEqual(['run-a', 'run-b']);
      });

      it('refuses a ledger that fails the schema or belongs to another slug', async () => {
        const lease = await acquire(a);
        const bad = { ...sampleLedger('run-one'), tick: -1 };
        expect(await codeOf(a.save(lease, bad))).toBe('ledger.invalid');
        expect(await codeOf(a.save(lease, sampleLedger('other-run')))).toBe('ledger.invalid');
        expect(await h.readRawLedger('run-one')).toBeUndefined();
      });

      it('refuses slugs that could name other files', async () => {
        expect(await codeOf(a.acquire('../escape'))).toBe('ledger.invalid');
        expect(await codeOf(a.load('UPPER'))).toBe('ledger.invalid');
      });

      it('redacts secrets before writing the ledger', async () => {
        const lease = await acquire(a);
        const secret = `leaked ${h.envSecret} and sk-ant-api03-${'x1Y2'.repeat(8)}`;
        const ledger = {
          ...sampleLedger('run-one'),
          history: [{ at: '2026-01-01T00:00:00.000Z', kind: 'note', message: secret }],
        };
        await a.save(lease, ledger);
        const raw = (await h.readRawLedger('run-one')) ?? '';
        expect(raw).toContain('leaked [REDACTED] and [REDACTED]');
        expect(raw).not.toContain(h.envSecret);
      });
    });

    describe('corruption', () => {
      it.each([
        ['invalid JSON', '{"schemaVersion": 1, "goal": ', 'invalid_json'],
        [
          'a schema violation',
          JSON.stringify({ ...sampleLedger('run-one'), tick: 'three' }),
          'schema_invalid',
        ],
        [
          'a newer schema version',
          JSON.stringify({ ...sampleLedger('run-one'), schemaVersion: 99 }),
          'schema_invalid',
        ],
      ])(
        'returns a typed failure for %s, keeps a backup, and never overwrites it',
        async (_what, text, reason) => {
          await h.writeRawLedger('run-one', text);
          const loaded = await a.load('run-one');
          expect(loaded.ok).toBe(false);
          if (loaded.ok || loaded.issues.kind !== 'corrupt') throw new Error('expected a corrupt failure');
          expect(loaded.issues.reason).toBe(reason);
          expect(loaded.issues.backup).toBeDefined();
          expect(loaded.issues.error.code).toBe('ledger.corrupt');
          expect(loaded.issues.error.message).toContain(loaded.issues.file);
          expect(loaded.issues.error.hint).toContain(loaded.issues.backup);
          const lease = await acquire(a);
          expect(await codeOf(a.save(lease, sampleLedger('run-one')))).toBe('ledger.corrupt');
          expect(
            await codeOf(b.save(await acquire(b, 'run-one').catch(() => lease), sampleLedger('run-one'))),
          ).not.toBe('resolved');
          expect(await h.readRawLedger('run-one')).toBe(text);
        },
      );

      it('names the field paths of schema issues', async () => {
        await h.writeRawLedger(
          'run-one',
          JSON.stringify({ ...sampleLedger('run-one'), caps: { maxTicks: 0 } }),
        );
        const loaded = await a.load('run-one');
        const issues = !loaded.ok && loaded.issues.kind === 'corrupt' ? loaded.issues.issues : [];
        expect(issues.some((issue) => issue.startsWith('caps.maxTicks:'))).toBe(true);
      });
    });

    describe('lease', () => {
      it('is exclusive and names the holder', async () => {
        await acquire(a);
        const error = await b.acquire('run-one').catch((e: unknown) => e);
        expect(AlliumLoopError.is(error) && error.code).toBe('ledger.lease_held');
        expect(String((error as Error).message)).toContain('pid 101');
        expect((await b.readLease('run-one'))?.pid).toBe(101);
      });

      it('can be acquired again after release', async () => {
        const lease = await acquire(a);
        await a.release(lease);
        expect(await b.readLease('run-one')).toBeUndefined();
        expect((await acquire(b)).pid).toBe(202);
      });

      it('stays held while heartbeats are fresh', async () => {
        const lease = await acquire(a);
        h.clock.advance(h.staleAfterMs * 0.75);
        await a.heartbeat(lease);
        h.clock.advance(h.staleAfterMs * 0.75);
        expect(await codeOf(b.acquire('run-one'))).toBe('ledger.lease_held');
      });

      it('is taken over when the heartbeat is stale, journaled, and the old holder is fenced', async () => {
        const old = await acquire(a);
        await a.save(old, sampleLedger('run-one'));
        h.clock.advance(h.staleAfterMs + 1);
        const taken = await b.acquire('run-one');
        expect(taken.takenOver?.reason).toBe('stale_heartbeat');
        expect(taken.takenOver?.previous.pid).toBe(101);
        const journal = await b.readJournal('run-one');
        expect(journal.events.map((event) => event.type)).toContain('lease_taken_over');
        expect(await codeOf(a.save(old, sampleLedger('run-one', { tick: 4 })))).toBe('ledger.lease_lost');
        expect(await codeOf(a.heartbeat(old))).toBe('ledger.lease_lost');
        expect(await codeOf(a.append(old, [note('late')]))).toBe('ledger.lease_lost');
        await a.release(old);
        expect((await a.readLease('run-one'))?.pid).toBe(202);
        expect(await b.save(taken.lease, sampleLedger('run-one', { tick: 5 }))).toBe('written');
      });

      it('is taken over at once when its pid is dead on this host', async () => {
        await acquire(a);
        h.processes.kill(101);
        const taken = await b.acquire('run-one');
        expect(taken.takenOver?.reason).toBe('dead_pid');
      });

      it('is not taken over for a dead-looking pid on another host while its heartbeat is fresh', async () => {
        const remote = h.open({ pid: 303, host: 'elsewhere' });
        await acquire(remote);
        h.processes.kill(303);
        expect(await codeOf(b.acquire('run-one'))).toBe('ledger.lease_held');
      });

      it('treats a lock with this pid from before this process started as a reused pid', async () => {
        await acquire(a);
        expect(await codeOf(a.acquire('run-one'))).toBe('ledger.lease_held');
        h.clock.advance(1_000);
        const restarted = h.open({ pid: 101 });
        expect((await restarted.acquire('run-one')).takenOver?.reason).toBe('dead_pid');
      });

      it('refuses saves after release', async () => {
        const lease = await acquire(a);
        await a.release(lease);
        expect(await codeOf(a.save(lease, sampleLedger('run-one')))).toBe('ledger.lease_lost');
      });
    });

    describe('journal', () => {
      it('appends and reads back events in order; an absent journal is empty', async () => {
        expect((await a.readJournal('run-one')).events).toEqual([]);
        const lease = await acquire(a);
        await a.append(lease, [note('one'), note('two')]);
        await a.append(
          lease,
          [{ type: 'phase_started', at: '2026-01-01T00:00:01.000Z', tick: 1, phase: 'verify' }],
          {
            sync: true,
          },
        );
        const read = await b.readJournal('run-one');
        expect(read.events.map((event) => (event.type === 'note' ? event.message : event.type))).toEqual([
          'one',
          'two',
          'phase_started',
        ]);
        expect(read.tornTail).toBe(false);
      });

      it('tolerates a torn last line and keeps appending on a fresh line', async () => {
        const lease = await acquire(a);
        await a.append(lease, [note('kept')]);
        const raw = (await h.readRawJournal('run-one')) ?? '';
        await h.writeRawJournal('run-one', `${raw}{"type":"note","at":"2026-01-0`);
        const torn = await a.readJournal('run-one');
        expect(torn.tornTail).toBe(true);
        expect(torn.events).toHaveLength(1);
        await a.append(lease, [note('after')]);
        const read = await a.readJournal('run-one');
        expect(read.events.map((event) => (event.type === 'note' ? event.message : ''))).toEqual([
          'kept',
          'after',
        ]);
        expect(read.invalidLines.map((line) => line.line)).toEqual([2]);
        expect(read.tornTail).toBe(false);
      });

      it('refuses invalid events and writes nothing', async () => {
        const lease = await acquire(a);
        const bad = { type: 'phase_started', at: 'yesterday', phase: 'verify' } as unknown as JournalEvent;
        expect(await codeOf(a.append(lease, [note('fine'), bad]))).toBe('ledger.invalid');
        expect((await a.readJournal('run-one')).events).toEqual([]);
      });

      it('accepts extension events and redacts secrets', async () => {
        const lease = await acquire(a);
        await a.append(lease, [
          {
            type: 'x-stories.verdict',
            at: '2026-01-01T00:00:00.000Z',
            data: { story: 'S1', verdict: 'PASS' },
          },
          note(`token ${h.envSecret}`),
        ]);
        const raw = (await h.readRawJournal('run-one')) ?? '';
        expect(raw).not.toContain(h.envSecret);
        expect((await a.readJournal('run-one')).events).toHaveLength(2);
      });
    });
  });
}
