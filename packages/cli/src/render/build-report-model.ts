import { assignWaves } from '@allium-loop/decomposer';
import type { JournalEvent, Ledger } from '@allium-loop/ledger';
import { readLoopState } from '@allium-loop/orchestrator';
import type {
  CapRow,
  ReportModel,
  SliceNode,
  StoriesView,
  TickRow,
  VerifyView,
} from '@allium-loop/report-html';
import type { RunArtifacts } from './read-run-artifacts.js';
import { readJournalFacts } from './report-journal.js';
import { collectTicks } from './report-ticks.js';

const NO_OBLIGATIONS =
  'not recorded: this run has no trace with obligation counts (.allium-loop/<slug>.trace.jsonl), so coverage of the spec\u2019s test obligations is unknown, not zero.';

function slicesOf(ledger: Ledger): SliceNode[] {
  const ids = ledger.subGoals.map((g) => g.id);
  const known = new Set(ids);
  const deps = new Map(ledger.subGoals.map((g) => [g.id, new Set(g.dependsOn.filter((d) => known.has(d)))]));
  const wave = assignWaves(ids, deps);
  return ledger.subGoals.map((goal) => {
    const state = readLoopState(ledger, goal.id);
    const terminal = state?.terminal;
    return {
      id: goal.id,
      status: goal.status,
      dependsOn: goal.dependsOn,
      constructs: goal.slice.constructs,
      wave: wave.get(goal.id) ?? 0,
      ticks: state?.verdicts.length ?? 0,
      detail: terminal === undefined || terminal.state === 'converged' ? null : terminal.reason,
    };
  });
}

const CAP_OF_TERMINAL: Readonly<Record<string, string>> = {
  max_ticks: 'ticks per loop',
  no_progress: 'no-progress ticks',
  timed_out: 'wall clock',
  budget_exhausted: 'budget',
};

/** The most ticks any one loop (the run's or a slice's) ran: what the tick cap, which holds per loop, bounds. */
function longestLoop(ticks: readonly TickRow[]): number {
  const perScope = new Map<string, number>();
  for (const t of ticks) perScope.set(t.scope, Math.max(perScope.get(t.scope) ?? 0, t.tick));
  return Math.max(0, ...perScope.values());
}

function capsOf(ledger: Ledger, events: readonly JournalEvent[], ticks: readonly TickRow[]): CapRow[] {
  const { caps, spent } = ledger;
  const hit = new Set(events.flatMap((e) => (e.type === 'cap_reached' ? [e.cap] : [])));
  const ended = CAP_OF_TERMINAL[ledger.terminal?.state ?? ''];
  const row = (name: string, limit: string, used: string, capName: string): CapRow => ({
    name,
    limit,
    used,
    reached: hit.has(capName) || ended === name,
  });
  return [
    row('ticks per loop', String(caps.maxTicks), String(longestLoop(ticks)), 'maxTicks'),
    row('no-progress ticks', String(caps.noProgressTicks), '–', 'noProgress'),
    row('fix attempts', String(caps.maxFixAttempts), '–', 'maxFixAttempts'),
    row(
      'wall clock',
      caps.wallClockMs === undefined ? 'none' : `${String(Math.round(caps.wallClockMs / 1000))} s`,
      `${(spent.wallMs / 1000).toFixed(1)} s`,
      'wallClock',
    ),
    row(
      'budget',
      caps.budgetUsd === undefined ? 'none' : `$${caps.budgetUsd.toFixed(2)}`,
      spent.usd === null ? 'unknown' : `$${spent.usd.toFixed(2)}`,
      'budget',
    ),
    row('agent call timeout', `${String(Math.round(caps.agentTimeoutMs / 1000))} s`, '–', 'agentTimeout'),
    row('test run timeout', `${String(Math.round(caps.testTimeoutMs / 1000))} s`, '–', 'testTimeout'),
  ];
}

function verifyView(ledger: Ledger): VerifyView | null {
  const record = ledger.modeState;
  const state = record.kind === 'verify' ? record.verify : undefined;
  if (state === undefined) return null;
  const climb = state.config.hillclimb;
  return {
    command: state.config.command,
    climbing: climb !== undefined,
    direction: climb?.direction ?? null,
    baseline:
      state.baseline === null ? null : { exitCode: state.baseline.exitCode, score: state.baseline.score },
    best: state.best === null ? null : { score: state.best.score, tick: state.best.tick },
    ticks: state.ticks.map((t) => ({
      tick: t.tick,
      agentOutcome: t.agentOutcome,
      exitCode: t.exitCode,
      timedOut: t.timedOut,
      score: t.score,
      kept: t.kept,
      delta: t.delta,
    })),
  };
}

function storiesView(ledger: Ledger): StoriesView | null {
  const record = ledger.modeState;
  const state = record.kind === 'stories' ? record.stories : undefined;
  if (state === undefined) return null;
  return {
    iterations: state.iterations.map((i) => ({
      tick: i.tick,
      story: i.story,
      title: i.title,
      verdict: i.verdict,
      reason: i.reason,
      blocked: i.blocked,
    })),
  };
}

/**
 * The data of a run's HTML report, from its ledger, its journal and the files beside them. Pure; the caller
 * redacts the result before rendering (see `writeHtmlReport`).
 */
export function buildReportModel(
  ledger: Ledger,
  events: readonly JournalEvent[],
  artifacts: RunArtifacts,
  generatedAt: Date,
): ReportModel {
  const ticks = collectTicks(ledger, events, artifacts.uncovered);
  const { phases, warnings } = readJournalFacts(events, ticks);
  const t = ledger.terminal;
  return {
    generatedAt: generatedAt.toISOString(),
    run: {
      slug: ledger.slug,
      goal: ledger.goal,
      mode: ledger.mode,
      status: ledger.status,
      terminal: t === null ? null : { state: t.state, reason: t.reason, detail: t.detail },
      entry:
        ledger.entry === null ? null : `${ledger.entry.path} (${ledger.entry.mode}) — ${ledger.entry.reason}`,
      createdAt: ledger.createdAt,
      updatedAt: ledger.updatedAt,
    },
    spend: {
      usd: ledger.spent.usd,
      unknownCalls: ledger.spent.usdUnknownCalls,
      agentCalls: ledger.spent.agentCalls,
      wallMs: ledger.spent.wallMs,
      tokens: { input: ledger.spent.tokens.input, output: ledger.spent.tokens.output },
    },
    caps: capsOf(ledger, events, ticks),
    ticks,
    obligationsNote: artifacts.hasTrace ? null : NO_OBLIGATIONS,
    slices: slicesOf(ledger),
    phases,
    witness: artifacts.witness,
    questions: ledger.questions.map((q) => ({ ...q })),
    calls: artifacts.calls,
    warnings,
    verify: verifyView(ledger),
    stories: storiesView(ledger),
  };
}
