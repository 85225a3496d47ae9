import { describe, expect, it } from 'vitest';
import { graphOf } from './graph-builder.test-helpers.js';
import { planSlices, renderPlanMermaid, renderPlanText } from './index.js';

const graph = graphOf([
  'rule:Lend writes entity:Book Book.status',
  'rule:Lend creates entity:Loan',
  'rule:Return writes entity:Loan Loan.status',
  'rule:Return data rule:Lend Book.status',
  'rule:Lend data rule:Return Loan.status',
  'rule:Return trigger rule:Thank LoanClosed',
  'rule:Thank creates entity:Reminder',
  'surface:Counter trigger rule:Lend LendRequested',
]);

describe('renderPlanText', () => {
  it('prints waves, slices, cycle paths, absorbed slices, crossings and the whole-spec weed', () => {
    expect(renderPlanText(planSlices(graph, [...graph.nodes.map((n) => n.id), 'rule:Gone']))).toBe(
      [
        'Plan: 2 slices in 2 waves, then the integration pass.',
        'Wave 1',
        '  cycle:entity-lifecycle:Book (condensed cycle, 5 constructs)',
        '      entity:Book, entity:Loan, rule:Lend, rule:Return, surface:Counter',
        '      cycle: rule:Lend → rule:Return → rule:Lend',
        '      absorbed (too small alone): surface:Counter',
        'Wave 2',
        '  entity-lifecycle:Reminder (entity lifecycle, 2 constructs) — after cycle:entity-lifecycle:Book',
        '      entity:Reminder, rule:Thank',
        'Integration pass: cross-entity tests over 1 slice crossing, then a weed of the whole spec.',
        '  cycle:entity-lifecycle:Book → entity-lifecycle:Reminder',
        '      rule:Return → rule:Thank [trigger LoanClosed]',
        'Not in the graph (ignored): rule:Gone',
        '',
      ].join('\n'),
    );
  });

  it('says so when there is one slice or nothing at all', () => {
    expect(renderPlanText(planSlices(graph, ['rule:Thank']))).toBe(
      'Plan: one slice, no split.\n  entity-lifecycle:Reminder (entity lifecycle, 1 construct)\n      rule:Thank\n',
    );
    expect(renderPlanText(planSlices(graph, []))).toBe(
      'Plan: nothing to do — the goal touches no rule, entity or surface.\n',
    );
  });
});

describe('renderPlanMermaid', () => {
  it('draws one subgraph per wave, the dependencies, the cycle as a double box and the integration pass', () => {
    expect(renderPlanMermaid(planSlices(graph))).toBe(
      [
        'flowchart LR',
        '  subgraph wave1["wave 1"]',
        '    s0[["cycle:entity-lifecycle:Book<br/>5 constructs"]]',
        '  end',
        '  subgraph wave2["wave 2"]',
        '    s1["entity-lifecycle:Reminder<br/>2 constructs"]',
        '  end',
        '  s0 --> s1',
        '  integration(["integration pass<br/>cross-entity tests + whole-spec weed"])',
        '  s1 --> integration',
        '',
      ].join('\n'),
    );
  });
});
