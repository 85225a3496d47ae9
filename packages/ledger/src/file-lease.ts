import { randomBytes } from 'node:crypto';
import { link, readFile, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { fsyncDirectory, tempPathFor, writeFileAtomic, writeNewFileSynced } from './atomic-write.js';
import { LeaseHeldError, LeaseLostError, type LeaseHolder } from './ledger-errors.js';
import type { AcquiredLease, Lease, LeaseRecord } from './ledger-store.js';
import { judgeStaleness, parseLeaseRecord, type LeaseEnvironment } from './lease.js';

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
    if (errnoCode(cause) === 'EEXIST') return false;
    throw cause;
  } finally {
    await rm(temp, { force: true });
  }
}

/** Where a stale lock waits for the winner of the takeover to read it and journal the takeover. */
function stalePathOf(lockPath: string): string {
  return join(dirname(lockPath), `.${basename(lockPath)}.stale`);
}

/**
 * Moves the lock to `target` if it still has the content `expected`. Returns false when it changed meanwhile
 * (then it is put back unless somebody created a new lock) or disappeared. Rename is atomic, so two processes
 * cannot both move the same lock.
 */
async function moveLockIfUnchanged(lockPath: string, expected: string, target: string): Promise<boolean> {
  try {
    await rename(lockPath, target);
  } catch (cause) {
    if (errnoCode(cause) === 'ENOENT') return false;
    throw cause;
  }
  const moved = await readFile(target, 'utf8');
  if (moved === expected) return true;
  await link(target, lockPath).catch((cause: unknown) => {
    if (errnoCode(cause) !== 'EEXIST') throw cause;
  });
  await rm(target, { force: true });
  return false;
}

/**
 * After winning the lock: takes the stale lock a taker moved aside (whoever moved it, only the winner reads it),
 * so the takeover is reported by the process that now holds the lease.
 */
async function claimStaleLock(lockPath: string, env: LeaseEnvironment): Promise<AcquiredLease['takenOver']> {
  const claimed = `${stalePathOf(lockPath)}.${randomBytes(6).toString('hex')}`;
  try {
    await rename(stalePathOf(lockPath), claimed);
  } catch (cause) {
    if (errnoCode(cause) === 'ENOENT') return undefined;
    throw cause;
  }
  try {
    const text = await readFile(claimed, 'utf8');
    const record = parseLeaseRecord(text);
    if (record === undefined) return { previous: UNKNOWN_HOLDER, reason: 'stale_heartbeat' };
    const { pid, host, startedAt, heartbeatAt } = record;
    return {
      previous: { pid, host, startedAt, heartbeatAt },
      reason: judgeStaleness(record, env) ?? 'stale_heartbeat',
    };
  } finally {
    await rm(claimed, { force: true });
  }
}

function newRecord(slug: string, env: LeaseEnvironment): LeaseRecord {
  const at = env.now().toISOString();
  return { slug, token: env.newToken(), pid: env.pid, host: env.host, startedAt: at, heartbeatAt: at };
}

function holderOf(state: LockState): LeaseHolder {
  if (state.kind !== 'held') return UNKNOWN_HOLDER;
  const { pid, host, startedAt, heartbeatAt } = state.record;
  return { pid, host, startedAt, heartbeatAt };
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
  for (let attempt = 0; attempt < 20; attempt += 1) {
    const record = newRecord(slug, env);
    if (await createLockExclusively(lockPath, `${JSON.stringify(record)}\n`)) {
      const lease: Lease = {
        slug,
        token: record.token,
        pid: record.pid,
        host: record.host,
        startedAt: record.startedAt,
      };
      return { lease, takenOver: await claimStaleLock(lockPath, env) };
    }
    const current = await readLock(lockPath);
    if (current.kind === 'absent') continue;
    const reason = current.kind === 'held' ? judgeStaleness(current.record, env) : 'stale_heartbeat';
    if (reason === undefined) throw new LeaseHeldError(slug, lockPath, holderOf(current));
    await moveLockIfUnchanged(lockPath, current.text, stalePathOf(lockPath));
  }
  const current = await readLock(lockPath);
  throw new LeaseHeldError(slug, lockPath, holderOf(current));
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

/** Rewrites the heartbeat of a held lock. Throws `LeaseLostError` when it is no longer held. */
export async function heartbeatFileLease(
  lockPath: string,
  lease: Lease,
  env: LeaseEnvironment,
): Promise<void> {
  await assertFileLease(lockPath, lease);
  const record: LeaseRecord = { ...lease, heartbeatAt: env.now().toISOString() };
  await writeFileAtomic(lockPath, `${JSON.stringify(record)}\n`, () => assertFileLease(lockPath, lease));
}

/** Removes the lock when it still carries `lease.token`; leaves another holder's lock alone. */
export async function releaseFileLease(lockPath: string, lease: Lease): Promise<void> {
  const current = await readLock(lockPath);
  if (current.kind !== 'held' || current.record.token !== lease.token) return;
  const aside = join(dirname(lockPath), `.${basename(lockPath)}.${randomBytes(6).toString('hex')}.released`);
  if (await moveLockIfUnchanged(lockPath, current.text, aside)) await rm(aside, { force: true });
}
