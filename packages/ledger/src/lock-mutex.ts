import { link, readFile, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { tempPathFor, writeNewFileSynced } from './atomic-write.js';
import { LedgerError } from './ledger-errors.js';
import type { LeaseEnvironment } from './lease.js';

/** A mutex nobody released for this long (its holder crashed in a few-syscall critical section) is broken. */
const MUTEX_STALE_MS = 5_000;
/** How long to wait for a busy mutex before giving up with a retryable error. */
const MUTEX_WAIT_MS = 15_000;

function errnoCode(cause: unknown): string | undefined {
  return (cause as NodeJS.ErrnoException | undefined)?.code;
}

/** The mutex file guarding changes to `lockPath`: `.<slug>.lock.mutex`. */
export function mutexPathOf(lockPath: string): string {
  return join(dirname(lockPath), `.${basename(lockPath)}.mutex`);
}

async function tryCreate(mutex: string, env: LeaseEnvironment): Promise<boolean> {
  const temp = tempPathFor(mutex);
  await writeNewFileSynced(temp, `${env.pid} ${env.host}\n`);
  try {
    await link(temp, mutex);
    return true;
  } catch (cause) {
    // ENOENT: a new lease holder removed our temp file as an orphan; try again.
    if (errnoCode(cause) === 'EEXIST' || errnoCode(cause) === 'ENOENT') return false;
    throw cause;
  } finally {
    await rm(temp, { force: true });
  }
}

/** True when the mutex holder is a dead pid on this host, or the mutex is older than {@link MUTEX_STALE_MS}. */
async function isAbandoned(mutex: string, env: LeaseEnvironment): Promise<{ ino: bigint } | undefined> {
  try {
    const info = await stat(mutex, { bigint: true });
    const [pid, host] = (await readFile(mutex, 'utf8')).trim().split(' ');
    const deadHolder = host === env.host && Number(pid) !== env.pid && !env.isPidAlive(Number(pid));
    const old = Date.now() - Number(info.mtimeMs) > MUTEX_STALE_MS;
    return deadHolder || old ? { ino: info.ino } : undefined;
  } catch (cause) {
    if (errnoCode(cause) === 'ENOENT') return undefined;
    throw cause;
  }
}

/** Removes an abandoned mutex, but only the very file judged abandoned (compared by inode). */
async function breakMutex(mutex: string, ino: bigint): Promise<void> {
  const aside = `${tempPathFor(mutex)}.broken`;
  try {
    await rename(mutex, aside);
  } catch (cause) {
    if (errnoCode(cause) === 'ENOENT') return;
    throw cause;
  }
  const moved = await stat(aside, { bigint: true });
  if (moved.ino !== ino) {
    await link(aside, mutex).catch((cause: unknown) => {
      if (errnoCode(cause) !== 'EEXIST') throw cause;
    });
  }
  await rm(aside, { force: true });
}

/**
 * Runs `critical` while holding the mutex of a lock file, so that checking the lock and acting on it (replacing a
 * stale lock, refreshing a heartbeat, releasing, the last fence check before a write) never interleave between
 * processes. A mutex left by a crashed process is broken once its pid is dead or it is 5 s old. Throws
 * `LedgerError` `ledger.lock_busy` (retryable) after waiting 15 s.
 */
export async function withLockMutex<T>(
  lockPath: string,
  env: LeaseEnvironment,
  critical: () => Promise<T>,
): Promise<T> {
  const mutex = mutexPathOf(lockPath);
  const deadline = Date.now() + MUTEX_WAIT_MS;
  while (!(await tryCreate(mutex, env))) {
    const abandoned = await isAbandoned(mutex, env);
    if (abandoned !== undefined) {
      await breakMutex(mutex, abandoned.ino);
      continue;
    }
    if (Date.now() > deadline) {
      throw new LedgerError(`The lock ${lockPath} stayed busy for ${MUTEX_WAIT_MS / 1000} s.`, {
        code: 'ledger.lock_busy',
        retryable: true,
        context: { lockPath, mutex },
        hint: `If no allium-loop process is running, remove ${mutex}.`,
      });
    }
    await sleep(2 + Math.random() * 8);
  }
  try {
    return await critical();
  } finally {
    await rm(mutex, { force: true });
  }
}
