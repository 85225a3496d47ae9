import { link, readFile, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fsyncDirectory, tempPathFor, writeFileAtomic, writeNewFileSynced } from './atomic-write.js';
import { LeaseHeldError, LeaseLostError, type LeaseHolder } from './ledger-errors.js';
import type { AcquiredLease, Lease, LeaseRecord } from './ledger-store.js';
import { judgeStaleness, parseLeaseRecord, type LeaseEnvironment } from './lease.js';
import { withLockMutex } from './lock-mutex.js';

/** A lock file as found on disk: absent, unparseable (never written by us), or a record. */
type LockState =
  | { readonly kind: 'absent' }
  | { readonly kind: 'unparseable'; readonly text: string }
  | { readonly kind: 'held'; readonly text: string; readonly record: LeaseRecord };

const UNKNOWN_HOLDER: LeaseHolder = {
  pid: -1,
  host: 'unknown',
  startedAt: 'unknown',
  heartbeatAt: 'unknown',
};

function errnoCode(cause: unknown): string | undefined {
  return (cause as NodeJS.ErrnoException | undefined)?.code;
}

async function readLock(lockPath: string): Promise<LockState> {
  let text: string;
  try {
    text = await readFile(lockPath, 'utf8');
  } catch (cause) {
    if (errnoCode(cause) === 'ENOENT') return { kind: 'absent' };
    throw cause;
  }
  const record = parseLeaseRecord(text);
  return record === undefined ? { kind: 'unparseable', text } : { kind: 'held', text, record };
}

/** Reads the lock record at `lockPath`; `undefined` when absent or unparseable. */
export async function readFileLease(lockPath: string): Promise<LeaseRecord | undefined> {
  const state = await readLock(lockPath);
  return state.kind === 'held' ? state.record : undefined;
}

/** Creates the lock with `text` only if none exists (temp file + hard link: exclusive and never half-written). */
async function createLockExclusively(lockPath: string, text: string): Promise<boolean> {
  const temp = tempPathFor(lockPath);
  await writeNewFileSynced(temp, text);
  try {
    await link(temp, lockPath);
    await fsyncDirectory(dirname(lockPath));
    return true;
  } catch (cause) {
    // ENOENT: a new lease holder removed our temp file as an orphan; try again.
    if (errnoCode(cause) === 'EEXIST' || errnoCode(cause) === 'ENOENT') return false;
    throw cause;
  } finally {
    await rm(temp, { force: true });
  }
}

function newRecord(slug: string, env: LeaseEnvironment): LeaseRecord {
  const at = env.now().toISOString();
  return { slug, token: env.newToken(), pid: env.pid, host: env.host, startedAt: at, heartbeatAt: at };
}

function leaseOf(record: LeaseRecord): Lease {
  return {
    slug: record.slug,
    token: record.token,
    pid: record.pid,
    host: record.host,
    startedAt: record.startedAt,
  };
}

function holderOf(state: LockState): LeaseHolder {
  if (state.kind !== 'held') return UNKNOWN_HOLDER;
  const { pid, host, startedAt, heartbeatAt } = state.record;
  return { pid, host, startedAt, heartbeatAt };
}

/**
 * Replaces a stale lock with a new one, under the mutex, if the lock still has the content judged stale.
 * The lock never disappears during a takeover, so a racer cannot slip in beside the taker.
 */
async function replaceIfUnchanged(
  lockPath: string,
  expected: string,
  record: LeaseRecord,
  env: LeaseEnvironment,
): Promise<boolean> {
  return withLockMutex(lockPath, env, async () => {
    const current = await readLock(lockPath);
    if (current.kind === 'absent' || current.text !== expected) return false;
    await writeFileAtomic(lockPath, `${JSON.stringify(record)}\n`);
    return true;
  });
}

/**
 * Acquires `lockPath` for `slug`, taking over a stale lock (dead pid on this host, expired heartbeat, or an
 * unparseable lock). Throws `LeaseHeldError` while a live holder has it.
 */
export async function acquireFileLease(
  lockPath: string,
  slug: string,
  env: LeaseEnvironment,
): Promise<AcquiredLease> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const record = newRecord(slug, env);
    if (await createLockExclusively(lockPath, `${JSON.stringify(record)}\n`)) {
      return { lease: leaseOf(record), takenOver: undefined };
    }
    const current = await readLock(lockPath);
    if (current.kind === 'absent') continue;
    const reason = current.kind === 'held' ? judgeStaleness(current.record, env) : 'stale_heartbeat';
    if (reason === undefined) throw new LeaseHeldError(slug, lockPath, holderOf(current));
    if (await replaceIfUnchanged(lockPath, current.text, record, env)) {
      return { lease: leaseOf(record), takenOver: { previous: holderOf(current), reason } };
    }
  }
  throw new LeaseHeldError(slug, lockPath, holderOf(await readLock(lockPath)));
}

/** Throws `LeaseLostError` unless the lock at `lockPath` carries `lease.token`. */
export async function assertFileLease(lockPath: string, lease: Lease): Promise<void> {
  const current = await readLock(lockPath);
  if (current.kind === 'held' && current.record.token === lease.token) return;
  const detail =
    current.kind === 'held'
      ? `pid ${current.record.pid} on ${current.record.host} holds it since ${current.record.startedAt}`
      : 'the lock file is gone';
  throw new LeaseLostError(lease.slug, lockPath, detail);
}

/**
 * Runs `write` only while `lease` holds the lock, with no takeover able to slip in between the check and the
 * write (both run under the lock's mutex). Throws `LeaseLostError` otherwise.
 */
export function whileHolding<T>(
  lockPath: string,
  lease: Lease,
  env: LeaseEnvironment,
  write: () => Promise<T>,
): Promise<T> {
  return withLockMutex(lockPath, env, async () => {
    await assertFileLease(lockPath, lease);
    return write();
  });
}

/** Rewrites the heartbeat of a held lock. Throws `LeaseLostError` when it is no longer held. */
export async function heartbeatFileLease(
  lockPath: string,
  lease: Lease,
  env: LeaseEnvironment,
): Promise<void> {
  const record: LeaseRecord = { ...lease, heartbeatAt: env.now().toISOString() };
  await whileHolding(lockPath, lease, env, () => writeFileAtomic(lockPath, `${JSON.stringify(record)}\n`));
}

/** Removes the lock when it still carries `lease.token`; leaves another holder's lock alone. */
export async function releaseFileLease(lockPath: string, lease: Lease, env: LeaseEnvironment): Promise<void> {
  await withLockMutex(lockPath, env, async () => {
    const current = await readLock(lockPath);
    if (current.kind === 'held' && current.record.token === lease.token) await rm(lockPath, { force: true });
  });
}
