import { describe, expect, it } from 'vitest';
import { checkReports, type Finding } from './reports.js';

/** Small specs written from the language reference; the finding shapes follow the reference `allium analyse`. */
const findings = (text: string): readonly Finding[] =>
  checkReports([{ path: 's.allium', text: `-- allium: 3\n${text}` }], 'analyse').reports[0]?.findings ?? [];
const ofType = (text: string, type: string): Finding[] => findings(text).filter((f) => f.type === type);

const TICKET = `entity Ticket {
    status: open | triaged | closed
    priority: Integer
    transitions status {
        open -> triaged
        triaged -> closed
        terminal: closed
    }
}
surface Desk {
    context ticket: Ticket
    provides: Triage(ticket)
}
rule Open {
    when: Raise(t)
    ensures: Ticket.created(status: open)
}
rule TriageIt {
    when: Triage(ticket)
    requires: ticket.status = open
    ensures: ticket.status = triaged
}
`;

describe('analyse findings', () => {
  it('deadlock: a state with no achievable way to a terminal state, with the blocked edge and its reason', () => {
    expect(ofType(TICKET, 'deadlock')).toEqual([
      {
        type: 'deadlock',
        summary: "Entity 'Ticket' can reach state 'open' but has no achievable path to any terminal state",
        state: 'open',
        outbound_edges: [{ from: 'open', to: 'triaged', reason: 'no achievable witnessing rule' }],
        cycle: null,
        affected_entities: ['Ticket'],
      },
      {
        type: 'deadlock',
        summary: "Entity 'Ticket' can reach state 'triaged' but has no achievable path to any terminal state",
        state: 'triaged',
        outbound_edges: [{ from: 'triaged', to: 'closed', reason: 'no witnessing rule' }],
        cycle: null,
        affected_entities: ['Ticket'],
      },
    ]);
    const closing = `${TICKET}rule Close {\n    when: Done(ticket)\n    requires: ticket.status = triaged\n    ensures: ticket.status = closed\n}\n`;
    expect(ofType(closing, 'deadlock')).toEqual([]);
  });

  it('missing_producer and dead_transition: a requirement nothing establishes blocks its witnessing rule', () => {
    const text = `${TICKET}rule Close {\n    when: Done(ticket)\n    requires:\n        ticket.status = triaged\n        ticket.approved = yes\n    ensures: ticket.status = closed\n}\n`;
    const searched = [
      { kind: 'rule_ensures', found: false },
      { kind: 'surface_provides', found: false },
      { kind: 'created_calls', found: false },
    ];
    expect(ofType(text, 'missing_producer')).toEqual([
      {
        type: 'missing_producer',
        summary: 'Nothing establishes Ticket.approved = yes',
        requires: { rule: 'Close', field: 'approved', value: 'yes' },
        searched,
        affected_entities: ['Ticket'],
      },
    ]);
    expect(ofType(text, 'dead_transition')).toEqual([
      {
        type: 'dead_transition',
        summary: "Transition 'triaged' → 'closed' on entity 'Ticket' is declared but unachievable",
        edge: { entity: 'Ticket', from: 'triaged', to: 'closed' },
        witnessing_rules: ['Close'],
        unsatisfiable_requires: [{ entity: 'Ticket', field: 'approved', value: 'yes', searched }],
        affected_entities: ['Ticket'],
      },
    ]);
  });

  it('conflict: two rules, not both fired by calls, in the same state setting different statuses', () => {
    const text = `${TICKET}rule AutoClose {\n    when: ticket: Ticket.priority <= 0\n    requires: ticket.status = open\n    ensures: ticket.status = closed\n}\n`;
    expect(ofType(text, 'conflict')).toEqual([
      {
        type: 'conflict',
        summary:
          "Rules 'TriageIt' and 'AutoClose' can both fire when entity 'Ticket' is in state 'open', setting status to conflicting values",
        rule_a: 'TriageIt',
        rule_b: 'AutoClose',
        field: 'status',
        state: 'open',
        values: { TriageIt: 'triaged', AutoClose: 'closed' },
        affected_entities: ['Ticket'],
      },
    ]);
    const calls = text.replace('when: ticket: Ticket.priority <= 0', 'when: Sweep(ticket)');
    expect(ofType(calls, 'conflict')).toEqual([]);
    // A call of a qualified name is no call trigger to the reference, imported or not: the pair conflicts again.
    for (const qualified of ['when: core/Sweep(ticket)', 'when: ops/Sweep(ticket)'])
      expect(
        ofType(`use "./core.allium" as core\n${calls.replace('when: Sweep(ticket)', qualified)}`, 'conflict'),
        qualified,
      ).toHaveLength(1);
  });

  it('conflict: only pairs that require a common state and both set a status, whatever lies between them', () => {
    // Answers from the reference \`allium analyse\` 3.5.3 on this spec. Rules that require nothing in common, or
    // set no status, sit between the conflicting ones; pairs are no longer all compared (see conflictFindings).
    const rule = (name: string, when: string, requires: string, ensures?: string): string =>
      `rule ${name} {\n    when: ${when}\n    requires: ${requires}\n${ensures === undefined ? '' : `    ensures: ${ensures}\n`}}\n`;
    const text =
      '-- allium: 3\n' +
      'entity Ticket {\n    status: open | review | closed | archived\n    priority: Integer\n' +
      '    transitions status {\n        open -> review\n        open -> closed\n        review -> closed\n' +
      '        closed -> archived\n        terminal: archived\n    }\n}\n' +
      'entity Job {\n    status: queued | running | done\n' +
      '    transitions status {\n        queued -> running\n        running -> done\n        terminal: done\n    }\n}\n' +
      rule('Review', 't: Ticket.priority <= 1', 't.status = review or t.status = open', 't.status = closed') +
      rule('Start', 'j: Job.status = queued', 'j.status = queued', 'j.status = running') +
      rule('Escalate', 't: Ticket.priority <= 0', 't.status = open', 't.status = review') +
      rule('Noop', 't: Ticket.priority <= 5', 't.status = open') +
      rule('Close', 't: Ticket.priority <= 2', 't.status = review', 't.status = archived') +
      rule('Skip', 'j: Job.status = queued', 'j.status = queued', 'j.status = done') +
      rule('Shelve', 't: Ticket.priority <= 3', 't.status = open', 't.status = closed');
    expect(ofType(text, 'conflict').map((f) => [f['rule_a'], f['rule_b'], f['state'], f['values']])).toEqual([
      ['Escalate', 'Shelve', 'open', { Escalate: 'review', Shelve: 'closed' }],
      ['Review', 'Close', 'review', { Review: 'closed', Close: 'archived' }],
      ['Review', 'Escalate', 'open', { Review: 'closed', Escalate: 'review' }],
      ['Start', 'Skip', 'queued', { Start: 'running', Skip: 'done' }],
    ]);
  });

  it('unreachable_trigger: listening rules, surfaces checked and bound entities; none without a status enum', () => {
    expect(ofType(TICKET, 'unreachable_trigger')).toEqual([
      {
        type: 'unreachable_trigger',
        summary: "Trigger 'Raise' is not provided by any surface",
        trigger: 'Raise',
        listening_rules: ['Open'],
        surfaces_checked: ['Desk'],
        affected_entities: [],
      },
    ]);
    expect(findings('rule R {\n    when: Go(x)\n    ensures: Done()\n}\n')).toEqual([]);
  });

  it('unreachable_trigger: a rule declared twice lends the first declaration’s bound entities (the reference’s answer)', () => {
    // The reference looks a listening rule's bindings up by its name, so the second `Close` (whose trigger binds no
    // entity) reports the `Ticket` the first one binds.
    const spec = [
      'entity Ticket {',
      '    status: open | closed',
      '}',
      'rule Close {',
      '    when: ticket: Ticket.status becomes open',
      '    ensures: ticket.status = closed',
      '}',
      'rule Close {',
      '    when: CloseAsked(ticket)',
      '    ensures: ticket.status = closed',
      '}',
    ].join('\n');
    expect(ofType(spec, 'unreachable_trigger').map((f) => [f.trigger, f['affected_entities']])).toEqual([
      ['CloseAsked', ['Ticket']],
    ]);
  });

  it('invariant_risk: a rule that sets the prohibited status of a uniqueness invariant without guarding its key', () => {
    const spec = `entity Candidacy {
    status: open | closed
}
entity Interview {
    candidacy: Candidacy
    status: proposed | confirmed | cancelled
}
invariant OneConfirmedPerCandidacy {
    for a in Interviews:
        for b in Interviews:
            a != b and a.candidacy = b.candidacy implies not (a.status = confirmed and b.status = confirmed)
}
rule Confirm {
    when: ConfirmInterview(interview)
    requires: interview.status = proposed
    ensures: interview.status = confirmed
}
rule ConfirmAndClose {
    when: ConfirmLast(interview)
    requires: interview.status = proposed
    ensures:
        interview.status = confirmed
        interview.candidacy.status = closed
}
rule ConfirmOpen {
    when: ConfirmOpen(interview, candidacy)
    requires: candidacy.status = open
    ensures: interview.status = confirmed
}
rule Cancel {
    when: CancelInterview(interview)
    ensures: interview.status = cancelled
}
`;
    expect(ofType(spec, 'invariant_risk')).toEqual([
      {
        type: 'invariant_risk',
        summary: "Rule 'Confirm' could violate invariant 'OneConfirmedPerCandidacy'",
        rule: 'Confirm',
        invariant: 'OneConfirmedPerCandidacy',
        mechanism: "Sets Interview.status to 'confirmed' without preventing concurrent instances",
        guard_analysis: {
          has_guard: false,
          needed: 'Rule should set Candidacy.status to prevent concurrent confirmed states',
        },
        affected_entities: ['Interview'],
      },
    ]);
    const noKey = spec.replace('a.candidacy = b.candidacy', 'a.slot = b.slot');
    expect(
      ofType(noKey, 'invariant_risk').map((f) => [f.rule, (f.guard_analysis as { needed: string }).needed]),
    ).toEqual([
      ['Confirm', 'Rule should set related entity.status to prevent concurrent confirmed states'],
      ['ConfirmAndClose', 'Rule should set related entity.status to prevent concurrent confirmed states'],
      ['ConfirmOpen', 'Rule should set related entity.status to prevent concurrent confirmed states'],
    ]);
    expect(ofType(spec.replace('implies not', 'implies'), 'invariant_risk')).toEqual([]);
  });
});

