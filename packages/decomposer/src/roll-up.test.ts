import type { DependencyGraph } from '@allium-loop/allium';
import { AlliumLoopError } from '@allium-loop/errors';
import { describe, expect, it } from 'vitest';
import { graphOf } from './graph-builder.test-helpers.js';
import { normaliseQuestion, planSlices as planWithMerging, rollUp, type SliceReport } from './index.js';

/** These tests look at how slices are formed and ordered, so every anchor keeps its own slice (no merging). */
const planSlices = (graph: DependencyGraph, touched?: Iterable<string>) =>
  planWithMerging(graph, touched, { mergeSmallSlices: false });

const report = (
  sliceId: string,
  status: SliceReport['status'],
  extra: Partial<SliceReport> = {},
): SliceReport => ({
  sliceId,
  status,
  ticks: 2,
  tests: { passed: 3, failed: 0 },
  costUsd: 0.1,
  parkedQuestions: [],
  ...extra,
});

const plan = planSlices(graphOf(['rule:Lend creates entity:Loan', 'rule:Lend trigger rule:Thank Closed']));

describe('rollUp', () => {
  it('converges only when every slice and the integration pass converged, and sums the totals', () => {
    const summary = rollUp(
      [
        report('entity-lifecycle:Loan', 'converged'),
        report('rule-chain:Thank', 'converged', { tests: { passed: 1, failed: 1 }, costUsd: 0.2 }),
        report('integration', 'converged'),
      ],
      plan,
    );
    expect(summary.converged).toBe(true);
    expect(summary.status).toBe('converged');
    expect(summary.totals).toEqual({
      slices: 3,
      converged: 3,
      open: 0,
      stopped: 0,
      ticks: 6,
      testsPassed: 7,
      testsFailed: 1,
      costUsd: 0.4,
    });
  });

  it('lists planned slices without a report as pending, in plan order, the integration pass last', () => {
    const summary = rollUp([report('rule-chain:Thank', 'running')], plan);
    expect(summary.slices).toEqual([
      { sliceId: 'entity-lifecycle:Loan', status: 'pending' },
      { sliceId: 'rule-chain:Thank', status: 'running' },
      { sliceId: 'integration', status: 'pending' },
    ]);
    expect(summary).toMatchObject({ status: 'in_progress', converged: false });
  });

  it('is stopped when a slice ended without converging', () => {
    const summary = rollUp([report('a', 'converged'), report('b', 'no_progress')]);
    expect(summary).toMatchObject({
      status: 'stopped',
      converged: false,
      totals: { stopped: 1, converged: 1 },
    });
  });

  it('consolidates parked questions across slices, ignoring case, spacing, quotes and closing punctuation', () => {
    const summary = rollUp([
      report('a', 'converged', { parkedQuestions: ['Can an overdue loan be renewed?', 'Who pays postage?'] }),
      report('b', 'converged', {
        parkedQuestions: ['can an  overdue loan be renewed', '"Who pays postage?"'],
      }),
      report('c', 'converged', { parkedQuestions: ['Can an overdue loan be renewed?!', '   '] }),
    ]);
    expect(summary.parkedQuestions).toEqual([
      { text: 'Can an overdue loan be renewed?', slices: ['a', 'b', 'c'] },
      { text: 'Who pays postage?', slices: ['a', 'b'] },
    ]);
    expect(normaliseQuestion('  “Why?”  ')).toBe('why');
  });

  it('rejects two reports for one slice and reports for slices the plan lacks', () => {
    const twice = () => rollUp([report('a', 'converged'), report('a', 'failed')]);
    expect(twice).toThrow(/Two reports for slice 'a'/);
    try {
      rollUp([report('surface:Nope', 'converged')], plan);
    } catch (error) {
      expect(AlliumLoopError.is(error) && error.code).toBe('decomposer.unknownSlice');
      return;
    }
    expect.unreachable('rollUp accepted a report for an unplanned slice');
  });

  it('is not converged with no reports at all', () => {
    expect(rollUp([])).toMatchObject({ converged: false, status: 'in_progress' });
  });
});
