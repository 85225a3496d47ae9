import type { Result } from '@allium-loop/errors';
import type { JournalEvent } from './journal-event-schema.js';
import type { LedgerCorruptError, LeaseHolder } from './ledger-errors.js';
import type { Ledger } from './ledger-schema.js';
import type { DecodedLedger } from './migrate-ledger.js';
import type { UpstreamLedger } from './upstream-ledger.js';

/** Why a stored ledger could not be loaded. A corrupt file is never overwritten; a copy is kept at `backup`. */
export type LedgerLoadFailure =
  | { readonly kind: 'missing'; readonly file: string }
  | {
      readonly kind: 'corrupt';
      readonly file: string;
      /** `upstream_ledger`: written by the upstream `/allium` skill; a spec run adopts it (`upstream`). */
      readonly reason: 'unreadable' | 'invalid_json' | 'schema_invalid' | 'upstream_ledger';
      readonly issues: readonly string[];
      /** The upstream skill's ledger, when `reason` is `upstream_ledger`. */
      readonly upstream?: UpstreamLedger;
      readonly backup: string | undefined;
      /** A ready-made user-facing error naming the file, the first issues, the backup and what to do. */
      readonly error: LedgerCorruptError;
    };

/** Proof of holding the lease of one run. Pass it to every write; writes are refused once it is lost. */
export interface Lease {
  readonly slug: string;
  /** Random owner token written into the lock file. */
  readonly token: string;
  readonly pid: number;
  readonly host: string;
  readonly startedAt: string;
}

/** The content of `.allium-loop/<slug>.lock`. */
export interface LeaseRecord extends LeaseHolder {
  readonly slug: string;
  readonly token: string;
}

/** Why a lease was taken over from its previous holder. */
export type TakeoverReason = 'dead_pid' | 'stale_heartbeat';

/** A lease just acquired, and the holder it was taken from, if it was taken over. */
export interface AcquiredLease {
  readonly lease: Lease;
  readonly takenOver: { readonly previous: LeaseHolder; readonly reason: TakeoverReason } | undefined;
}

/** Whether a save changed the stored ledger. */
export type SaveOutcome = 'written' | 'unchanged';

/** A journal as read back: valid events in order, and what was skipped. */
export interface JournalRead {
  readonly events: readonly JournalEvent[];
  /** True when the last line was cut short (a crash mid-append); it is ignored. */
  readonly tornTail: boolean;
  /** Complete lines that failed to parse (1-based line numbers), e.g. a torn line sealed by a later append. */
  readonly invalidLines: readonly { readonly line: number; readonly issues: readonly string[] }[];
}

/** Options of {@link LedgerStore.append}. */
export interface AppendOptions {
  /** Force (true) or skip (false) the fsync; by default the journal is fsynced when a phase-boundary event is appended. */
  readonly sync?: boolean;
}

/**
 * Persistence port for run state, keyed by slug: the ledger document, its lease and its event journal.
 * Adapters: memory (`createMemoryLedgerStore`) and file (`createFileLedgerStore`, `.allium-loop/`); both pass
 * `describeLedgerStore` from `@allium-loop/ledger/testing`. Every write redacts secrets first.
 */
export interface LedgerStore {
  /** Loads, migrates and validates a ledger. Never throws on bad content: returns a typed failure instead. */
  load(slug: string): Promise<Result<DecodedLedger, LedgerLoadFailure>>;
  /**
   * Saves atomically; writes nothing when the content is unchanged. Throws `LeaseLostError` when `lease` no longer
   * owns the lock (fencing), `LedgerCorruptError` when the stored ledger is corrupt (it is never overwritten),
   * `LedgerInvalidError` when `ledger` fails the schema or belongs to another slug.
   */
  save(lease: Lease, ledger: Ledger): Promise<SaveOutcome>;
  /** Slugs of every ledger in the store, sorted. Temp files, backups and locks are not ledgers. */
  list(): Promise<readonly string[]>;
  /**
   * Acquires the lease of `slug` exclusively. A stale lease (dead pid on this host, or a heartbeat older than the
   * store's bound) is taken over and a `lease_taken_over` event is journaled. Throws `LeaseHeldError` naming the
   * live holder otherwise.
   */
  acquire(slug: string): Promise<AcquiredLease>;
  /** Refreshes the heartbeat of a held lease. Throws `LeaseLostError` when it is no longer held. */
  heartbeat(lease: Lease): Promise<void>;
  /** Gives the lease up; does nothing when it is no longer held (it was taken over). */
  release(lease: Lease): Promise<void>;
  /** The current lock of `slug`, or `undefined` when nobody holds it. */
  readLease(slug: string): Promise<LeaseRecord | undefined>;
  /** Appends events to the journal (validated, redacted). Throws `LeaseLostError` when `lease` is lost. */
  append(lease: Lease, events: readonly JournalEvent[], options?: AppendOptions): Promise<void>;
  /** Reads the journal; tolerates a torn last line. An absent journal reads as empty. */
  readJournal(slug: string): Promise<JournalRead>;
}
