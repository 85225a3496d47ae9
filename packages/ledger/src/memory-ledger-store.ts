import { createHash } from 'node:crypto';
import { err, ok } from '@allium-loop/errors';
import {
  assertSlug,
  decodeLedgerText,
  journalSeparator,
  parseJournalText,
  serializeEvents,
  serializeLedger,
} from './ledger-codec.js';
import { LeaseHeldError, LeaseLostError, LedgerCorruptError, LedgerInvalidError } from './ledger-errors.js';
import type { AcquiredLease, Lease, LeaseRecord, LedgerStore } from './ledger-store.js';
import { judgeStaleness, systemLeaseEnvironment, type LeaseEnvironment } from './lease.js';
import { createRedactor, type Redactor } from './redact.js';
import type { UpstreamLedger } from './upstream-ledger.js';

/** The shared storage behind memory stores: several stores over one backend act like several processes. */
export interface MemoryLedgerBackend {
  /** Stored ledger text by slug (exactly what the file store would write). */
  readonly ledgers: Map<string, string>;
  /** Lock records by slug. */
  readonly locks: Map<string, LeaseRecord>;
  /** Journal text by slug. */
  readonly journals: Map<string, string>;
  /** Copies of corrupt ledgers by backup name. */
  readonly backups: Map<string, string>;
  /** How many times each slug's ledger was written (unchanged saves do not count). */
  readonly writes: Map<string, number>;
}

/** Creates an empty {@link MemoryLedgerBackend}. */
export function createMemoryLedgerBackend(): MemoryLedgerBackend {
  return { ledgers: new Map(), locks: new Map(), journals: new Map(), backups: new Map(), writes: new Map() };
}

/** Options of {@link createMemoryLedgerStore}. */
export interface MemoryLedgerStoreOptions {
  /** Share one backend between stores to play several processes; a fresh one by default. */
  readonly backend?: MemoryLedgerBackend;
  /** Clock, pid, host, liveness and token source; the real ones by default. */
  readonly env?: Partial<LeaseEnvironment>;
  /** Redaction applied to every write; token shapes only (no environment) by default. */
  readonly redactor?: Redactor;
}

/** A memory store, with its backend exposed for tests. */
export interface MemoryLedgerStore extends LedgerStore {
  readonly backend: MemoryLedgerBackend;
}

function fileOf(slug: string): string {
  assertSlug(slug);
  return `memory:${slug}.json`;
}

/**
 * A {@link LedgerStore} held in memory with the same semantics as the file store: it stores the serialized text,
 * fences writes by lease token, keeps backups of corrupt ledgers. For tests and dry runs.
 */
export function createMemoryLedgerStore(options: MemoryLedgerStoreOptions = {}): MemoryLedgerStore {
  const backend = options.backend ?? createMemoryLedgerBackend();
  const env = systemLeaseEnvironment(options.env);
  const redactor = options.redactor ?? createRedactor({});

  const assertHeld = (lease: Lease): void => {
    const record = backend.locks.get(lease.slug);
    if (record?.token !== lease.token) {
      throw new LeaseLostError(
        lease.slug,
        `memory:${lease.slug}.lock`,
        record === undefined ? 'the lock was released' : `pid ${record.pid} on ${record.host} holds it now`,
      );
    }
  };

  const corrupt = (
    slug: string,
    reason: 'invalid_json' | 'schema_invalid' | 'upstream_ledger',
    issues: readonly string[],
    text: string,
    upstream?: UpstreamLedger,
  ) => {
    const backup = `memory:${slug}.corrupt-${createHash('sha256').update(text).digest('hex').slice(0, 12)}.json`;
    backend.backups.set(backup, text);
    const error = new LedgerCorruptError(fileOf(slug), issues, backup);
    return {
      kind: 'corrupt' as const,
      file: fileOf(slug),
      reason,
      issues,
      backup,
      ...(upstream === undefined ? {} : { upstream }),
      error,
    };
  };

  const appendText = (slug: string, text: string): void => {
    const current = backend.journals.get(slug) ?? '';
    backend.journals.set(slug, current + journalSeparator(current.at(-1)) + text);
  };

  const store: MemoryLedgerStore = {
    backend,
    async load(slug) {
      const text = backend.ledgers.get(slug);
      if (text === undefined) return err({ kind: 'missing', file: fileOf(slug) });
      const decoded = decodeLedgerText(text);
      return decoded.ok
        ? ok(decoded.value)
        : err(corrupt(slug, decoded.issues.reason, decoded.issues.issues, text, decoded.issues.upstream));
    },
    async save(lease, ledger) {
      assertHeld(lease);
      if (ledger.slug !== lease.slug)
        throw new LedgerInvalidError('ledger', [
          `slug: "${ledger.slug}" is not the leased slug "${lease.slug}"`,
        ]);
      const text = serializeLedger(ledger, redactor);
      const existing = backend.ledgers.get(lease.slug);
      if (existing === text) return 'unchanged';
      if (existing !== undefined) {
        const decoded = decodeLedgerText(existing);
        if (!decoded.ok && decoded.issues.reason !== 'upstream_ledger')
          throw corrupt(lease.slug, decoded.issues.reason, decoded.issues.issues, existing).error;
      }
      backend.ledgers.set(lease.slug, text);
      backend.writes.set(lease.slug, (backend.writes.get(lease.slug) ?? 0) + 1);
      return 'written';
    },
    async list() {
      return [...backend.ledgers.keys()].sort();
    },
    async acquire(slug): Promise<AcquiredLease> {
      assertSlug(slug);
      const current = backend.locks.get(slug);
      const reason = current === undefined ? undefined : judgeStaleness(current, env);
      if (current !== undefined && reason === undefined)
        throw new LeaseHeldError(slug, `memory:${slug}.lock`, current);
      const at = env.now().toISOString();
      const record: LeaseRecord = {
        slug,
        token: env.newToken(),
        pid: env.pid,
        host: env.host,
        startedAt: at,
        heartbeatAt: at,
      };
      backend.locks.set(slug, record);
      const lease: Lease = { slug, token: record.token, pid: record.pid, host: record.host, startedAt: at };
      if (current === undefined || reason === undefined) return { lease, takenOver: undefined };
      const previous = {
        pid: current.pid,
        host: current.host,
        startedAt: current.startedAt,
        heartbeatAt: current.heartbeatAt,
      };
      appendText(slug, serializeEvents([{ type: 'lease_taken_over', at, previous, reason }], redactor));
      return { lease, takenOver: { previous, reason } };
    },
    async heartbeat(lease) {
      assertHeld(lease);
      const record = backend.locks.get(lease.slug)!;
      backend.locks.set(lease.slug, { ...record, heartbeatAt: env.now().toISOString() });
    },
    async release(lease) {
      if (backend.locks.get(lease.slug)?.token === lease.token) backend.locks.delete(lease.slug);
    },
    async readLease(slug) {
      assertSlug(slug);
      return backend.locks.get(slug);
    },
    async append(lease, events) {
      assertHeld(lease);
      appendText(lease.slug, serializeEvents(events, redactor));
    },
    async readJournal(slug) {
      assertSlug(slug);
      return parseJournalText(backend.journals.get(slug) ?? '');
    },
  };
  return store;
}
