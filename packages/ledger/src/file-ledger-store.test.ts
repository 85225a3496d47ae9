import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createFileLedgerStore } from './file-ledger-store.js';
import { createRedactor } from './redact.js';
import { createFakeClock } from './testing/fake-clock.js';
import { createFakeProcessTable } from './testing/fake-process-table.js';
import { describeLedgerStore } from './testing/describe-ledger-store.js';
import { sampleLedger } from './testing/sample-ledger.js';

async function readOrUndefined(path: string): Promise<string | undefined> {
  return readFile(path, 'utf8').catch(() => undefined);
}

describeLedgerStore('file', async () => {
  const root = await mkdtemp(join(tmpdir(), 'ledger-conf-'));
  const dir = join(root, '.allium-loop');
  const clock = createFakeClock();
  const processes = createFakeProcessTable();
  const envSecret = 'file-secret-value-42';
  const redactor = createRedactor({ SERVICE_TOKEN: envSecret });
  const staleAfterMs = 60_000;
  const ensureDir = async (): Promise<void> => {
    await import('node:fs/promises').then((fs) => fs.mkdir(dir, { recursive: true }));
  };
  return {
    clock,
    processes,
    staleAfterMs,
    envSecret,
    open: ({ pid, host = 'this-host' }) =>
      createFileLedgerStore({
        dir,
        redactor,
        env: { now: clock.now, pid, host, isPidAlive: processes.isAlive, staleAfterMs },
      }),
    writeRawLedger: async (slug, text) => {
      await ensureDir();
      await writeFile(join(dir, `${slug}.json`), text);
    },
    readRawLedger: (slug) => readOrUndefined(join(dir, `${slug}.json`)),
    writeRawJournal: async (slug, text) => {
      await ensureDir();
      await writeFile(join(dir, `${slug}.events.ndjson`), text);
    },
    readRawJournal: (slug) => readOrUndefined(join(dir, `${slug}.events.ndjson`)),
    dispose: () => rm(root, { recursive: true, force: true }),
  };
});

describe('file store specifics', () => {
  const open = async () => {
    const root = await mkdtemp(join(tmpdir(), 'ledger-file-'));
    const dir = join(root, '.allium-loop');
    return { root, dir, store: createFileLedgerStore({ dir, redactor: createRedactor({}) }) };
  };

  it('writes the documented file names and leaves no temp file behind', async () => {
    const { root, dir, store } = await open();
    const { lease } = await store.acquire('gift-cards');
    await store.save(lease, sampleLedger('gift-cards'));
    await store.append(lease, [{ type: 'note', at: '2026-01-01T00:00:00.000Z', message: 'hello' }]);
    expect((await readdir(dir)).sort()).toEqual([
      'gift-cards.events.ndjson',
      'gift-cards.json',
      'gift-cards.lock',
    ]);
    const lock = JSON.parse(await readFile(join(dir, 'gift-cards.lock'), 'utf8')) as Record<string, unknown>;
    expect(lock).toMatchObject({ slug: 'gift-cards', token: lease.token, pid: process.pid });
    await store.release(lease);
    expect((await readdir(dir)).includes('gift-cards.lock')).toBe(false);
    await rm(root, { recursive: true, force: true });
  });

  it('does not touch the file when content is unchanged', async () => {
    const { root, dir, store } = await open();
    const { lease } = await store.acquire('gift-cards');
    await store.save(lease, sampleLedger('gift-cards'));
    const before = await stat(join(dir, 'gift-cards.json'));
    expect(await store.save(lease, sampleLedger('gift-cards'))).toBe('unchanged');
    const after = await stat(join(dir, 'gift-cards.json'));
    expect(after.ino).toBe(before.ino);
    expect(after.mtimeMs).toBe(before.mtimeMs);
    await rm(root, { recursive: true, force: true });
  });

  it('ignores temp files and backups when listing, and removes orphan temp files on acquire', async () => {
    const { root, dir, store } = await open();
    const { lease } = await store.acquire('gift-cards');
    await store.save(lease, sampleLedger('gift-cards'));
    await store.release(lease);
    await writeFile(join(dir, '.gift-cards.json.abc123.tmp'), '{"half":');
    await writeFile(join(dir, '..gift-cards.lock.mutex.def456.tmp'), '123 host');
    await writeFile(join(dir, '.other.json.abc123.tmp'), '{"half":');
    await writeFile(join(dir, 'gift-cards.corrupt-0123456789ab.json'), '{}');
    expect(await store.list()).toEqual(['gift-cards']);
    await store.acquire('gift-cards');
    expect((await readdir(dir)).filter((name) => name.startsWith('.')).sort()).toEqual([
      '.other.json.abc123.tmp',
    ]);
    await rm(root, { recursive: true, force: true });
  });

  it('refuses a save when the lock file was replaced by another owner', async () => {
    const { root, dir, store } = await open();
    const { lease } = await store.acquire('gift-cards');
    const lockPath = join(dir, 'gift-cards.lock');
    const lock = JSON.parse(await readFile(lockPath, 'utf8')) as Record<string, unknown>;
    await writeFile(lockPath, JSON.stringify({ ...lock, token: 'someone-else-token', pid: 1 }));
    await expect(store.save(lease, sampleLedger('gift-cards'))).rejects.toMatchObject({
      code: 'ledger.lease_lost',
    });
    expect(await readOrUndefined(join(dir, 'gift-cards.json'))).toBeUndefined();
    await rm(root, { recursive: true, force: true });
  });
});
