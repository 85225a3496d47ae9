import { DecomposerError } from './decomposer-error.js';
import type { Plan } from './plan-types.js';
import {
  INTEGRATION_ID,
  type ConsolidatedQuestion,
  type RollUp,
  type SliceReport,
  type SliceStatus,
} from './roll-up-types.js';

/** The form two question texts are compared in: case, spacing, quotes and closing punctuation do not count. */
export function normaliseQuestion(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[\u2018\u2019\u201c\u201d"'`]/g, '')
    .replace(/\s+/g, ' ')
    .replace(/[\s?.!:;]+$/, '')
    .trim();
}

function pendingReport(sliceId: string): SliceReport {
  return {
    sliceId,
    status: 'pending',
    ticks: 0,
    tests: { passed: 0, failed: 0 },
    costUsd: 0,
    parkedQuestions: [],
  };
}

function byId(reports: readonly SliceReport[]): Map<string, SliceReport> {
  const map = new Map<string, SliceReport>();
  for (const report of reports) {
    if (map.has(report.sliceId))
      throw new DecomposerError(`Two reports for slice '${report.sliceId}'.`, {
        code: 'decomposer.duplicateReport',
        context: { sliceId: report.sliceId },
        hint: 'Pass one report per slice: the latest one.',
      });
    map.set(report.sliceId, report);
  }
  return map;
}

/** Reports in plan order, a pending one for each planned slice without a report; the integration pass last. */
function alignWithPlan(reports: ReadonlyMap<string, SliceReport>, plan: Plan): SliceReport[] {
  const ids = [
    ...plan.slices.map((slice) => slice.id),
    ...(plan.integration === null ? [] : [INTEGRATION_ID]),
  ];
  const unknown = [...reports.keys()].filter((id) => !ids.includes(id));
  if (unknown.length > 0)
    throw new DecomposerError(`Reports for slices the plan does not have: ${unknown.join(', ')}.`, {
      code: 'decomposer.unknownSlice',
      context: { unknown },
      hint: 'Re-plan, or roll up without the plan.',
    });
  return ids.map((id) => reports.get(id) ?? pendingReport(id));
}

function consolidate(reports: readonly SliceReport[]): ConsolidatedQuestion[] {
  const questions = new Map<string, { text: string; slices: string[] }>();
  for (const report of reports) {
    for (const text of report.parkedQuestions) {
      const key = normaliseQuestion(text);
      if (key === '') continue;
      const entry = questions.get(key) ?? { text: text.trim(), slices: [] };
      if (!entry.slices.includes(report.sliceId)) entry.slices.push(report.sliceId);
      questions.set(key, entry);
    }
  }
  return [...questions.values()];
}

const OPEN: ReadonlySet<SliceStatus> = new Set(['pending', 'running']);

/**
 * Rolls slice reports up into one summary: per-slice status, totals, parked questions consolidated and
 * de-duplicated by normalised text ({@link normaliseQuestion}), and overall convergence. With the `plan`, the
 * summary lists every planned slice in plan order (pending when it has no report yet) and the integration pass
 * when planned; without it, the reports as given. Throws a {@link DecomposerError} (`decomposer.duplicateReport`,
 * `decomposer.unknownSlice`) on two reports for one slice or a report for a slice the plan lacks.
 */
export function rollUp(reports: readonly SliceReport[], plan?: Plan): RollUp {
  const indexed = byId(reports);
  const rows = plan === undefined ? [...reports] : alignWithPlan(indexed, plan);
  const converged = rows.filter((row) => row.status === 'converged').length;
  const open = rows.filter((row) => OPEN.has(row.status)).length;
  const stopped = rows.length - converged - open;
  const sum = (pick: (row: SliceReport) => number) => rows.reduce((total, row) => total + pick(row), 0);
  const allConverged = rows.length > 0 && converged === rows.length;
  return {
    slices: rows.map((row) => ({ sliceId: row.sliceId, status: row.status })),
    totals: {
      slices: rows.length,
      converged,
      open,
      stopped,
      ticks: sum((row) => row.ticks),
      testsPassed: sum((row) => row.tests.passed),
      testsFailed: sum((row) => row.tests.failed),
      costUsd: Math.round(sum((row) => row.costUsd) * 1e6) / 1e6,
    },
    parkedQuestions: consolidate(rows),
    status: allConverged ? 'converged' : stopped > 0 ? 'stopped' : 'in_progress',
    converged: allConverged,
  };
}
