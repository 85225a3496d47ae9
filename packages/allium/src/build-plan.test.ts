import { describe, expect, it } from 'vitest';
import { buildPlan, type Obligation } from './build-plan.js';
import { parseSpec } from './parse-spec.js';

const plan = (text: string) => buildPlan(parseSpec(text, 'plan.allium'));
const byId = (text: string): Map<string, Obligation> => new Map(plan(text).obligations.map((o) => [o.id, o]));
const spanText = (text: string, o: Obligation | undefined): string =>
  Buffer.from(text).subarray(o?.source_span.start, o?.source_span.end).toString();

const LIBRARY = `-- allium: 3
entity Loan {
  book: Book
  borrower: Member
  status: active | returned | overdue
  due: Timestamp
  returned_at: Timestamp when status = returned
  fine: Money?
  late: due < now
  transitions status {
    active -> returned
    active -> overdue
    overdue -> returned
    terminal: returned
  }
  invariant DueAfterStart { due > 0 }
}

entity Book {
  title: String
  loans: Loan with book = this
  open_loans: loans where status = active
}

value Money {
  amount: Decimal
  currency: String
}

enum Genre { fiction | poetry }

config {
  loan_days: Integer = 14
}

rule LendBook {
  when: Lend(member, book)
  requires: book.open_loans.count = 0
  ensures: Loan.created(book: book, borrower: member, status: active)
}

rule ReturnBook {
  when: loan: Loan.status transitions_to overdue
  requires: loan.status = overdue
  ensures:
    loan.status = returned
    Returned(loan)
}

rule MarkOverdue {
  when: loan: Loan.due <= now
  requires: loan.status = active
  ensures: loan.status = overdue
}

rule ThankBorrower {
  when: Returned(loan)
  ensures: Thanked(loan.borrower)
}

surface Desk {
  facing librarian: Librarian
  exposes:
    loan.due
    loan.status
  provides: Lend(member, book)
}

invariant OneOpenLoan {
  for b in Books:
    b.open_loans.count <= 1
}
`;

