import type { TraceEntry } from '@allium-loop/evaluator';
import type { Intent, Ledger } from '@allium-loop/ledger';
import type { LoopState } from '../decide/loop-state.js';
import { readLoopState } from './ledger-sync.js';

/**
 * The trace of one loop (the run's, or one slice's), one entry per recorded tick, in the upstream
 * `trace-entry.schema.json` shape: the phases run and why, the tick's tests, weed verdict, uncovered obligations and
 * open questions, and the wall-clock seconds of each phase's agent calls (from the intents' begin and end, which
 * the engine stamps around each call). A metric a tick did not measure is carried forward from the tick before.
 * Pure.
 */
export function loopTrace(
  state: LoopState,
  intents: readonly Intent[],
  scope: { readonly prefix: string; readonly label?: string } = { prefix: '' },
): TraceEntry[] {
  const entries: TraceEntry[] = [];
  for (const verdict of state.verdicts) {
    const previous = entries.at(-1);
    const { tests, weed, openQuestions } = verdict.observation;
    const label = scope.label === undefined ? '' : `[${scope.label}] `;
    const phases = (state.phaseLog ?? [])
      .filter((p) => p.tick === verdict.tick)
      .map((p) => ({ name: p.name, reason: `${label}${p.reason}` }));
    const durations = phaseSeconds(intents, `${scope.prefix}tick-${String(verdict.tick)}/`);
    entries.push({
      tick: verdict.tick,
      ...(phases.length === 0 ? {} : { phases }),
      tests:
        tests.counts === 'known'
          ? { passed: tests.passed, failed: tests.failed }
          : (previous?.tests ?? { passed: 0, failed: 0 }),
      weed: weed.status === 'not_run' ? (previous?.weed ?? 'dirty') : weed.status,
      // The engine's reconciliation of the last propagate; before any propagate, nothing is counted as uncovered.
      uncovered_obligations: verdict.uncovered ?? previous?.uncovered_obligations ?? 0,
      open_questions: { blocking: openQuestions.blocking, parked: openQuestions.parked },
      ...(Object.keys(durations).length === 0 ? {} : { durations_s: durations }),
    });
  }
  return entries;
}

/** Seconds per phase of the agent calls whose key starts with `stem` (ended calls only), to the millisecond. */
function phaseSeconds(intents: readonly Intent[], stem: string): Record<string, number> {
  const seconds: Record<string, number> = {};
  for (const intent of intents) {
    if (!intent.key.startsWith(stem) || intent.outcome === null) continue;
    const ms = Date.parse(intent.outcome.at) - Date.parse(intent.begunAt);
    if (!Number.isFinite(ms) || ms < 0) continue;
    seconds[intent.phase] = Math.round(((seconds[intent.phase] ?? 0) + ms / 1000) * 1000) / 1000;
  }
  return seconds;
}

/**
 * The whole run's trace (`.allium-loop/<slug>.trace.jsonl`): the run's own ticks, then each slice's in plan order,
 * numbered on from 1 across the run so every line keeps the upstream shape; a slice's phases name it in their
 * reason. Pure.
 */
export function runTrace(ledger: Ledger): TraceEntry[] {
  const top = readLoopState(ledger);
  const entries =
    top === undefined
      ? []
      : loopTrace(
          top,
          ledger.intents.filter((i) => !i.key.startsWith('slice:')),
        );
  for (const goal of ledger.subGoals) {
    const state = readLoopState(ledger, goal.id);
    if (state === undefined) continue;
    entries.push(...loopTrace(state, ledger.intents, { prefix: `slice:${goal.id}/`, label: goal.id }));
  }
  return entries.map((entry, i) => ({ ...entry, tick: i + 1 }));
}

/** The trace as JSON Lines, one entry a line. */
export function renderTrace(entries: readonly TraceEntry[]): string {
  return entries.map((entry) => `${JSON.stringify(entry)}\n`).join('');
}
