import type { JournalEvent } from '@allium-loop/ledger';
import type { PhaseSpan, TickRow, WarningRow } from '@allium-loop/report-html';
import { RUN_SCOPE, scopeOfKey } from './report-ticks.js';

/** True for a mode's rate-limit wait event (`x-<mode>.rate_limit_wait`). */
export function isRateLimitWait(event: JournalEvent): boolean {
  return event.type.endsWith('.rate_limit_wait');
}

/**
 * Walks the journal once, keeping the scope of the latest agent-call intent (phase events carry a tick but no
 * scope), and returns every phase with its duration and every cap, guard and rate-limit warning.
 */
export function readJournalFacts(
  events: readonly JournalEvent[],
  ticks: readonly TickRow[],
): { phases: PhaseSpan[]; warnings: WarningRow[] } {
  let scope = RUN_SCOPE;
  const started = new Map<string, string>();
  const phases: PhaseSpan[] = [];
  const warnings: WarningRow[] = [];
  const seqOf = (tick: number | undefined) =>
    ticks.find((t) => t.scope === scope && t.tick === tick)?.seq ?? null;
  for (const event of events) {
    if (event.type === 'intent_begun') scope = scopeOfKey(event.key);
    else if (event.type === 'phase_started') started.set(`${scope} ${event.phase}`, event.at);
    else if (event.type === 'phase_ended') {
      const begun = started.get(`${scope} ${event.phase}`);
      phases.push({
        scope,
        tick: event.tick ?? 0,
        phase: event.phase,
        startedAt: begun ?? new Date(Date.parse(event.at) - event.durationMs).toISOString(),
        durationMs: event.durationMs,
        outcome: event.outcome,
        detail: event.detail ?? null,
      });
    } else if (event.type === 'cap_reached') {
      warnings.push({
        kind: 'cap',
        scope,
        tick: event.tick ?? null,
        seq: seqOf(event.tick),
        text: `cap ${event.cap} reached (${String(event.value)} of ${String(event.limit)})`,
      });
    } else if (event.type === 'violation') {
      warnings.push({
        kind: 'violation',
        scope,
        tick: event.tick ?? null,
        seq: seqOf(event.tick),
        text: `${event.kind}${event.path === undefined ? '' : ` in ${event.path}`}: ${event.detail}${event.reverted ? ' (reverted)' : ''}`,
      });
    } else if (isRateLimitWait(event) && 'data' in event) {
      const waitedMs = event.data?.['waitedMs'];
      warnings.push({
        kind: 'rate_limit',
        scope,
        tick: event.tick ?? null,
        seq: null,
        text: `rate limited${typeof waitedMs === 'number' ? `; waited ${String(Math.round(waitedMs / 1000))} s` : ''}`,
      });
    }
  }
  for (const tick of ticks) {
    if (tick.stall)
      warnings.push({
        kind: 'stall',
        scope: tick.scope,
        tick: tick.tick,
        seq: tick.seq,
        text: 'no progress: the progress fingerprint is the same as the tick before',
      });
  }
  return { phases, warnings };
}
