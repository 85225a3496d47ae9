import { mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemLeaseEnvironment } from './lease.js';
import { mutexPathOf, withLockMutex } from './lock-mutex.js';

describe('withLockMutex', () => {
  let dir: string;
  let lock: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ledger-mutex-'));
    lock = join(dir, 'run.lock');
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('runs critical sections one at a time and removes the mutex afterwards', async () => {
    const env = systemLeaseEnvironment();
    let inside = 0;
    let maxInside = 0;
    const section = () =>
      withLockMutex(lock, env, async () => {
        inside += 1;
        maxInside = Math.max(maxInside, inside);
        await new Promise((resolve) => setTimeout(resolve, 5));
        inside -= 1;
      });
    await Promise.all(Array.from({ length: 8 }, section));
    expect(maxInside).toBe(1);
    expect(await readdir(dir)).toEqual([]);
  });

  it('releases the mutex when the critical section throws', async () => {
    const env = systemLeaseEnvironment();
    await expect(withLockMutex(lock, env, () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await withLockMutex(lock, env, async () => 'again')).toBe('again');
  });

  it('breaks a mutex left by a dead process on this host', async () => {
    const env = systemLeaseEnvironment({ isPidAlive: (pid) => pid !== 999_999 });
    await writeFile(mutexPathOf(lock), `999999 ${env.host}\n`);
    expect(await withLockMutex(lock, env, async () => 'ran')).toBe('ran');
  });

  it('breaks a mutex older than its bound whoever left it', async () => {
    const env = systemLeaseEnvironment();
    await writeFile(mutexPathOf(lock), `1 some-other-host\n`);
    const old = new Date(Date.now() - 60_000);
    await utimes(mutexPathOf(lock), old, old);
    expect(await withLockMutex(lock, env, async () => 'ran')).toBe('ran');
  });
});
