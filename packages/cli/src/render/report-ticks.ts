import type { JournalEvent, Ledger } from '@allium-loop/ledger';
import { readLoopState } from '@allium-loop/orchestrator';
import type { TickRow } from '@allium-loop/report-html';

/** The scope of the run's own loop in report rows. */
export const RUN_SCOPE = 'run';

/** The slice id in an agent-call key `slice:<id>/tick-<n>/<phase>/<k>`, or the run's scope. */
export function scopeOfKey(key: string): string {
  const match = /^slice:(.+?)\/tick-\d+\//.exec(key);
  return match?.[1] ?? RUN_SCOPE;
}

/** The spend recorded with each tick line, by `<scope> <tick>`: the journal's `tick_recorded` events. */
function spendByTick(events: readonly JournalEvent[]): Map<string, number | null> {
  const out = new Map<string, number | null>();
  for (const event of events) {
    if (event.type !== 'tick_recorded' || event.tick === undefined) continue;
    const scope = /^\[([^\]]+)\]/.exec(event.line)?.[1] ?? RUN_SCOPE;
    out.set(`${scope} ${String(event.tick)}`, event.usd ?? null);
  }
  return out;
}

type Draft = Omit<TickRow, 'seq' | 'usd' | 'stall'> & { readonly fingerprint: string };

function loopTicks(ledger: Ledger, scope: string, sliceId?: string): Draft[] {
  const state = readLoopState(ledger, sliceId);
  return (state?.verdicts ?? []).map((v) => {
    const tests = v.observation.tests;
    const weed = v.observation.weed;
    return {
      scope,
      tick: v.tick,
      passed: tests.counts === 'known' ? tests.passed : null,
      failed: tests.counts === 'known' ? tests.failed : null,
      weed: weed.status === 'not_run' ? 'not run' : weed.status,
      divergences: weed.status === 'dirty' ? weed.divergences : 0,
      uncoveredObligations: null,
      blocking: v.observation.openQuestions.blocking,
      parked: v.observation.openQuestions.parked,
      structuralErrors: v.observation.structuralErrors,
      converged: v.converged,
      fingerprint: v.fingerprint,
    };
  });
}

/** Ticks of a run that keeps no loop state (the mode runs): the ledger's own verdicts. */
function ledgerTicks(ledger: Ledger): Draft[] {
  return ledger.verdicts.map((v) => ({
    scope: RUN_SCOPE,
    tick: v.tick,
    passed: v.tests.status === 'known' ? v.tests.passed : null,
    failed: v.tests.status === 'known' ? v.tests.failed : null,
    weed: v.weed.status === 'skipped' ? 'not run' : v.weed.status,
    divergences: v.weed.divergences.length,
    uncoveredObligations: null,
    blocking: v.openQuestions.blocking,
    parked: v.openQuestions.parked,
    structuralErrors: v.structural.errors,
    converged: v.converged,
    fingerprint: v.fingerprint,
  }));
}

/**
 * Every measured tick of a run in the order the loops ran: the run's own ticks, then each slice's in the order
 * of `subGoals` (wave by wave, the integration pass last). A tick is a stall when its progress fingerprint equals
 * the previous tick's in the same scope. `uncovered` gives uncovered-obligation counts of the run's own ticks
 * where a trace recorded them.
 */
export function collectTicks(
  ledger: Ledger,
  events: readonly JournalEvent[],
  uncovered: ReadonlyMap<number, number> = new Map(),
): TickRow[] {
  const own = readLoopState(ledger) === undefined ? ledgerTicks(ledger) : loopTicks(ledger, RUN_SCOPE);
  const drafts = [...own, ...ledger.subGoals.flatMap((goal) => loopTicks(ledger, goal.id, goal.id))];
  const spend = spendByTick(events);
  return drafts.map(({ fingerprint, ...draft }, i) => {
    const previous = drafts[i - 1];
    return {
      ...draft,
      seq: i + 1,
      uncoveredObligations: draft.scope === RUN_SCOPE ? (uncovered.get(draft.tick) ?? null) : null,
      usd: spend.get(`${draft.scope} ${String(draft.tick)}`) ?? null,
      stall: previous !== undefined && previous.scope === draft.scope && previous.fingerprint === fingerprint,
    };
  });
}
