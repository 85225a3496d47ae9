/**
 * One tick of the run trace, exactly the shape of the upstream `trace-entry.schema.json` (no other keys): what
 * `.allium-loop/<slug>.trace.jsonl` holds, one entry a line.
 */
export interface TraceEntry {
  /** The tick this entry records, from 1. */
  readonly tick: number;
  /** The phases run this tick, in order, each with why it was chosen. */
  readonly phases?: readonly { readonly name: string; readonly reason?: string }[];
  /** The tick's test result, carried forward when the tests did not run. */
  readonly tests: { readonly passed: number; readonly failed: number };
  /** The tick's weed verdict, carried forward when weed did not run. */
  readonly weed: 'clean' | 'dirty';
  /** Uncovered obligations (0 when coverage is complete or nothing is reconciled). */
  readonly uncovered_obligations: number;
  readonly open_questions: { readonly blocking: number; readonly parked: number };
  /** Wall-clock seconds per phase this tick, as the engine measured them around each call. */
  readonly durations_s?: Readonly<Record<string, number>>;
}

/**
 * Whether `current` made progress over `previous` (upstream driving-the-loop §13): fewer failing tests, weed
 * went dirty → clean, fewer uncovered obligations, or fewer blocking questions. Anything else is a flat tick.
 */
export function madeProgress(previous: TraceEntry, current: TraceEntry): boolean {
  return (
    current.tests.failed < previous.tests.failed ||
    (previous.weed === 'dirty' && current.weed === 'clean') ||
    current.uncovered_obligations < previous.uncovered_obligations ||
    current.open_questions.blocking < previous.open_questions.blocking
  );
}

/** Whether the entry reads as converged: nothing failing, at least one test, weed clean, nothing uncovered or blocking. */
function looksConverged(entry: TraceEntry): boolean {
  return (
    entry.tests.failed === 0 &&
    entry.tests.passed > 0 &&
    entry.weed === 'clean' &&
    entry.uncovered_obligations === 0 &&
    entry.open_questions.blocking === 0
  );
}

/** How many trailing entries (the last included) are flat, i.e. made no progress over the one before. */
export function flatTicks(entries: readonly TraceEntry[]): number {
  let flat = 0;
  for (let i = entries.length - 1; i > 0; i -= 1) {
    const previous = entries[i - 1];
    const current = entries[i];
    if (previous === undefined || current === undefined || madeProgress(previous, current)) break;
    flat += 1;
  }
  return flat;
}

/**
 * The stall warning for the last entry of a trace, or `undefined` when there is none to give: the last tick made
 * progress, reads as converged, or fewer than `threshold` ticks in a row were flat (`stall_warning_ticks`,
 * upstream default 1: the first flat tick warns). Names what is stuck and for how long, e.g.
 * `⚠ tick 4 · no progress — tests stuck at 5/10 for 2 ticks, weed still dirty, 3 uncovered`.
 */
export function stallWarning(entries: readonly TraceEntry[], threshold = 1): string | undefined {
  const last = entries.at(-1);
  if (last === undefined || looksConverged(last)) return undefined;
  const flat = flatTicks(entries);
  if (flat === 0 || flat < threshold) return undefined;
  const total = last.tests.passed + last.tests.failed;
  let same = 1;
  for (let i = entries.length - 2; i >= 0; i -= 1) {
    const entry = entries[i];
    if (entry?.tests.passed !== last.tests.passed || entry.tests.failed !== last.tests.failed) break;
    same += 1;
  }
  const parts = [
    `tests stuck at ${String(last.tests.passed)}/${String(total)} for ${String(same)} tick${same === 1 ? '' : 's'}`,
  ];
  if (last.weed === 'dirty') parts.push('weed still dirty');
  if (last.uncovered_obligations > 0) parts.push(`${String(last.uncovered_obligations)} uncovered`);
  if (last.open_questions.blocking > 0)
    parts.push(`${String(last.open_questions.blocking)} blocking question(s) open`);
  return `⚠ tick ${String(last.tick)} · no progress — ${parts.join(', ')}`;
}
