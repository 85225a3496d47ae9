import type { Ledger } from '@allium-loop/ledger';
import { formatTickLine, formatUsd, readLoopState } from '@allium-loop/orchestrator';

/** Ticks of the run itself plus every slice loop's. */
function totalTicks(ledger: Ledger): number {
  return (
    ledger.verdicts.length +
    ledger.subGoals.reduce((sum, goal) => sum + (readLoopState(ledger, goal.id)?.verdicts.length ?? 0), 0)
  );
}

function testsLine(ledger: Ledger): string {
  const last = ledger.verdicts.at(-1);
  if (last === undefined)
    return ledger.subGoals.length > 0 ? 'tests, weed: see the slices below' : 'tests: not measured';
  const tests = last.tests;
  const testText =
    tests.status === 'known'
      ? `tests ${String(tests.passed)}/${String(tests.passed + tests.failed)} passing`
      : `tests: counts unknown (${tests.reason})`;
  const weed =
    last.weed.status === 'dirty'
      ? `weed dirty (${String(last.weed.divergences.length)})`
      : `weed ${last.weed.status}`;
  return `${testText} · ${weed} · structural errors ${String(last.structural.errors)}`;
}

/** The cause of the port failure that ended a run, as an indented line after the terminal line; '' without one. */
export function terminalCauseLine(terminal: Ledger['terminal']): string {
  const cause = terminal?.error?.cause;
  return cause === undefined ? '' : `  caused by: ${cause}\n`;
}

/**
 * The final report of a run, as text: how it ended, what converged, what was escalated, residual parked questions,
 * test and weed status, slices, cost and time. Reads only the ledger.
 */
export function renderReport(ledger: Ledger): string {
  const lines: string[] = [];
  const terminal = ledger.terminal;
  lines.push(
    terminal === null
      ? `Run ${ledger.slug}: ${ledger.status} at tick ${String(ledger.tick)}`
      : `Run ${ledger.slug}: ${terminal.state} after ${String(totalTicks(ledger))} tick(s) — ${terminal.detail}`,
  );
  const cause = terminalCauseLine(terminal);
  if (cause !== '') lines.push(cause.trimEnd());
  lines.push(`  goal: ${ledger.goal}`);
  if (ledger.entry !== null)
    lines.push(`  entry: ${ledger.entry.path} (${ledger.entry.mode}) — ${ledger.entry.reason}`);
  lines.push(`  ${testsLine(ledger)}`);
  const last = ledger.verdicts.at(-1);
  for (const divergence of last?.weed.divergences ?? []) {
    lines.push(
      `    divergence ${divergence.kind}: ${divergence.construct ?? '(no construct)'} — ${divergence.detail}`,
    );
  }
  const blocking = ledger.questions.filter((q) => q.classification === 'blocking' && q.status !== 'applied');
  const parked = ledger.questions.filter((q) => q.classification === 'parked' && q.status === 'open');
  lines.push(
    `  open questions: blocking ${String(blocking.filter((q) => q.status === 'open').length)} / parked ${String(parked.length)}`,
  );
  for (const question of blocking) {
    lines.push(
      `    escalated ${question.id} [${question.status}]: ${question.text}${question.answer === null ? '' : ` — answer: ${question.answer}`}`,
    );
  }
  for (const question of parked)
    lines.push(`    parked ${question.id}: ${question.text} — assumed: ${question.assumption ?? '(none)'}`);
  if (ledger.subGoals.length > 0) {
    lines.push('  slices:');
    for (const goal of ledger.subGoals) {
      const state = readLoopState(ledger, goal.id);
      const last = state?.verdicts.at(-1);
      const ticks = state?.verdicts.length ?? 0;
      lines.push(
        `    ${goal.id}: ${goal.status}${ticks > 0 ? ` after ${String(ticks)} tick(s)` : ''}${state?.terminal === undefined || state.terminal.state === 'converged' ? '' : ` — ${state.terminal.reason}`}`,
      );
      if (last !== undefined) lines.push(`      last: ${formatTickLine(last, '').replace(/ · $/, '')}`);
    }
  }
  const seconds = (ledger.spent.wallMs / 1000).toFixed(1);
  lines.push(
    `  cost: ${formatUsd(ledger.spent.usd, ledger.spent.usdUnknownCalls)} over ${String(ledger.spent.agentCalls)} agent call(s) · time ${seconds} s`,
  );
  if (terminal?.state === 'awaiting_input') {
    for (const question of blocking.filter((q) => q.status === 'open')) {
      lines.push(`  answer with: allium-loop answer ${ledger.slug} ${question.id} "<your answer>"`);
    }
    lines.push(`  then: allium-loop resume ${ledger.slug}`);
  }
  return `${lines.join('\n')}\n`;
}