describe('buildPlan: obligations as the reference `allium plan` derives them', () => {
  const obligations = byId(LIBRARY);

  it('derives entity obligations: fields, optional, relationship, projection, derived, when presence', () => {
    expect(obligations.get('entity-fields.Loan')?.detail).toEqual({
      fields: ['book', 'borrower', 'status', 'due', 'returned_at', 'fine', 'late'],
    });
    expect(spanText(LIBRARY, obligations.get('entity-fields.Loan'))).toMatch(/^entity Loan \{[\s\S]*\n\}$/);
    expect(obligations.get('entity-optional.Loan.fine')?.category).toBe('entity_optional');
    expect(obligations.get('derived.Loan.late')?.category).toBe('derived');
    expect(obligations.get('entity-relationship.Book.loans')?.category).toBe('entity_relationship');
    expect(obligations.get('projection.Book.open_loans')?.category).toBe('projection');
    const presence = obligations.get('when-presence.Loan.returned_at');
    expect(presence?.detail).toEqual({
      entity: 'Loan',
      field: 'returned_at',
      status_field: 'status',
      qualifying_states: ['returned'],
    });
    expect(spanText(LIBRARY, presence)).toBe('returned_at: Timestamp when status = returned');
  });

  it('derives one edge obligation per declared transition, the rejection and the terminal states', () => {
    const edge = obligations.get('transition-edge.Loan.active.overdue');
    expect(edge?.detail).toEqual({ entity: 'Loan', field: 'status', from: 'active', to: 'overdue' });
    expect(spanText(LIBRARY, edge)).toBe('active -> overdue');
    expect(obligations.get('transition-rejected.Loan.status')?.category).toBe('transition_rejected');
    expect(obligations.get('transition-terminal.Loan.status')?.detail).toEqual({
      entity: 'Loan',
      field: 'status',
      states: ['returned'],
    });
  });

  it('carries invariant expressions as written, for entity-level and top-level invariants', () => {
    expect(obligations.get('invariant.Loan.DueAfterStart')?.expression).toBe('due > 0');
    expect(obligations.get('invariant.OneOpenLoan')?.expression).toBe(
      'for b in Books:\n    b.open_loans.count <= 1',
    );
  });

  it('ends an expression where its last operand ends, short of a closing parenthesis, as the reference does', () => {
    const text =
      '-- allium: 3\nentity Slot {\n    start: Integer\n    finish: Integer\n}\ninvariant Ordered {\n    for s in Slots:\n        not (s.finish < s.start)\n}\n';
    expect(byId(text).get('invariant.Ordered')?.expression).toBe(
      'for s in Slots:\n        not (s.finish < s.start',
    );
  });

  it('derives value, enum, config and surface obligations', () => {
    expect(obligations.get('value-equality.Money')?.category).toBe('value_equality');
    expect(obligations.get('entity-fields.Money')?.detail).toEqual({ fields: ['amount', 'currency'] });
    expect(obligations.get('enum-comparable.Genre')?.category).toBe('enum_comparable');
    const config = obligations.get('config-default.loan_days');
    expect(config?.source_construct).toBe('config.loan_days');
    expect(spanText(LIBRARY, config)).toBe('loan_days: Integer = 14');
    expect(obligations.get('surface-actor.Desk')?.category).toBe('surface_actor');
    expect(obligations.get('surface-exposure.Desk')?.detail).toEqual({
      surface: 'Desk',
      items: ['due', 'status'],
    });
    expect(spanText(LIBRARY, obligations.get('surface-provides.Desk'))).toBe('provides: Lend(member, book)');
  });

  it('derives rule obligations with their dependencies and trigger sources', () => {
    expect(obligations.get('rule-success.LendBook')?.dependencies).toEqual({
      entities_created: ['Loan'],
      entities_read: ['Book'],
      trigger_source: 'external',
    });
    expect(spanText(LIBRARY, obligations.get('rule-failure.LendBook.1'))).toBe(
      'requires: book.open_loans.count = 0',
    );
    expect(spanText(LIBRARY, obligations.get('rule-entity-creation.LendBook.1'))).toBe(
      'ensures: Loan.created(book: book, borrower: member, status: active)',
    );
    expect(obligations.get('rule-success.ReturnBook')?.dependencies).toEqual({
      entities_read: ['Loan'],
      entities_written: ['Loan'],
      trigger_emissions: ['Returned'],
      trigger_source: 'state_transition',
    });
    expect(obligations.get('temporal.MarkOverdue')?.dependencies?.trigger_source).toBe('temporal');
    expect(obligations.get('rule-success.ThankBorrower')?.dependencies).toEqual({
      trigger_emissions: ['Thanked'],
      trigger_source: 'chained',
    });
  });

  it('derives when-set and when-clear obligations for rules crossing a `when` set', () => {
    const set = obligations.get('when-set.ReturnBook.Loan.returned_at');
    expect(set?.description).toBe(
      'Verify rule ReturnBook sets Loan.returned_at when transitioning status from overdue to returned (entering when set {returned})',
    );
    expect(set?.detail).toMatchObject({ source_state: 'overdue', target_state: 'returned' });
    expect(spanText(LIBRARY, set)).toMatch(/^rule ReturnBook \{[\s\S]*\}$/);
    expect(obligations.has('when-set.MarkOverdue.Loan.returned_at')).toBe(false);
    const reopen = `-- allium: 3
entity Loan {
  status: active | returned
  returned_at: Timestamp when status = returned
  transitions status {
    active -> returned
    returned -> active
  }
}
rule Reopen {
  when: ReopenLoan(loan)
  requires: loan.status in {returned}
  ensures: loan.status = active
}
`;
    expect(byId(reopen).get('when-clear.Reopen.Loan.returned_at')?.description).toBe(
      'Verify rule Reopen clears Loan.returned_at when transitioning status from returned to active (leaving when set {returned})',
    );
  });

  it('numbers one failure obligation per requires, nested for/if clauses included', () => {
    const text = `-- allium: 3
rule Sweep {
  when: Tick()
  requires: a = 1
  for x in Items:
    requires: x.ok = true
    ensures: x.done = true
  if b:
    requires: c = 2
}
`;
    const ids = plan(text).obligations.map((o) => o.id);
    expect(ids).toEqual([
      'rule-success.Sweep',
      'rule-failure.Sweep.1',
      'rule-failure.Sweep.2',
      'rule-failure.Sweep.3',
    ]);
  });

  it('reports spans in UTF-8 bytes, as the reference does', () => {
    const text = '-- allium: 3\n-- café ☕ 𝄞\nenum Colour { red | green }\n';
    const colour = plan(text).obligations[0];
    expect(colour?.source_span.start).toBe(Buffer.byteLength('-- allium: 3\n-- café ☕ 𝄞\n'));
    expect(spanText(text, colour)).toBe('enum Colour { red | green }');
  });

  it('finds a deferred call under a negation, as the reference does (to it `-f(x)` is `0 - f(x)`)', () => {
    const text =
      '-- allium: 3\nentity E {\n    a: Integer\n}\ndeferred E.score\nrule R {\n    when: Go(e)\n    ensures: e.a = -score(e)\n}\n';
    expect(byId(text).get('rule-success.R')?.dependencies).toEqual({
      deferred_specs: ['score'],
      entities_written: ['E'],
      trigger_source: 'external',
    });
  });

  it('keeps the version and only the parse diagnostics', () => {
    const result = plan('entity A { x: Integer }\n');
    expect(result.version).toBeNull();
    expect(result.diagnostics.map((d) => [d.severity, d.code])).toEqual([['warning', null]]);
    expect(result.obligations.map((o) => o.id)).toEqual(['entity-fields.A']);
  });

  it('reads variants and contract signatures', () => {
    const text = `-- allium: 3
entity Shape { kind: Circle | Square }
variant Circle : Shape { radius: Decimal }
contract Codec {
  encode: (value: Any) -> ByteArray
}
`;
    const ids = byId(text);
    expect(spanText(text, ids.get('sum-type-variant.Circle'))).toBe(
      'variant Circle : Shape { radius: Decimal }',
    );
    expect(spanText(text, ids.get('contract-signature.Codec.encode'))).toBe(
      'encode: (value: Any) -> ByteArray',
    );
  });

  it('ends a signature without a return type at its last parameter, short of the `)` (the reference’s spans)', () => {
    const text = `-- allium: 3
contract Pay {
  send: (account: String, amount: Integer)
  check: (account: String)
  ping: ()
  quote: (a: String, b: Integer) -> Money
}
`;
    const ids = byId(text);
    expect(spanText(text, ids.get('contract-signature.Pay.send'))).toBe(
      'send: (account: String, amount: Integer',
    );
    expect(spanText(text, ids.get('contract-signature.Pay.check'))).toBe('check: (account: String');
    expect(spanText(text, ids.get('contract-signature.Pay.ping'))).toBe('ping: ()');
    expect(spanText(text, ids.get('contract-signature.Pay.quote'))).toBe(
      'quote: (a: String, b: Integer) -> Money',
    );
  });
});
