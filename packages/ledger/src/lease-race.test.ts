import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFileLedgerStore } from './file-ledger-store.js';
import { createRedactor } from './redact.js';
import { compileChildren } from './test-children/compile-children.test-helpers.js';
import { spawnLineChild, type LineChild } from './test-children/line-child.test-helpers.js';

const RACERS = 4;
const ROUNDS = 50;

interface Answer {
  readonly pid: number;
  readonly won?: boolean;
  readonly saved?: boolean;
  readonly code?: string;
  readonly takenOver?: string | null;
}

async function ask(children: readonly LineChild[], line: string): Promise<Answer[]> {
  for (const child of children) child.send(line);
  return Promise.all(children.map(async (child) => JSON.parse(await child.nextLine()) as Answer));
}

/** Rewrites a lock so that its heartbeat is long expired (its live holder stopped heartbeating). */
async function expireLock(lockPath: string): Promise<void> {
  const record = JSON.parse(await readFile(lockPath, 'utf8')) as Record<string, unknown>;
  await writeFile(lockPath, JSON.stringify({ ...record, heartbeatAt: '2000-01-01T00:00:00.000Z' }));
}

describe('lease races between real processes', () => {
  let root: string;
  let dir: string;
  let racers: LineChild[] = [];

  beforeAll(async () => {
    const childDir = await compileChildren();
    root = await mkdtemp(join(tmpdir(), 'ledger-race-'));
    dir = join(root, '.allium-loop');
    racers = Array.from({ length: RACERS }, () =>
      spawnLineChild(join(childDir, 'test-children/lease-racer.test-helpers.js'), [dir]),
    );
    for (const racer of racers) expect(JSON.parse(await racer.nextLine())).toMatchObject({ ready: true });
  }, 120_000);

  afterAll(async () => {
    await Promise.all(racers.map((racer) => racer.kill()));
    await rm(root, { recursive: true, force: true });
  });

  it(`has exactly one winner in each of ${ROUNDS} races, one taker of each expired lease, and fences the loser`, async () => {
    for (let round = 0; round < ROUNDS; round += 1) {
      const slug = `race-${round}`;
      const first = await ask(racers, `race ${slug}`);
      const winners = first.filter((answer) => answer.won === true);
      expect(winners, `round ${round}: ${JSON.stringify(first)}`).toHaveLength(1);
      expect(first.filter((answer) => answer.won === false).map((answer) => answer.code)).toEqual(
        Array(RACERS - 1).fill('ledger.lease_held'),
      );
      const owner = racers.find((racer) => racer.process.pid === winners[0]?.pid)!;
      const others = racers.filter((racer) => racer !== owner);

      await expireLock(join(dir, `${slug}.lock`));
      const second = await ask(others, `race ${slug}`);
      const takers = second.filter((answer) => answer.won === true);
      expect(takers, `round ${round} takeover: ${JSON.stringify(second)}`).toHaveLength(1);
      expect(takers[0]?.takenOver).toBe('stale_heartbeat');

      const [fenced] = await ask([owner], `save ${slug}`);
      expect(fenced).toMatchObject({ saved: false, code: 'ledger.lease_lost' });
      const taker = others.find((racer) => racer.process.pid === takers[0]?.pid)!;
      expect((await ask([taker], `save ${slug}`))[0]).toMatchObject({ saved: true });
    }
    const store = createFileLedgerStore({ dir, redactor: createRedactor({}) });
    const journal = await store.readJournal('race-0');
    expect(journal.events.filter((event) => event.type === 'lease_taken_over')).toHaveLength(1);
    expect(await store.list()).toHaveLength(ROUNDS);
  }, 120_000);
});
