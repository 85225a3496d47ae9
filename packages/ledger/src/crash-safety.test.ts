import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createFileLedgerStore } from './file-ledger-store.js';
import { createRedactor } from './redact.js';
import { compileChildren } from './test-children/compile-children.test-helpers.js';
import { crashState } from './test-children/crash-state.test-helpers.js';
import { spawnLineChild, type LineChild } from './test-children/line-child.test-helpers.js';

const LANES = 2;
const KILLS_PER_LANE = 100;
const MAX_DELAY_MS = 15;

interface LaneReport {
  readonly kills: number;
  readonly finalTick: number;
  readonly killsWithTempFile: number;
  readonly tornTails: number;
}

/** Checks the state a killed writer left behind; returns the tick it reached. */
async function checkAfterKill(
  dir: string,
  slug: string,
  previousTick: number,
): Promise<{ tick: number; temp: boolean; torn: boolean }> {
  const store = createFileLedgerStore({ dir, redactor: createRedactor({}) });
  const names = await readdir(dir);
  const temps = names.filter((name) => name.endsWith('.tmp'));
  // Each writer removes its predecessors' leftovers on acquire, so at most the last kill's remain.
  expect(temps.length, temps.join(' ')).toBeLessThanOrEqual(3);
  const temp = temps.length > 0;
  expect(await store.list()).toEqual(names.includes(`${slug}.json`) ? [slug] : []);
  const loaded = await store.load(slug);
  if (!loaded.ok) {
    expect(loaded.issues.kind, JSON.stringify(loaded.issues)).toBe('missing');
    return { tick: 0, temp, torn: false };
  }
  const { ledger } = loaded.value;
  expect(ledger).toEqual(crashState(slug, ledger.tick));
  expect(ledger.tick).toBeGreaterThanOrEqual(previousTick);
  const journal = await store.readJournal(slug);
  const seqs = journal.events.flatMap((event) => (event.type === 'note' ? [event.data?.['seq']] : []));
  expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 1));
  expect(seqs.length === ledger.tick || seqs.length === ledger.tick - 1).toBe(true);
  return { tick: ledger.tick, temp, torn: journal.tornTail };
}

async function runLane(script: string, lane: number): Promise<LaneReport> {
  const root = await mkdtemp(join(tmpdir(), `ledger-crash-${lane}-`));
  const dir = join(root, '.allium-loop');
  const slug = `crash-${lane}`;
  const spawnWriter = (): LineChild => spawnLineChild(script, [dir, slug]);
  let next = spawnWriter();
  let tick = 0;
  let killsWithTempFile = 0;
  let tornTails = 0;
  try {
    for (let kill = 0; kill < KILLS_PER_LANE; kill += 1) {
      const writer = next;
      next = spawnWriter();
      writer.send('go');
      const ready = await writer.nextLine();
      expect(ready, writer.stderr()).toMatch(/^ready \d+$/);
      expect(await writer.nextLine()).toMatch(/^wrote \d+$/);
      await sleep(Math.floor(Math.random() * MAX_DELAY_MS));
      await writer.kill();
      const checked = await checkAfterKill(dir, slug, tick);
      tick = checked.tick;
      if (checked.temp) killsWithTempFile += 1;
      if (checked.torn) tornTails += 1;
    }
  } finally {
    await next.kill();
    await rm(root, { recursive: true, force: true });
  }
  return { kills: KILLS_PER_LANE, finalTick: tick, killsWithTempFile, tornTails };
}

describe('crash safety', () => {
  it(`survives ${LANES * KILLS_PER_LANE} SIGKILLs of a writer at random moments`, async () => {
    const childDir = await compileChildren();
    const script = join(childDir, 'test-children/crash-writer.test-helpers.js');
    const reports = await Promise.all(Array.from({ length: LANES }, (_, lane) => runLane(script, lane)));
    const kills = reports.reduce((sum, report) => sum + report.kills, 0);
    expect(kills).toBeGreaterThanOrEqual(200);
    // Every writer saved at least once before it was killed, so the kills landed in a run that was writing.
    for (const report of reports) expect(report.finalTick).toBeGreaterThanOrEqual(KILLS_PER_LANE);
    console.info(`crash-safety: ${JSON.stringify(reports)}`);
  }, 400_000);
});
