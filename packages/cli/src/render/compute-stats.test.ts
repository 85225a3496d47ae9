import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createLedger, type JournalEvent, type Ledger, type TerminalState } from '@allium-loop/ledger';
import { afterEach, describe, expect, it } from 'vitest';
import { createRecordingIo } from '../cli-io.js';
import { statsCommand } from '../commands/stats.js';
import { median, percentile, type RunStats } from './compute-stats.js';
import { copyDemoRun } from './html-report.test-helpers.js';

describe('median and percentile', () => {
  it.each([
    { values: [], median: null, p90: null },
    { values: [7], median: 7, p90: 7 },
    { values: [4, 1], median: 2.5, p90: 4 },
    { values: [3, 1, 2], median: 2, p90: 3 },
    { values: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], median: 5.5, p90: 9 },
    { values: [10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 100], median: 6, p90: 10 },
  ])('$values → median $median, p90 $p90', ({ values, median: m, p90 }) => {
    expect(median(values)).toBe(m);
    expect(percentile(values, 90)).toBe(p90);
  });
});

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

const at = '2026-01-01T00:00:00.000Z';

function run(slug: string, state: TerminalState | null, spent: Partial<Ledger['spent']> = {}): Ledger {
  const base = createLedger({ goal: slug, slug, mode: 'spec', now: new Date(at) });
  return {
    ...base,
    status: state === null ? 'running' : 'terminal',
    terminal: state === null ? null : { state, reason: state, detail: state, at },
    spent: { ...base.spent, ...spent },
  };
}

async function addRun(cwd: string, ledger: Ledger, events: JournalEvent[] = []): Promise<void> {
  const dir = join(cwd, '.allium-loop');
  await writeFile(join(dir, `${ledger.slug}.json`), JSON.stringify(ledger));
  await writeFile(
    join(dir, `${ledger.slug}.events.ndjson`),
    events.map((e) => `${JSON.stringify(e)}\n`).join(''),
  );
}

describe('allium-loop stats', () => {
  it('counts every metric of docs/metrics.md over the runs of a project', async () => {
    const cwd = await copyDemoRun(); // one converged run: 4 ticks, 12 calls, $0.78, slices $0.42/$0.13/$0.11
    dirs.push(cwd);
    await addRun(cwd, run('stalled', 'no_progress', { agentCalls: 5, usd: 0.5 }), [
      {
        type: 'violation',
        at,
        tick: 2,
        kind: 'test_edit',
        detail: 'edited a protected test',
        reverted: true,
      },
      { type: 'violation', at, tick: 3, kind: 'skip_added', detail: 'skipped a test', reverted: true },
    ]);
    await addRun(cwd, run('capped', 'max_ticks', { agentCalls: 9, usd: 1 }));
    await addRun(cwd, run('still-going', null));
    await addRun(cwd, run('cheap', 'converged', { agentCalls: 2, usd: null, usdUnknownCalls: 2 }), [
      { type: 'x-verify.rate_limit_wait', at, tick: 1, data: { kind: 'waited', waitedMs: 30_000 } },
    ]);
    await addRun(cwd, run('priced', 'converged', { agentCalls: 6, usd: 0.3, usdUnknownCalls: 1 }));
    await writeFile(join(cwd, '.allium-loop', 'capped.witness.json'), JSON.stringify({ verdict: 'FAIL' }));
    await writeFile(join(cwd, '.allium-loop', 'broken.json'), '{ not json');

    const io = createRecordingIo(cwd);
    expect(await statsCommand().run(['--json'], io)).toBe(0);
    const stats = JSON.parse(io.out()) as RunStats;
    expect(stats.runs).toBe(6);
    expect(stats.unreadable).toBe(1);
    expect(stats.byState).toEqual({ converged: 3, no_progress: 1, max_ticks: 1, running: 1 });
    expect(stats.ticksToConverge).toEqual({ n: 3, median: 0, p90: 4 });
    expect(stats.callsToConverge).toEqual({ n: 3, median: 6, p90: 12 });
    expect(stats.costPerConvergedRun).toMatchObject({
      n: 2,
      median: 0.54,
      p90: 0.78,
      unknownCost: 1,
      lowerBound: 1,
    });
    expect(stats.costPerConvergedRun.totalUsd).toBeCloseTo(1.08);
    expect(stats.costPerConvergedSlice.n).toBe(3);
    expect(stats.costPerConvergedSlice.median).toBeCloseTo(0.13);
    expect(stats.cheatsCaught).toBe(2);
    expect(stats.runsWithCheats).toBe(1);
    expect(stats.stallStops).toBe(1);
    expect(stats.witnessFailures).toBe(1);
    expect(stats.rateLimitWaits).toBe(1);
    expect(stats.rateLimitWaitedMs).toBe(30_000);

    const text = createRecordingIo(cwd);
    expect(await statsCommand().run([], text)).toBe(0);
    expect(text.out()).toContain(
      'runs: 6 (+1 unreadable) — converged 3, max_ticks 1, no_progress 1, running 1',
    );
    expect(text.out()).toContain('agent calls to converge: median 6, p90 12 (n=3)');
    expect(text.out()).toContain('1 with unknown cost left out; 1 lower bounds');
  });

  it('says there is nothing to measure in a project without runs, and rejects unknown flags', async () => {
    const io = createRecordingIo('/nonexistent-allium-loop-project');
    expect(await statsCommand().run([], io)).toBe(0);
    expect(io.out()).toContain('runs: 0');
    expect(io.out()).toContain('ticks to converge: median –, p90 – (n=0)');
    expect(await statsCommand().run(['--bogus'], createRecordingIo('/tmp'))).toBe(2);
  });
});