describe('analyse findings in a check set of several files (the reference’s answers for these sets)', () => {
  const summaries = (files: Record<string, string>): Record<string, string[]> =>
    Object.fromEntries(
      checkReports(
        Object.entries(files).map(([path, text]) => ({ path, text: `-- allium: 3\n${text}` })),
        'analyse',
      ).reports.map((report) => [report.spec_file, report.findings.map((f) => `${f.type}: ${f.summary}`)]),
    );
  const JOBS = `use "./sys.allium" as sys
entity Job {
    status: queued | running | done
    transitions status {
        queued -> running
        running -> done
        terminal: done
    }
}
rule Start {
    when: sys/Booted(job)
    requires: job.status = queued
    ensures: job.status = running
}
rule Finish {
    when: sys/Ready(job)
    requires: job.status = running
    ensures: job.status = done
}
rule Local {
    when: Tick(job)
    requires: job.status = running
    ensures: job.status = done
}
surface Desk {
    facing u: Job
    provides: Other(u)
}
`;
  const SYS = 'entity Thing {\n    n: Integer\n}\nrule Own {\n    when: Ready(t)\n    ensures: Tick(t)\n}\n';
  const ORDERS = `entity Order {
    status: draft | pending | done
    transitions status {
        draft -> pending
        pending -> done
        terminal: done
    }
}
rule Submit {
    when: o: Order.status becomes draft
    requires: o.status = draft
    ensures: o.status = pending
}
`;

  it('unreachable_trigger: a qualified trigger the imported file does not offer; a plain one it offers is reachable', () => {
    expect(summaries({ 'jobs.allium': JOBS, 'sys.allium': SYS })).toEqual({
      'jobs.allium': [
        "unreachable_trigger: Trigger 'sys/Booted' is not provided by any surface",
        "unreachable_trigger: Trigger 'sys/Ready' is not provided by any surface",
      ],
      'sys.allium': [],
    });
    // Alone, neither is judged, and `Tick` is unreachable.
    expect(summaries({ 'jobs.allium': JOBS })['jobs.allium']).toEqual([
      "unreachable_trigger: Trigger 'Tick' is not provided by any surface",
    ]);
  });

  it('a status an importer creates the entity with makes the edges into it achievable (no deadlock)', () => {
    const importer =
      'use "./orders.allium" as orders\nrule Close {\n    when: Start(x)\n    ensures: orders/Order.created(status: done)\n}\n';
    expect(summaries({ 'close.allium': importer, 'orders.allium': ORDERS })).toEqual({
      'close.allium': [],
      'orders.allium': [],
    });
    expect(summaries({ 'orders.allium': ORDERS })['orders.allium']).toEqual([
      "deadlock: Entity 'Order' can reach state 'draft' but has no achievable path to any terminal state",
      "deadlock: Entity 'Order' can reach state 'pending' but has no achievable path to any terminal state",
    ]);
  });

  it('conflict: rules on an imported entity, typed by its status values, in a file with no status enum of its own', () => {
    const importer = `use "./orders.allium" as orders
rule Approve {
    when: o: orders/Order.status becomes pending
    requires: o.status = pending
    ensures: o.status = done
}
rule Reject {
    when: o: orders/Order.status becomes pending
    requires: o.status = pending
    ensures: o.status = draft
}
`;
    expect(summaries({ 'review.allium': importer, 'orders.allium': ORDERS })).toEqual({
      'review.allium': [
        "conflict: Rules 'Approve' and 'Reject' can both fire when entity 'Order' is in state 'pending', setting status to conflicting values",
      ],
      // The importer's rules witness `pending → done` and `pending → draft` on the imported entity: no deadlock.
      'orders.allium': [],
    });
    expect(summaries({ 'review.allium': importer })['review.allium']).toEqual([]);
  });
});
