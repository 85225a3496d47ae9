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
  it('prints waves, slices, cycle paths, crossings and the whole-spec weed', () => {
    expect(renderPlanText(planSlices(graph, [...graph.nodes.map((n) => n.id), 'rule:Gone']))).toBe(
      [
        'Plan: 3 slices in 3 waves, then the integration pass.',
        'Wave 1',
        '  surface:Counter (surface, 1 construct)',
        '      surface:Counter',
        'Wave 2',
        '  cycle:entity-lifecycle:Book (condensed cycle, 4 constructs) — after surface:Counter',
        '      entity:Book, entity:Loan, rule:Lend, rule:Return',
        '      cycle: rule:Lend → rule:Return → rule:Lend',
        'Wave 3',
        '  entity-lifecycle:Reminder (entity lifecycle, 2 constructs) — after cycle:entity-lifecycle:Book',
        '      entity:Reminder, rule:Thank',
        'Integration pass: cross-entity tests over 2 slice crossings, then a weed of the whole spec.',
        '  cycle:entity-lifecycle:Book → entity-lifecycle:Reminder',
        '      rule:Return → rule:Thank [trigger LoanClosed]',
        '  surface:Counter → cycle:entity-lifecycle:Book',
        '      surface:Counter → rule:Lend [trigger LendRequested]',
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
        '    s0["surface:Counter<br/>1 construct"]',
        '  end',
        '  subgraph wave2["wave 2"]',
        '    s1[["cycle:entity-lifecycle:Book<br/>4 constructs"]]',
        '  end',
        '  subgraph wave3["wave 3"]',
        '    s2["entity-lifecycle:Reminder<br/>2 constructs"]',
        '  end',
        '  s0 --> s1',
        '  s1 --> s2',
        '  integration(["integration pass<br/>cross-entity tests + whole-spec weed"])',
        '  s2 --> integration',
        '',
      ].join('\n'),
    );
  });
});
