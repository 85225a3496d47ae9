import type { Ledger } from '@allium-loop/ledger';
import { formatUsd } from '../driver/format-tick-line.js';
import type { VerifyModeState } from '@allium-loop/ledger';

type VerifyTickRecord = VerifyModeState['ticks'][number];

/** The change since the previous measurement, in words: `exit 1 → 0, score 4 → 7`. */
export function describeDelta(
  previous: { readonly exitCode: number | null; readonly score: number | null },
  exitCode: number | null,
  score: number | null,
  climbing: boolean,
): string {
  const parts = [
    previous.exitCode === exitCode
      ? `exit ${String(exitCode)} (same)`
      : `exit ${String(previous.exitCode)} → ${String(exitCode)}`,
  ];
  if (climbing) parts.push(`score ${formatScore(previous.score)} → ${formatScore(score)}`);
  return parts.join(', ');
}

/** The one-line record of a tick: `tick 3 · verify exit 0 · score 5 (best 20) · reverted · $0.12`. */
export function tickLine(record: VerifyTickRecord, best: VerifyModeState['best'], ledger: Ledger): string {
  const parts = [
    `tick ${String(record.tick)}`,
    record.timedOut ? 'verify timed out' : `verify exit ${String(record.exitCode)}`,
  ];
  if (record.kept !== null)
    parts.push(
      `score ${formatScore(record.score)} (best ${formatScore(best?.score ?? null)})`,
      record.kept ? 'kept' : 'reverted',
    );
  parts.push(formatUsd(ledger.spent.usd, ledger.spent.usdUnknownCalls));
  return parts.join(' · ');
}

/**
 * The summary table of a verify run: one row per tick (agent outcome, exit code, score, kept or reverted, delta).
 */
export function formatVerifySummary(state: VerifyModeState): string {
  const climbing = state.config.hillclimb !== undefined;
  const header = ['tick', 'agent', 'exit', ...(climbing ? ['score', 'kept'] : []), 'delta'];
  const rows = [
    [
      '0',
      'baseline',
      String(state.baseline?.exitCode ?? '-'),
      ...(climbing ? [formatScore(state.baseline?.score ?? null), '-'] : []),
      '',
    ],
    ...state.ticks.map((t) => [
      String(t.tick),
      t.agentOutcome,
      t.timedOut ? 'timeout' : String(t.exitCode),
      ...(climbing ? [formatScore(t.score), t.kept === true ? 'kept' : 'reverted'] : []),
      t.delta,
    ]),
  ];
  const table = formatTable(header, rows);
  if (!climbing || state.best === null) return table;
  return `${table}best score ${formatScore(state.best.score)} at tick ${String(state.best.tick)}${state.best.commit === null ? '' : ` (${state.best.commit.slice(0, 12)})`}\n`;
}

/** A plain-text table with padded columns. */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return `${[line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n')}\n`;
}

/** A score for display; `-` when there is none. */
export function formatScore(score: number | null): string {
  return score === null ? '-' : String(score);
}

/** The agent's prompt for one verify tick: the goal, the command, recent ticks and the last output. */
export function verifyPrompt(goal: string, state: VerifyModeState): string {
  const climb = state.config.hillclimb;
  const lines = [
    `You are working towards this goal in the current repository: ${goal}`,
    '',
    `After you finish, the engine runs this command itself: ${state.config.command}`,
    climb === undefined
      ? 'The goal is reached when that command exits 0. Make one focused step that brings it closer.'
      : `The command prints a score (pattern /${climb.score}/); ${climb.direction === 'max' ? 'higher' : 'lower'} is better. Best so far: ${formatScore(state.best?.score ?? null)}. A change that does not improve it is thrown away, so make one focused change you expect to improve it.`,
    'Do not edit the verification command, its tests or its scoring to make it pass; such changes are detected and reverted.',
    'Your reply text is ignored: only the files you change count.',
  ];
  if (state.ticks.length > 0) {
    lines.push(
      '',
      'Previous ticks:',
      ...state.ticks
        .slice(-5)
        .map((t) => `- tick ${String(t.tick)}: ${t.delta}${t.kept === false ? ' (reverted)' : ''}`),
    );
  }
  lines.push('', 'Last output of the command (tail):', '```', state.lastOutput, '```');
  return lines.join('\n');
}
