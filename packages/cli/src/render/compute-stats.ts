import type { JournalEvent, Ledger } from '@allium-loop/ledger';
import { readLoopState } from '@allium-loop/orchestrator';
import { isRateLimitWait } from './report-journal.js';
import { collectTicks } from './report-ticks.js';

/** What `stats` reads of one run: its ledger, its journal and its witness verdict (when it has a record). */
export interface RunFacts {
  readonly ledger: Ledger;
  readonly events: readonly JournalEvent[];
  readonly witnessVerdict: 'PASS' | 'FAIL' | 'INCONCLUSIVE' | null;
}

/** Median and 90th percentile of a sample; `null` when the sample is empty. */
export interface Spread {
  readonly n: number;
  readonly median: number | null;
  readonly p90: number | null;
}

/** The convergence metrics of a project's runs; each is defined in `docs/metrics.md`. */
export interface RunStats {
  readonly runs: number;
  readonly unreadable: number;
  /** Runs by terminal state; `running` for runs without one. */
  readonly byState: Readonly<Record<string, number>>;
  readonly converged: number;
  readonly ticksToConverge: Spread;
  readonly callsToConverge: Spread;
  readonly costPerConvergedRun: Spread & {
    readonly totalUsd: number;
    readonly unknownCost: number;
    readonly lowerBound: number;
  };
  readonly costPerConvergedSlice: Spread;
  readonly cheatsCaught: number;
  readonly runsWithCheats: number;
  readonly stallStops: number;
  readonly witnessFailures: number;
  readonly rateLimitWaits: number;
  readonly rateLimitWaitedMs: number;
}

/** The median (mean of the two middle values for an even count). */
export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The nearest-rank percentile: the smallest value with at least `p`% of the sample at or below it. */
export function percentile(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function spread(values: readonly number[]): Spread {
  return { n: values.length, median: median(values), p90: percentile(values, 90) };
}

/**
 * Computes the project's convergence metrics from every readable run (`unreadable` counts the ledgers that could
 * not be loaded). Pure.
 */
export function computeStats(runs: readonly RunFacts[], unreadable = 0): RunStats {
  const byState: Record<string, number> = {};
  for (const { ledger } of runs) {
    const state = ledger.terminal?.state ?? 'running';
    byState[state] = (byState[state] ?? 0) + 1;
  }
  const converged = runs.filter((r) => r.ledger.terminal?.state === 'converged');
  const priced = converged.filter((r) => r.ledger.spent.usd !== null);
  const sliceCosts = converged.flatMap(({ ledger }) =>
    ledger.subGoals
      .filter((g) => g.status === 'converged')
      .flatMap((g) => {
        const spent = readLoopState(ledger, g.id)?.spentUsd;
        return typeof spent === 'number' ? [spent] : [];
      }),
  );
  const violations = runs.map((r) => r.events.filter((e) => e.type === 'violation').length);
  const waits = runs.flatMap((r) => r.events.filter(isRateLimitWait));
  const waitedMs = waits.reduce((sum, e) => {
    const ms = 'data' in e ? e.data?.['waitedMs'] : undefined;
    return sum + (typeof ms === 'number' ? ms : 0);
  }, 0);
  return {
    runs: runs.length,
    unreadable,
    byState,
    converged: converged.length,
    ticksToConverge: spread(converged.map((r) => collectTicks(r.ledger, []).length)),
    callsToConverge: spread(converged.map((r) => r.ledger.spent.agentCalls)),
    costPerConvergedRun: {
      ...spread(priced.map((r) => r.ledger.spent.usd!)),
      totalUsd: priced.reduce((sum, r) => sum + r.ledger.spent.usd!, 0),
      unknownCost: converged.length - priced.length,
      lowerBound: priced.filter((r) => r.ledger.spent.usdUnknownCalls > 0).length,
    },
    costPerConvergedSlice: spread(sliceCosts),
    cheatsCaught: violations.reduce((a, b) => a + b, 0),
    runsWithCheats: violations.filter((v) => v > 0).length,
    stallStops: byState['no_progress'] ?? 0,
    witnessFailures: runs.filter((r) => r.witnessVerdict === 'FAIL').length,
    rateLimitWaits: waits.length,
    rateLimitWaitedMs: waitedMs,
  };
}

function show(value: number | null, format: (v: number) => string = String): string {
  return value === null ? '–' : format(value);
}

const usd = (v: number) => `$${v.toFixed(2)}`;

/** The metrics as text, one per line, with their sample sizes. */
export function renderStats(stats: RunStats): string {
  const states = Object.entries(stats.byState)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([state, n]) => `${state} ${String(n)}`)
    .join(', ');
  const c = stats.costPerConvergedRun;
  const lines = [
    `runs: ${String(stats.runs)}${stats.unreadable > 0 ? ` (+${String(stats.unreadable)} unreadable)` : ''}${states === '' ? '' : ` — ${states}`}`,
    `converged: ${String(stats.converged)} of ${String(stats.runs)}`,
    `ticks to converge: median ${show(stats.ticksToConverge.median)}, p90 ${show(stats.ticksToConverge.p90)} (n=${String(stats.ticksToConverge.n)})`,
    `agent calls to converge: median ${show(stats.callsToConverge.median)}, p90 ${show(stats.callsToConverge.p90)} (n=${String(stats.callsToConverge.n)})`,
    `cost per converged run: median ${show(c.median, usd)}, p90 ${show(c.p90, usd)}, total ${usd(c.totalUsd)} (n=${String(c.n)}${c.unknownCost > 0 ? `; ${String(c.unknownCost)} with unknown cost left out` : ''}${c.lowerBound > 0 ? `; ${String(c.lowerBound)} lower bounds` : ''})`,
    `cost per converged slice: median ${show(stats.costPerConvergedSlice.median, usd)}, p90 ${show(stats.costPerConvergedSlice.p90, usd)} (n=${String(stats.costPerConvergedSlice.n)})`,
    `cheats caught: ${String(stats.cheatsCaught)} in ${String(stats.runsWithCheats)} run(s)`,
    `stall stops: ${String(stats.stallStops)}`,
    `witness failures: ${String(stats.witnessFailures)}`,
    `rate-limit waits: ${String(stats.rateLimitWaits)} (${(stats.rateLimitWaitedMs / 1000).toFixed(0)} s waited)`,
  ];
  return `${lines.join('\n')}\n`;
}
