import { createHash } from 'node:crypto';
import { copyFile, constants, mkdir, readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { err, ok, type Result } from '@allium-loop/errors';
import { writeFileAtomic } from './atomic-write.js';
import { appendJournalFile, readJournalFile } from './file-journal.js';
import {
  acquireFileLease,
  assertFileLease,
  heartbeatFileLease,
  readFileLease,
  releaseFileLease,
  whileHolding,
} from './file-lease.js';
import { SYNC_EVENT_TYPES } from './journal-event-schema.js';
import { assertSlug, decodeLedgerText, serializeEvents, serializeLedger } from './ledger-codec.js';
import { LedgerCorruptError, LedgerInvalidError } from './ledger-errors.js';
import type { LedgerLoadFailure, LedgerStore } from './ledger-store.js';
import { systemLeaseEnvironment, type LeaseEnvironment } from './lease.js';
import type { DecodedLedger } from './migrate-ledger.js';
import { createRedactor, type Redactor } from './redact.js';

/** Options of {@link createFileLedgerStore}. */
export interface FileLedgerStoreOptions {
  /** The state directory, normally `<project>/.allium-loop`. Created on the first acquire. */
  readonly dir: string;
  /** Redaction applied to every write; by default built from `process.env`. */
  readonly redactor?: Redactor;
  /** Clock, pid, host, liveness, tokens and the staleness bound; the real ones by default. */
  readonly env?: Partial<LeaseEnvironment>;
}

/** The files of one run inside the state directory. */
export interface RunFiles {
  readonly ledger: string;
  readonly lock: string;
  readonly journal: string;
}

/** Paths of `<slug>.json`, `<slug>.lock` and `<slug>.events.ndjson` under `dir`. Throws on a malformed slug. */
export function runFiles(dir: string, slug: string): RunFiles {
  assertSlug(slug);
  return {
    ledger: join(dir, `${slug}.json`),
    lock: join(dir, `${slug}.lock`),
    journal: join(dir, `${slug}.events.ndjson`),
  };
}

const LEDGER_FILE = /^([a-z0-9]+(?:-[a-z0-9]+)*)\.json$/;

/** Text a store read or wrote, and the identity (inode, size, mtime) of the file that held it. */
interface KnownText {
  readonly text: string;
  readonly identity: string;
}

/** Inode, size and modification time of a file, or `undefined` when it does not exist. */
async function fileIdentity(file: string): Promise<string | undefined> {
  try {
    const info = await stat(file, { bigint: true });
    return `${info.dev}:${info.ino}:${info.size}:${info.mtimeNs}:${info.ctimeNs}`;
  } catch (cause) {
    if (errnoCode(cause) === 'ENOENT') return undefined;
    throw cause;
  }
}

function errnoCode(cause: unknown): string | undefined {
  return (cause as NodeJS.ErrnoException | undefined)?.code;
}

/** Copies a corrupt ledger to `<slug>.corrupt-<hash>.json` (once per distinct content); `undefined` if impossible. */
async function keepBackup(
  dir: string,
  slug: string,
  text: string,
  source: string,
): Promise<string | undefined> {
  const backup = join(
    dir,
    `${slug}.corrupt-${createHash('sha256').update(text).digest('hex').slice(0, 12)}.json`,
  );
  try {
    await copyFile(source, backup, constants.COPYFILE_EXCL);
  } catch (cause) {
    if (errnoCode(cause) !== 'EEXIST') return undefined;
  }
  return backup;
}

async function readLedgerFile(
  dir: string,
  slug: string,
): Promise<Result<{ text: string; decoded: DecodedLedger }, LedgerLoadFailure>> {
  const file = runFiles(dir, slug).ledger;
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (cause) {
    if (errnoCode(cause) === 'ENOENT') return err({ kind: 'missing', file });
    const issues = [`cannot read: ${cause instanceof Error ? cause.message : String(cause)}`];
    return err({
      kind: 'corrupt',
      file,
      reason: 'unreadable',
      issues,
      backup: undefined,
      error: new LedgerCorruptError(file, issues, undefined),
    });
  }
  const decoded = decodeLedgerText(text);
  if (decoded.ok) return ok({ text, decoded: decoded.value });
  const { reason, issues, upstream } = decoded.issues;
  // The upstream skill's ledger is not damaged: no backup; a spec run adopts it.
  const backup = upstream === undefined ? await keepBackup(dir, slug, text, file) : undefined;
  return err({
    kind: 'corrupt',
    file,
    reason,
    issues,
    backup,
    ...(upstream === undefined ? {} : { upstream }),
    error: new LedgerCorruptError(file, issues, backup),
  });
}

/**
 * Removes temp files crashed processes left for this slug (ledger, lock and mutex temps). Called by the new lease
 * holder; a racer whose in-flight temp disappears simply retries.
 */
async function removeOrphanTemps(dir: string, slug: string): Promise<void> {
  // Temps of hidden files (the mutex) start with two dots.
  const prefixes = [`.${slug}.`, `..${slug}.`];
  const names = await readdir(dir).catch(() => [] as string[]);
  await Promise.all(
    names
      .filter((n) => prefixes.some((p) => n.startsWith(p)) && (n.endsWith('.tmp') || n.endsWith('.broken')))
      .map((n) => rm(join(dir, n), { force: true })),
  );
}

/**
 * The file adapter of {@link LedgerStore} over `.allium-loop/`: atomic ledger writes (temp file, fsync, rename,
 * directory fsync; unchanged content not rewritten), a lock file per run with fencing on every write, an
 * append-only NDJSON journal fsynced at phase boundaries, and backups of corrupt ledgers, which are never
 * overwritten.
 */
export function createFileLedgerStore(options: FileLedgerStoreOptions): LedgerStore {
  const { dir } = options;
  const env = systemLeaseEnvironment(options.env);
  const redactor = options.redactor ?? createRedactor(process.env);
  /** The text this store last read or wrote per slug, with the file's identity then; saves skip re-reading it. */
  const known = new Map<string, KnownText>();

  const existingText = async (file: string, slug: string): Promise<string | undefined> => {
    const identity = await fileIdentity(file);
    if (identity === undefined) return undefined;
    const remembered = known.get(slug);
    if (remembered?.identity === identity) return remembered.text;
    return readFile(file, 'utf8');
  };

  return {
    async load(slug) {
      const identity = await fileIdentity(runFiles(dir, slug).ledger);
      const read = await readLedgerFile(dir, slug);
      if (!read.ok) return read;
      if (identity !== undefined) known.set(slug, { text: read.value.text, identity });
      return ok(read.value.decoded);
    },
    async save(lease, ledger) {
      const files = runFiles(dir, lease.slug);
      await assertFileLease(files.lock, lease);
      if (ledger.slug !== lease.slug)
        throw new LedgerInvalidError('ledger', [
          `slug: "${ledger.slug}" is not the leased slug "${lease.slug}"`,
        ]);
      const text = serializeLedger(ledger, redactor);
      const existing = await existingText(files.ledger, lease.slug);
      if (existing === text) return 'unchanged';
      if (existing !== undefined && existing !== known.get(lease.slug)?.text) {
        const read = await readLedgerFile(dir, lease.slug);
        // A ledger the upstream skill wrote is adopted: the run's save replaces it (keeping its upstream fields).
        if (!read.ok && read.issues.kind === 'corrupt' && read.issues.reason !== 'upstream_ledger')
          throw read.issues.error;
      }
      await writeFileAtomic(files.ledger, text, (commit) => whileHolding(files.lock, lease, env, commit));
      const identity = await fileIdentity(files.ledger);
      if (identity === undefined) known.delete(lease.slug);
      else known.set(lease.slug, { text, identity });
      return 'written';
    },
    async list() {
      const names = await readdir(dir).catch((cause: unknown) => {
        if (errnoCode(cause) === 'ENOENT') return [] as string[];
        throw cause;
      });
      return names.flatMap((name) => LEDGER_FILE.exec(name)?.[1] ?? []).sort();
    },
    async acquire(slug) {
      const files = runFiles(dir, slug);
      await mkdir(dir, { recursive: true });
      const acquired = await acquireFileLease(files.lock, slug, env);
      await removeOrphanTemps(dir, slug);
      if (acquired.takenOver !== undefined) {
        const { previous, reason } = acquired.takenOver;
        const event = { type: 'lease_taken_over' as const, at: env.now().toISOString(), previous, reason };
        await appendJournalFile(files.journal, serializeEvents([event], redactor), true);
      }
      return acquired;
    },
    async heartbeat(lease) {
      await heartbeatFileLease(runFiles(dir, lease.slug).lock, lease, env);
    },
    async release(lease) {
      await releaseFileLease(runFiles(dir, lease.slug).lock, lease, env);
    },
    async readLease(slug) {
      return readFileLease(runFiles(dir, slug).lock);
    },
    async append(lease, events, appendOptions = {}) {
      const files = runFiles(dir, lease.slug);
      const lines = serializeEvents(events, redactor);
      const sync = appendOptions.sync ?? events.some((event) => SYNC_EVENT_TYPES.has(event.type));
      await whileHolding(files.lock, lease, env, () => appendJournalFile(files.journal, lines, sync));
    },
    async readJournal(slug) {
      return readJournalFile(runFiles(dir, slug).journal);
    },
  };
}
