/**
 * Ledger benchmark: save and load+validate a ledger with 10,000 history entries, and read a journal of 1,000
 * events, through the real file store (fsync included). Prints the median of each.
 * Run from the repository root: node --conditions=development --import tsx tools/bench/ledger/ledger-bench.ts
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createFileLedgerStore, createRedactor, type JournalEvent } from '@allium-loop/ledger';
import { sampleLedger, withHistory } from '@allium-loop/ledger/testing';

const HISTORY = 10_000;
const EVENTS = 1_000;
const RUNS = 25;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Wall-clock and CPU (user + system) milliseconds of each run; CPU time is the steadier figure on a busy machine. */
interface Samples {
  readonly wall: number[];
  readonly cpu: number[];
}

async function time(runs: number, body: (i: number) => Promise<unknown>): Promise<Samples> {
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < runs; i += 1) {
    const cpuStart = process.cpuUsage();
    const start = performance.now();
    await body(i);
    wall.push(performance.now() - start);
    const used = process.cpuUsage(cpuStart);
    cpu.push((used.user + used.system) / 1000);
  }
  return { wall, cpu };
}

const root = await mkdtemp(join(tmpdir(), 'ledger-bench-'));
const dir = join(root, '.allium-loop');
try {
  const store = createFileLedgerStore({ dir, redactor: createRedactor(process.env) });
  const { lease } = await store.acquire('bench-run');
  const ledger = withHistory(sampleLedger('bench-run'), HISTORY);
  const events: JournalEvent[] = Array.from({ length: EVENTS }, (_, i) => ({
    type: 'phase_ended',
    at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
    tick: Math.floor(i / 10) + 1,
    phase: 'implement',
    outcome: 'ok',
    durationMs: 1234,
    detail: `event ${i}`,
  }));
  await store.append(lease, events, { sync: true });

  const save = await time(RUNS, (i) => store.save(lease, { ...ledger, tick: i + 1 }));
  const unchanged = await time(RUNS, () => store.save(lease, { ...ledger, tick: RUNS }));
  const load = await time(RUNS, async () => {
    const loaded = await store.load('bench-run');
    if (!loaded.ok) throw new Error('load failed');
  });
  const journal = await time(RUNS, async () => {
    const read = await store.readJournal('bench-run');
    if (read.events.length !== EVENTS) throw new Error('journal incomplete');
  });
  const append = await time(RUNS, (i) =>
    store.append(lease, [{ type: 'phase_started', at: new Date().toISOString(), tick: i, phase: 'verify' }]),
  );
  const size = (await stat(join(dir, 'bench-run.json'))).size;

  const line = (name: string, { wall, cpu }: Samples): string =>
    `${name.padEnd(44)} median ${median(wall).toFixed(1).padStart(6)} ms wall, ${median(cpu).toFixed(1).padStart(6)} ms cpu   (wall min ${Math.min(...wall).toFixed(1)}, max ${Math.max(...wall).toFixed(1)}, n=${wall.length})`;
  process.stdout.write(
    [
      `load average ${loadavg()
        .map((n) => n.toFixed(2))
        .join(' ')} on ${availableParallelism()} cores`,
      `ledger: ${HISTORY} history entries, ${(size / 1024).toFixed(0)} KiB; journal: ${EVENTS} events`,
      line('save (changed, redact+validate+fsync+rename)', save),
      line('save (unchanged, no write)', unchanged),
      line('load + migrate + validate', load),
      line(`read journal (${EVENTS} events, validated)`, journal),
      line('append 1 event (fsync)', append),
      '',
    ].join('\n'),
  );
} finally {
  await rm(root, { recursive: true, force: true });
}
