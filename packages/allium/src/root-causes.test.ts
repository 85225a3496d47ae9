import { describe, expect, it } from 'vitest';
import { checkSpecs } from './check-specs.js';
import type { Diagnostic } from './diagnostic.js';
import { buildModel } from './build-model.js';
import { buildPlan } from './build-plan.js';
import { parseSpec } from './parse-spec.js';

/** Small specs written from the language reference, one per root cause of issue 19. */
const check = (text: string): Diagnostic[] => checkSpecs([parseSpec(text, 's.allium')]);
const v3 = (text: string): Diagnostic[] => check(`-- allium: 3\n${text}`);
const brief = (d: Diagnostic): string =>
  `${d.location.line}:${d.location.col} ${d.severity} ${d.code ?? 'null'}`;
const withCode = (list: Diagnostic[], code: string | null): string[] =>
  list.filter((d) => d.code === code).map(brief);

describe('1. contract signatures parse', () => {
  it('accepts typed parameter lists and empty parameter lists', () => {
    const spec = parseSpec(
      '-- allium: 3\ncontract Codec {\n    serialize: (value: Any) -> ByteArray\n    join: (a: String, b: String) -> String\n    name: () -> String\n}\n',
      's.allium',
    );
    expect(spec.diagnostics).toEqual([]);
    const items = spec.declarations[0]?.kind === 'block' ? spec.declarations[0].items : [];
    expect(items.map((item) => (item.kind === 'field' ? item.value.op : undefined))).toEqual([
      '->',
      '->',
      '->',
    ]);
  });

  it('still reports a broken parameter list', () => {
    const spec = parseSpec('-- allium: 3\ncontract C {\n    op: (value: ) -> X\n}\n', 's.allium');
    expect(spec.diagnostics.some((d) => d.severity === 'error' && d.code === null)).toBe(true);
  });
});

describe('2. trigger shapes', () => {
  const rule = (when: string): string =>
    `entity Order {\n    status: pending | shipped\n}\nrule R {\n    when:${when}\n    ensures: Done()\n}\n`;
  const invalid = (text: string): string[] =>
    v3(text)
      .filter((d) => d.code === 'allium.rule.invalidTrigger')
      .map((d) => `${brief(d)} ${d.message}`);

  it('rejects an optional access `?.` where a trigger takes a member (the reference’s answers)', () => {
    const unsupported =
      "6:5 error allium.rule.invalidTrigger Rule 'R' uses an unsupported trigger form in 'when:'.";
    expect(invalid(rule(' Order?.Go(y)'))).toEqual([unsupported]);
    expect(invalid(rule(' o: Order?.status'))).toEqual([unsupported]);
    expect(invalid(rule(' Order?.status <= now'))).toEqual([unsupported]);
    expect(invalid(rule(' o: Order.status becomes shipped'))).toEqual([]);
  });

  it('reads no status assignment, creation or undefined type through `?.` (the reference’s answers)', () => {
    const spec = [
      'entity Order {',
      '    status: pending | shipped | lost',
      '    transitions status {',
      '        pending -> shipped',
      '        terminal: shipped',
      '    }',
      '}',
      'rule A {',
      '    when: Ship(o)',
      '    requires: o?.status = pending',
      '    ensures: o?.status = shipped',
      '    ensures: Ghost?.created(a: 1)',
      '    ensures: Order?.created(status: lost)',
      '}',
      '',
    ].join('\n');
    expect(
      v3(spec)
        .filter((d) => d.code?.startsWith('allium.status') || d.code === 'allium.rule.undefinedTypeReference')
        .map(brief),
    ).toEqual([
      '3:13 warning allium.status.noExit',
      '3:13 warning allium.status.unreachableValue',
      '3:23 warning allium.status.unreachableValue',
      '3:33 warning allium.status.noExit',
      '3:33 warning allium.status.unreachableValue',
    ]);
  });

  it('reads no field uses from `E?.created(…)` and takes no `x: E?.created` trigger (the reference’s answers)', () => {
    const spec =
      'entity Order {\n    status: pending | shipped\n    note: String\n}\nrule A {\n    when: o: Order?.created\n    ensures: Order?.created(note: "x")\n}\nrule B {\n    when: Go()\n    ensures: Order?.created(status: pending, note: "y")\n}\n';
    expect(
      v3(spec)
        .filter((d) => d.code === 'allium.field.unused' || d.code === 'allium.rule.invalidTrigger')
        .map(brief),
    ).toEqual([
      '3:5 info allium.field.unused',
      '4:5 info allium.field.unused',
      '7:5 error allium.rule.invalidTrigger',
    ]);
  });

  it('rejects an empty when: and a becomes trigger with no binding, at the clause', () => {
    expect(invalid(rule(''))).toEqual([
      "6:5 error allium.rule.invalidTrigger Rule 'R' uses an unsupported trigger form in 'when:'.",
    ]);
    expect(invalid(rule(' Order.status becomes shipped'))).toEqual([
      "6:5 error allium.rule.invalidTrigger Rule 'R' uses an unsupported trigger form in 'when:'.",
    ]);
  });

  it('accepts the reference trigger forms', () => {
    for (const when of [
      ' o: Order.status becomes shipped',
      ' o: Order.status transitions_to shipped',
      ' o: Order.created',
      ' o: Order.due_at <= now',
      ' Ship(order)',
      ' Ship(order) or Cancel(order)',
    ])
      expect(invalid(rule(when))).toEqual([]);
  });

  it('reports only the first name: value parameter of a trigger', () => {
    const found = invalid(rule(' Ship(order: o, by: user)'));
    expect(found).toHaveLength(1);
    expect(found[0]).toContain("trigger parameter 'order'");
  });
});

describe('3. sum types', () => {
  it('rejects a discriminator naming an undeclared variant (and the undeclared type)', () => {
    const found = v3(
      'entity Notice {\n    kind: Memo | Receipt\n}\nvariant Memo : Notice {\n    text: String\n}\n',
    );
    expect(withCode(found, 'allium.sum.discriminatorUnknownVariant')).toEqual([
      '3:18 error allium.sum.discriminatorUnknownVariant',
    ]);
    expect(withCode(found, 'allium.type.undefinedReference')).toEqual([
      '3:18 error allium.type.undefinedReference',
    ]);
  });

  it('rejects variant names mixed with plain values', () => {
    const found = v3(
      'entity Notice {\n    kind: Memo | draft\n}\nvariant Memo : Notice {\n    text: String\n}\n',
    );
    expect(withCode(found, 'allium.sum.invalidDiscriminator')).toEqual([
      '3:11 error allium.sum.invalidDiscriminator',
    ]);
  });

  it('calls capitalised values with no variants at all a v1 inline enum; accepts declared variants', () => {
    expect(withCode(v3('entity Paper {\n    size: A4 | Letter\n}\n'), 'allium.sum.v1InlineEnum')).toEqual([
      '3:11 error allium.sum.v1InlineEnum',
    ]);
    const good = v3(
      'entity Notice {\n    kind: Memo | Receipt\n}\nvariant Memo : Notice {\n    text: String\n}\nvariant Receipt : Notice {\n    total: Integer\n}\n',
    );
    expect(good.filter((d) => d.severity === 'error')).toEqual([]);
  });
});

describe('4. config and imported aliases', () => {
  it('reports an undeclared config.NAME at the member, not a declared one', () => {
    const found = v3(
      'config {\n    max_tries: Integer = 3\n}\nrule R {\n    when: Go(x)\n    requires: x.tries < config.max_tries and x.n < config.missing\n    ensures: Done()\n}\n',
    );
    expect(withCode(found, 'allium.config.undefinedReference')).toEqual([
      '7:59 warning allium.config.undefinedReference',
    ]);
  });

  it('reads a capitalised member after a dot as an imported alias', () => {
    const found = v3(
      'rule R {\n    when: Go(x)\n    requires: x.kind = shared.Kind\n    ensures: Done()\n}\n',
    );
    expect(withCode(found, 'allium.reference.undefinedImportedAlias')).toEqual([
      '4:24 error allium.reference.undefinedImportedAlias',
    ]);
    const imported = v3(
      'use "./shared.allium" as shared\nrule R {\n    when: Go(x)\n    requires: x.kind = shared.Kind\n    ensures: Done()\n}\n',
    );
    expect(withCode(imported, 'allium.reference.undefinedImportedAlias')).toEqual([]);
  });
});

describe('5. the version marker', () => {
  it('a missing marker is a null-coded warning at the first declaration', () => {
    const found = check('\nentity A {\n    x: String\n}\n');
    expect(found.filter((d) => d.code === null).map((d) => `${brief(d)} ${d.message}`)).toEqual([
      "2:1 warning null missing version marker; expected '-- allium: 1' as the first line",
    ]);
  });

  it('an unsupported version is a null-coded error at the first declaration', () => {
    const found = check('-- allium: 9\n\nentity A {\n    x: String\n}\n');
    expect(found.filter((d) => d.code === null).map((d) => `${brief(d)} ${d.message}`)).toEqual([
      '3:1 error null unsupported allium version 9; this parser supports versions 1, 2 and 3',
    ]);
    expect(parseSpec('-- allium: 9\n', 's').version).toBe(9);
  });
});

describe('6. a binding typed by a status value of exactly one entity', () => {
  const spec = `entity Order {
    status: placed | shipped | delivered
    transitions status {
        placed -> shipped
        shipped -> delivered
        terminal: delivered
    }
}
rule Deliver {
    when: Arrived(o)
    requires: o.status = placed
    ensures: o.status = delivered
}
rule Ship {
    when: Dispatch(o)
    requires: o.status = placed
    ensures: o.status = shipped
}
rule Place {
    when: Checkout(c)
    ensures: Order.created(status: placed)
}
`;
  it('finds the undeclared transition and no spurious noExit/unreachableValue', () => {
    const found = v3(spec);
    expect(withCode(found, 'allium.status.undeclaredTransition')).toEqual([
      '3:13 warning allium.status.undeclaredTransition',
    ]);
    expect(withCode(found, 'allium.status.noExit')).toEqual(['3:22 warning allium.status.noExit']);
    expect(withCode(found, 'allium.status.unreachableValue')).toEqual([]);
  });
});

describe('7. error recovery as the reference', () => {
  it('keeps the parsed part of a multi-line clause that ends in a parse error, and reports on it', () => {
    const spec =
      'rule R {\n    when: Go(x)\n    ensures:\n        Ghost.created(x: 1)\n        x.total = )\n}\n';
    expect(withCode(v3(spec), 'allium.rule.undefinedTypeReference')).toEqual([
      '5:9 error allium.rule.undefinedTypeReference',
    ]);
    expect(withCode(v3(spec), null)).toEqual(['6:19 error null']);
  });

  it('does not count names on broken lines as uses', () => {
    const spec = `entity Order {\n    status: open | closed\n}\nentity Audit {\n    at: Timestamp\n}\nrule R {\n    when: Go(order)\n    requires: order.status = open Audit ) (\n    ensures: order.status = closed\n}\n`;
    const unused = v3(spec)
      .filter((d) => d.code === 'allium.entity.unused')
      .map((d) => d.message);
    expect(unused).toContain(
      "Entity 'Audit' is declared but not referenced elsewhere in this specification.",
    );
  });

  it('loses the clause right after a broken `for x` line with it, as the reference skips one more token', () => {
    const spec = parseSpec(
      '-- allium: 3\nrule R {\n    when: Go(x)\n    requires: a rule listens for trigger\n    requires: b = 1\n    ensures: Done()\n}\n',
      's.allium',
    );
    const rule = spec.declarations[0];
    const clauses =
      rule?.kind === 'block' ? rule.items.map((i) => (i.kind === 'clause' ? i.keyword : i.kind)) : [];
    expect(clauses).toEqual(['when', 'requires', 'ensures']);
  });

  it('drops a block the end of the file leaves unclosed: its names are no uses, its items no findings', () => {
    const spec = `entity Customer {
    name: String
}

entity Order {
    customer: Customer
    total: Money
`;
    expect(v3(spec).map(brief)).toEqual([
      '2:8 warning allium.entity.unused',
      '3:5 info allium.field.unused',
      '9:1 error null',
    ]);
    expect(v3(spec)[2]?.message).toBe("expected '}', found end of file");
    const declarations = parseSpec(
      `-- allium: 3
${spec}`,
      's.allium',
    ).declarations;
    expect(declarations.map((d) => (d.kind === 'block' ? d.name?.name : d.kind))).toEqual(['Customer']);
  });

  it('reads a declaration keyword inside an unclosed block as a broken item; the block runs to the next }', () => {
    const spec = `entity Order {
    status: pending | shipped
    customer: Customer

entity Customer {
    name: String
}

value Money {
    amount: Decimal
}
`;
    const diagnostics = v3(spec);
    const syntax = diagnostics.filter((d) => d.code === null);
    expect(syntax.map(brief)).toEqual(['6:1 error null']);
    expect(syntax[0]?.message).toBe(
      "expected block item (name: value, let name = value, when:/requires:/ensures: clause, for ... in ...:, or open question), found 'entity'",
    );
    // `name: String` became a field of Order, and Customer was never declared.
    expect(diagnostics.map((d) => d.message)).toContain(
      "Field 'Order.name' is declared but not referenced elsewhere.",
    );
    expect(withCode(diagnostics, 'allium.type.undefinedReference')).toEqual([
      '4:15 error allium.type.undefinedReference',
    ]);
    expect(withCode(diagnostics, 'allium.definition.unused')).toEqual([
      '10:7 warning allium.definition.unused',
    ]);
  });
});

describe('8. codes the reference emits', () => {
  it('field.unused for a field nothing accesses; a sibling or member access counts as use', () => {
    const found = v3(
      'entity Book {\n    title: String\n    isbn: String\n    pages: Integer\n    is_long: pages > 500\n}\nrule R {\n    when: Read(b)\n    ensures: Noted(title: b.title)\n}\n',
    );
    expect(found.filter((d) => d.code === 'allium.field.unused').map((d) => d.message)).toEqual([
      "Field 'Book.isbn' is declared but not referenced elsewhere.",
      "Field 'Book.is_long' is declared but not referenced elsewhere.",
    ]);
  });

  it('externalEntity.missingSourceHint: a warning, an info when a rule mentions it, none with imports', () => {
    const text =
      'external entity Payer {\n    id: String\n}\nexternal entity Bank {\n    id: String\n}\nrule R {\n    when: Pay(p)\n    requires: p.x = Payer.y\n    ensures: Done()\n}\n';
    expect(withCode(v3(text), 'allium.externalEntity.missingSourceHint')).toEqual([
      '2:17 info allium.externalEntity.missingSourceHint',
      '5:17 warning allium.externalEntity.missingSourceHint',
    ]);
    expect(
      withCode(v3(`use "./bank.allium" as bank\n${text}`), 'allium.externalEntity.missingSourceHint'),
    ).toEqual([]);
  });

  it('surface.unusedBinding for a context binding nothing uses; facing only when the surface provides', () => {
    const found = v3(
      'entity Loan {\n    due: Timestamp\n}\nsurface Desk {\n    facing clerk: Clerk\n    context loan: Loan\n    exposes:\n        clerk.name\n}\nsurface Counter {\n    facing patron: Patron\n    context loan: Loan\n    provides:\n        Renew(loan)\n}\n',
    );
    expect(found.filter((d) => d.code === 'allium.surface.unusedBinding').map((d) => d.message)).toEqual([
      "Surface 'Desk' binding 'loan' is not used in the surface body.",
      "Surface 'Counter' binding 'patron' is not used in the surface body.",
    ]);
  });

  it('created.missingStatus when an entity with transitions is created without a status', () => {
    const found = v3(
      'entity Job {\n    status: queued | done\n    transitions status {\n        queued -> done\n        terminal: done\n    }\n}\nrule Start {\n    when: Go(x)\n    ensures: Job.created()\n}\n',
    );
    expect(withCode(found, 'allium.created.missingStatus')).toEqual([
      '11:14 warning allium.created.missingStatus',
    ]);
  });

  it('no diagnostic for open questions (the reference reports none)', () => {
    expect(v3('open question "Why?"\n')).toEqual([]);
  });
});

describe('further reference codes', () => {
  it('a value declared twice and mentioned nowhere else is unused at both declarations', () => {
    const spec = `value Address {\n    street: String\n}\nvalue Address {\n    city: String\n}\nvalue Money {\n    amount: Decimal\n}\nentity Order {\n    total: Money\n}\n`;
    expect(withCode(v3(spec), 'allium.definition.unused')).toEqual([
      '2:7 warning allium.definition.unused',
      '5:7 warning allium.definition.unused',
    ]);
  });

  it('surface.relatedUndefined for a related surface that does not exist', () => {
    const found = v3(
      'entity Loan {\n    due: Timestamp\n}\nsurface Counter {\n    context loan: Loan\n    related:\n        Returns(loan) when loan.due > now\n        Renewals\n    exposes:\n        loan.due\n}\nsurface Returns {\n    context loan: Loan\n    exposes:\n        loan.due\n}\n',
    );
    expect(
      found
        .filter((d) => d.code === 'allium.surface.relatedUndefined')
        .map((d) => `${brief(d)} ${d.message}`),
    ).toEqual([
      "9:9 error allium.surface.relatedUndefined Surface 'Counter' references unknown related surface 'Renewals'.",
    ]);
  });

  it('list.mixedElementTypes for a list literal mixing literal kinds', () => {
    const found = v3('config {\n    tags: List<String> = ["a", 1]\n    ok: List<String> = ["a", "b"]\n}\n');
    expect(withCode(found, 'allium.list.mixedElementTypes')).toEqual([
      '3:26 error allium.list.mixedElementTypes',
    ]);
  });
});

describe('agreement on snippets of the language reference (checked against the reference binary)', () => {
  it('an external entity nothing mentions is unused, as an internal one', () => {
    expect(withCode(v3('external entity Payer {\n    name: String\n}\n'), 'allium.entity.unused')).toEqual([
      '2:17 warning allium.entity.unused',
    ]);
  });

  it('labels are not uses: enum values, annotation and invariant names, a use alias, a deferred path, after ->', () => {
    const unusedOrder = (text: string): string[] =>
      withCode(v3(`entity Order {\n    total: Integer\n}\n${text}`), 'allium.entity.unused');
    const unused = ['2:8 warning allium.entity.unused'];
    expect(unusedOrder('enum Kind {\n    Order | Refund\n}\nentity H {\n    k: Kind\n}\n')).toEqual([
      ...unused,
      '8:8 warning allium.entity.unused',
    ]);
    expect(unusedOrder('contract Api {\n    @invariant Order\n        -- never mutates\n}\n')).toEqual(
      unused,
    );
    expect(unusedOrder('invariant Order {\n    true\n}\n')).toEqual(unused);
    expect(unusedOrder('use "./other.allium" as Order\n')).toEqual(unused);
    expect(unusedOrder('deferred Order.refund "refunds.allium"\n')).toEqual(unused);
    expect(unusedOrder('value Box {\n    items: List<String>\n    first: items -> Order\n}\n')).toEqual(
      expect.arrayContaining(unused),
    );
    // A real use still counts.
    expect(unusedOrder('entity Line {\n    order: Order\n}\n')).toEqual(['5:8 warning allium.entity.unused']);
  });

  it('an optional type argument: List<Node?>', () => {
    const spec = parseSpec('-- allium: 3\nentity Node {\n    children: List<Node?>\n}\n', 's.allium');
    expect(spec.diagnostics).toEqual([]);
  });

  it('a deferred location hint may be a quoted path, a URL or a `-- see:` comment on its line', () => {
    const hints = (text: string): string[] =>
      v3(text)
        .filter((d) => d.code === 'allium.deferred.missingLocationHint')
        .map((d) => `${d.location.line} ${d.message}`);
    expect(
      hints(
        'deferred A.one "a.allium"\ndeferred B.two    -- see: b.allium\ndeferred C.three  -- https://example.com/c\ndeferred D.four   -- no hint here\ndeferred E.five.\n',
      ),
    ).toEqual([
      "5 Deferred specification 'D.four' should include a location hint.",
      "6 Deferred specification 'E.five.' should include a location hint.",
    ]);
    // The path stops before the dangling dot, which is then stray input at the declaration level.
    expect(withCode(v3('deferred E.five.\n'), null)).toEqual(['2:16 error null']);
  });

  it('a transitions graph with a broken state fails as an item, so its `}` closes the entity', () => {
    const errors = v3(
      'entity Doc {\n    status: draft | done\n    transitions status { ... }\n    title: String\n}\n',
    )
      .filter((d) => d.severity === 'error')
      .map((d) => `${brief(d)} ${d.message.split(',')[0]}`);
    expect(errors).toEqual([
      '4:26 error null expected source state',
      '5:5 error null expected declaration (entity',
      '6:1 error null expected declaration (entity',
    ]);
  });

  it('a keyword in an expression’s first position reads as a name: [when condition] is a list of two names', () => {
    const spec = parseSpec(
      '-- allium: 3\nsurface S {\n    context item: Thing\n    exposes:\n        item.field [when condition]\n}\n',
      's.allium',
    );
    expect(spec.diagnostics).toEqual([]);
  });
});

describe('undefined bindings where the reference judges them (its answers for these specs)', () => {
  const unbound = (body: string): string[] =>
    withCode(
      v3(`rule R {\n    when: Parsed(line, code)\n    ${body}\n    ensures: Done()\n}\n`),
      'allium.rule.undefinedBinding',
    );

  it('every use, not once per name', () => {
    expect(unbound('requires: finding.line = line or finding.line = line + 1')).toEqual([
      '4:15 error allium.rule.undefinedBinding',
      '4:38 error allium.rule.undefinedBinding',
    ]);
  });

  it('only the root of a one-step member access: not x.a.b, not x?.a, not inside where or |', () => {
    expect(unbound('requires: code in ghost.entity.values')).toEqual([]);
    expect(unbound('requires: ghost?.ready')).toEqual([]);
    expect(unbound('requires: ghost.ready')).toEqual(['4:15 error allium.rule.undefinedBinding']);
  });

  it('a `when: x: Entity` binding used by a clause: once, at that clause', () => {
    const found = withCode(
      v3(
        'entity Order {\n    total: Integer\n}\nrule R {\n    when: order: Order\n    requires: order.total > 0\n    ensures: Done(order)\n}\n',
      ),
      'allium.rule.undefinedBinding',
    );
    expect(found).toEqual(['7:5 error allium.rule.undefinedBinding']);
    // Several (a broken item between them keeps each its own clause): the first that a clause uses, once, at the
    // first clause using it; one that nothing uses is passed over. The reference's answers for these rules.
    const first = (clauses: string): string[] =>
      withCode(
        v3(`rule A {\n    when: r: Reducer\nrule B {\n    when: s: Subscription\n${clauses}\n}\n`),
        'allium.rule.undefinedBinding',
      );
    expect(first('    requires: s.x != 1\n    ensures: r.y = 1')).toEqual([
      '7:5 error allium.rule.undefinedBinding',
    ]);
    expect(first('    requires: s.x != 1')).toEqual(['6:5 error allium.rule.undefinedBinding']);
    expect(first('    requires: true')).toEqual([]);
  });

  it('a declared name binds nothing: a lower-case entity, a `use` alias, the rule’s own name; `_x` is judged', () => {
    const found = withCode(
      v3(
        [
          'use "./other.allium" as core',
          'entity user {',
          '    handle: String',
          '}',
          'given {',
          '    desk: Desk',
          '}',
          'rule lookup {',
          '    when: Ping(x)',
          '    requires: user.handle = "a"',
          '    requires: core.flag and lookup.ready and _q.ok',
          '    requires: desk.open and x.ok and Desk.ok',
          '    ensures: Done()',
          '}',
          '',
        ].join('\n'),
      ),
      'allium.rule.undefinedBinding',
    );
    // The reference's answer for this spec: user, core, lookup and _q; never desk, x or Desk.
    expect(found).toEqual([
      '11:15 error allium.rule.undefinedBinding',
      '12:15 error allium.rule.undefinedBinding',
      '12:29 error allium.rule.undefinedBinding',
      '12:46 error allium.rule.undefinedBinding',
    ]);
  });
});

describe('migration errors for the colon forms annotations replaced (the reference’s answers)', () => {
  it('guidance:, guarantee: and invariant: are reported, then read as clauses', () => {
    const found = v3(
      'rule R {\n    when: Go(x)\n    guidance: "prefer off-peak"\n    guarantee: "none"\n    ensures: Done()\n}\nentity E {\n    n: Integer\n    invariant: n > 0\n}\n',
    ).filter((d) => d.severity === 'error');
    expect(found.map((d) => `${d.location.line}:${d.location.col} ${d.message}`)).toEqual([
      '4:5 `guidance:` syntax was replaced by `@guidance`. Use `@guidance` followed by indented comment lines.',
      '5:5 `guarantee:` syntax was replaced by `@guarantee`. Use `@guarantee` followed by indented comment lines.',
      '10:5 `invariant:` syntax was replaced by `@invariant`. Use `@invariant Name` followed by indented comment lines.',
    ]);
  });
});

describe('a legacy produces: clause (the reference’s answer)', () => {
  it('is reported and dropped, and the next item is parsed in its place', () => {
    const found = v3('rule R {\n    when: Go(x)\n    produces: a, b\n    ensures: x.done = true\n}\n');
    expect(found.filter((d) => d.severity !== 'info').map(brief)).toEqual(['4:5 warning null']);
  });
});

describe('keywords as names and produces: outside rules (the reference’s answers)', () => {
  it('produces: is a legacy clause only among a rule’s own items; in an entity it is a field', () => {
    const found = v3(
      'entity E {\n    produces: String\n    n: Integer\n}\nrule R {\n    when: Go(e)\n    ensures: e.n = 1\n}\n',
    );
    expect(found.filter((d) => d.location.line === 3).map((d) => `${brief(d)} ${d.message}`)).toEqual([
      "3:5 info allium.field.unused Field 'E.produces' is declared but not referenced elsewhere.",
    ]);
  });

  it('a keyword names a call argument (when:, with:, in:), and exists at a line end applies to the next line', () => {
    const spec = parseSpec(
      '-- allium: 3\nentity E {\n    n: Integer\n}\nrule R {\n    when: Go(e)\n    requires: exists\n        e.n\n    ensures: Done(when: e, with: 1)\n    ensures: E.created(n: 1, in: 2)\n}\n',
      's.allium',
    );
    expect(spec.diagnostics).toEqual([]);
  });
});

describe('small syntax details (the reference’s answers)', () => {
  it('an unknown annotation is reported at its word, not at the @', () => {
    const found = v3('entity C {\n    n: Integer\n    @foo Bar\n}\n').filter((d) => d.severity === 'error');
    expect(found.map(brief)).toEqual(['4:6 error null']);
  });

  it('an empty type argument list parses: List<>', () => {
    expect(parseSpec('-- allium: 3\nentity F {\n    k: List<>\n}\n', 's.allium').diagnostics).toEqual([]);
  });

  it('an unterminated string or backtick is one unrecognised token up to the line end; the next line parses', () => {
    const errors = (text: string): string[] =>
      v3(text)
        .filter((d) => d.severity === 'error')
        .map((d) => `${brief(d)} ${d.message.split(', found ')[1] ?? ''}`);
    expect(errors('rule R {\n    when: X()\n    ensures: Y(msg: "oops)\n}\n')).toEqual([
      '4:21 error null unrecognised token',
    ]);
    expect(errors('entity A {\n    a: `open\n    b: Integer\n}\n')).toEqual([
      '3:8 error null unrecognised token',
    ]);
    // At the end of the text, with the block unclosed: the one error, as the reference reports it.
    expect(errors('entity A {\n    a: "at the end')).toEqual(['3:8 error null unrecognised token']);
  });

  it('an indented clause value whose first item fails spans its first token (a plan’s source span)', () => {
    const text = '-- allium: 3\nsurface S {\n    provides:\n        Act(a, ...)\n}\n';
    const surface = parseSpec(text, 's.allium').declarations[0];
    const item = surface?.kind === 'block' ? surface.items[0] : undefined;
    expect(item === undefined ? '' : text.slice(item.start, item.end)).toBe('provides:\n        Act');
  });

  it('a call alone on an item line reads as `name:` (the `(` taken for the colon): the error is at the next colon', () => {
    const found = v3('rule R {\n    when: X()\n    Done(a: b)\n}\n').filter((d) => d.severity === 'error');
    expect(found.map((d) => `${brief(d)} ${d.message.split(', found ')[1] ?? ''}`)).toEqual([
      "4:11 error null ':'",
    ]);
  });

  it('a slash after a plain name qualifies it only before a capitalised word or config/entity/value', () => {
    const value = (text: string): string => {
      const decl = parseSpec(`-- allium: 3\nentity E {\n    f: ${text}\n}\n`, 's.allium').declarations[0];
      const item = decl?.kind === 'block' ? decl.items[0] : undefined;
      const expr = item?.kind === 'field' ? item.value : undefined;
      return expr === undefined ? '' : `${expr.kind} ${expr.name ?? expr.op ?? ''}`;
    };
    expect(value('core/Order')).toBe('ident core/Order');
    expect(value('core / Order')).toBe('ident core/Order');
    expect(value('core/config')).toBe('ident core/config');
    expect(value('core/active')).toBe('binary /');
    expect(value('core/Order/Line')).toBe('binary /');
  });

  it('a backslash escapes a line break: the string goes on on the next line, which keeps its own numbering', () => {
    const found = v3('entity A {\n    a: "one \\\n two"\n    b: Integer\n    c: Nope\n}\n');
    expect(found.filter((d) => d.severity === 'error').map(brief)).toEqual([
      '6:8 error allium.type.undefinedReference',
    ]);
  });
});

describe('malformed input read as the reference reads it (its answers for these specs)', () => {
  const errors = (text: string): string[] =>
    v3(text)
      .filter((d) => d.severity === 'error')
      .map((d) => `${d.location.line}:${d.location.col} ${d.message}`);

  it('a join base `Base { … }` uses an entity it names, never a value or an enum; a plain base uses both', () => {
    const spec = [
      'value Res {\n    code: String\n}\nvariant Ok : Res {\n    body: String\n}',
      'value Plain {\n    code: String\n}\nvariant Ok2 : Plain\n{\n    body: String\n}',
      'enum Colour { red | blue }\nvariant Ok3 : Colour {\n    x: String\n}',
      'value low {\n    code: String\n}\nvariant Ok4 : low {\n    x: String\n}',
      'value low2 {\n    code: String\n}\nvariant Ok5 : low2',
      'entity Shape {\n    n: Integer\n}\nvariant Circle : Shape {\n    radius: Decimal\n}',
      'entity lowent {\n    n: Integer\n}\nvariant Sq : lowent {\n    side: Decimal\n}',
    ].join('\n');
    // The reference's answer for this spec.
    expect([
      ...withCode(v3(spec), 'allium.definition.unused'),
      ...withCode(v3(spec), 'allium.entity.unused'),
    ]).toEqual([
      '2:7 warning allium.definition.unused',
      '15:6 warning allium.definition.unused',
      '19:7 warning allium.definition.unused',
    ]);
  });

  it('an item’s own name or path is no use (`Payout: x`, `Payout.amount: x`, after a failed item on its line)', () => {
    const unused = (item: string): string[] =>
      withCode(v3(`entity Payout {\n    n: Integer\n}\nrule S {\n    ${item}\n}\n`), 'allium.entity.unused');
    // The reference's answers: the failed words are skipped one by one until `name:` or `a.b:` starts an item.
    expect(unused('ensure created Payout.amount_pence : claim.x')).toEqual([
      '2:8 warning allium.entity.unused',
    ]);
    expect(unused('ensure created Payout : claim.x')).toEqual(['2:8 warning allium.entity.unused']);
    expect(unused('ensure created Payout.amount_pence')).toEqual(['2:8 warning allium.entity.unused']);
    expect(unused('ensures: Payout.created(n: 1)')).toEqual([]);
  });

  it('a qualified name with a capitalised alias is judged as an alias, never as an undefined type', () => {
    const found = v3(
      'use "./b.allium" as core\nrule R {\n    when: o: Core/Order.status transitions_to paid\n    requires: Core/Order.lookup(o).ok\n    ensures: Core/Invoice.created(o: o)\n}\n',
    );
    // The reference's answer: an unknown alias `Core` three times, no `rule.undefinedTypeReference`.
    expect(found.filter((d) => d.code?.startsWith('allium.r')).map(brief)).toEqual([
      '4:14 error allium.reference.undefinedImportedAlias',
      '5:15 error allium.reference.undefinedImportedAlias',
      '6:14 error allium.reference.undefinedImportedAlias',
    ]);
  });

  it('a capitalised member name (`p.Status`) is no use of a declaration named so', () => {
    const spec =
      'enum Status { draft | live }\nvalue Money {\n    n: Integer\n}\nentity Order {\n    n: Integer\n}\nrule R {\n    when: Go(p)\n    requires: p.Status = draft\n    requires: p?.Money.n = 1\n    ensures: p.Order.done = true\n}\n';
    // The reference's answer for this spec (it also reads each `p.X` as an unknown alias `p`).
    expect(
      v3(spec)
        .filter((d) => d.code?.endsWith('.unused'))
        .map(brief),
    ).toEqual([
      '2:6 warning allium.definition.unused',
      '3:7 warning allium.definition.unused',
      '6:8 warning allium.entity.unused',
    ]);
  });

  it('a name that labels or binds is no use: named arguments, keys, join fields, parameters, bindings', () => {
    // Each line names `Order` only where it labels or binds something, never as the entity; the reference reports
    // `entity Order` unused for every one of them (probed one by one), and uses it once a later name reads it.
    const unusedOrder = (rule: string): string[] =>
      withCode(
        v3(`entity Order {\n    n: Integer\n}\nentity Box {\n    items: List<Integer>\n}\n${rule}`),
        'allium.entity.unused',
      ).filter((line) => line.startsWith('2:'));
    const inRule = (lines: string): string =>
      `rule R {\n    when: Go(box)\n${lines}\n}\nrule S {\n    when: Next(box)\n    ensures: Done(box)\n}\n`;
    const unused = ['2:8 warning allium.entity.unused'];
    const labels = [
      '    ensures: Placed(Order: box)',
      '    requires: valid(f(Order: 1))',
      '    ensures: Box{Order: box.items}',
      '    ensures: Box{Order}',
      '    ensures: x({Order: 1})',
      '    let Order = 1\n    ensures: Done(box)',
      '    ensures:\n        let Order = 1\n        Done(box)',
      '    ensures: Done(box.items.any(Order => box.n > 1))',
      '    ensures: Done(box.items.any((Order) => box.n > 1))',
      '    for Order in box.items:\n        ensures: Done(box)',
      '    ensures:\n        for (Order, k) in box.items:\n            Done(box)',
    ];
    for (const lines of labels) expect(unusedOrder(inRule(lines)), lines).toEqual(unused);
    expect(unusedOrder('rule R {\n    when: Order: Box.created\n    ensures: Done(box)\n}\n')).toEqual(
      unused,
    );
    expect(unusedOrder('surface S {\n    facing Order: Box\n    exposes: Box.items\n}\n')).toEqual(unused);
    expect(unusedOrder('contract C {\n    serialize: (Order: Any) -> String\n}\n')).toEqual(unused);
    expect(unusedOrder('value V {\n    total(Order): Integer\n}\n')).toEqual(unused);
    // A name that reads the binding, or names the entity, is a use.
    expect(unusedOrder(inRule('    let Order = 1\n    ensures: Done(Order)'))).toEqual([]);
    expect(unusedOrder(inRule('    ensures: Done(box.items.any(Order => Order.n > 1))'))).toEqual([]);
    expect(unusedOrder(inRule('    ensures: Placed(order: Order)'))).toEqual([]);
  });

  it('an alias before `/` and the names of a `when` qualifier are no uses; the qualifier’s need a plain state', () => {
    // The reference's answers, probed one by one: `entity Order` is unused (`2:8`) where the line names it only as an
    // alias or inside a field's `when` qualifier, and used where it is part of an expression.
    const unusedOrder = (field: string): string[] =>
      withCode(
        v3(`entity Order {\n    n: Integer\n}\nentity Box {\n    status: open | closed\n    ${field}\n}\n`),
        'allium.entity.unused',
      ).filter((line) => line.startsWith('2:'));
    const unused = ['2:8 warning allium.entity.unused'];
    for (const field of [
      'items: Order/Foo',
      'total: Order/config.limit',
      'vega: Decimal? when Order = closed',
      'vega: Decimal? when status = open | Order',
      'vega: Decimal? when status = (Order)',
      'vega: Decimal? when status = closed | Order.d',
      'vega: Decimal? when status = core/Order | closed',
    ])
      expect(unusedOrder(field), field).toEqual(unused);
    // No plain state: no qualifier, and the names are those of an expression.
    for (const field of [
      'items: core/Order',
      'vega: Decimal? when status = Order.x',
      'vega: Decimal? when Order = done.d',
      'vega: Decimal? when status != Order',
    ])
      expect(unusedOrder(field), field).toEqual([]);
  });

  it('a `when` qualifier needs a plain state name: without one, the field’s value is the whole expression', () => {
    const spec = [
      'entity Doc {',
      '    status: active | deleted',
      '    a: Ghost when status = deleted.d',
      '    b: Phantom when status = core/Deleted',
      '    c: Spook when status = deleted | x.y',
      '    transitions status {',
      '        active -> deleted',
      '        terminal: deleted',
      '    }',
      '}',
      '',
    ].join('\n');
    // The reference's answer: only `c` is a qualified field (its type judged, `status` not used by it); `a` and `b`
    // hold `when` expressions, which read `status` and whose types no check judges.
    const found = v3(spec).filter(
      (d) => d.code?.startsWith('allium.field') || d.code?.startsWith('allium.type'),
    );
    expect(found.map(brief)).toEqual([
      '4:5 info allium.field.unused',
      '5:5 info allium.field.unused',
      '6:5 info allium.field.unused',
      '6:8 error allium.type.undefinedReference',
    ]);
  });

  it('`not exists` always wants an operand (a bare `exists` before `)` is a name)', () => {
    expect(
      errors('rule R {\n    when: Go(x)\n    ensures: f(not exists)\n    ensures:\n        not exists\n}\n'),
    ).toEqual([
      "4:26 expected expression (identifier, number, string, true/false, null, if/for/not/exists, '(', '{', '['), found ')'",
      "7:1 expected expression (identifier, number, string, true/false, null, if/for/not/exists, '(', '{', '['), found '}'",
      "8:1 expected '}', found end of file",
    ]);
  });

  it('a `use … as` wants an import alias', () => {
    expect(errors('use "./b.allium" as= b\n')).toEqual(["2:20 expected import alias, found '='"]);
  });

  it('a derived value’s parameters are names separated by commas: no type, no missing or trailing comma', () => {
    expect(
      errors(
        'contract Bus {\n    dispatch(event: Event): Void\n}\nentity E {\n    total(a b): a\n}\nentity F {\n    pair(a,): a\n}\nentity G {\n    both(a, b): a\n}\n',
      ),
    ).toEqual([
      "3:19 expected ')', found ':'",
      "6:13 expected ')', found identifier",
      "9:12 expected parameter name, found ')'",
    ]);
  });

  it('an annotation needs an indented comment body (else it fails, and its block loses its brace)', () => {
    expect(errors('entity E {\n    n: Integer\n    @invariant Positive\n}\n')).toEqual([
      '4:16 Annotations must be followed by at least one indented comment line.',
      "6:1 expected '}', found end of file",
    ]);
  });

  it('names: a PascalCase annotation name, no name after @guidance, capitalised contract and invariant names', () => {
    expect(
      errors(
        'surface S {\n    @guarantee lowercase\n        -- a body\n    @guidance Named\n        -- text\n}\n',
      ),
    ).toEqual([
      '3:16 Annotation names must be PascalCase.',
      '5:15 `@guidance` does not take a name. Remove the name after `@guidance`.',
    ]);
    expect(
      errors('contract signer {\n    sign: (b: Bytes) -> Bytes\n}\ninvariant lower {\n    true\n}\n'),
    ).toEqual([
      '2:10 contract name must start with an uppercase letter',
      '5:11 invariant name must start with an uppercase letter',
    ]);
  });

  it('contracts: entries are demands/fulfils Name (alias/Name for an imported one), and there must be one', () => {
    expect(
      errors(
        'surface S {\n    contracts:\n        needs Store\n}\nsurface T {\n    contracts:\n        demands codec/Codec\n}\n',
      ),
    ).toEqual([
      // Sorted here (checkSpecs); the CLI prints parse errors in the order found, as the reference: 4:9 first.
      '3:5 Empty `contracts:` clause. Add at least one `demands` or `fulfils` entry.',
      "4:9 Unknown direction 'needs' in contracts clause. Use `demands` or `fulfils`.",
      "6:1 expected block item (name: value, let name = value, when:/requires:/ensures: clause, for ... in ...:, or open question), found 'surface'",
      "8:23 Reference 'codec/Codec' uses unknown import alias 'codec'.",
    ]);
  });

  it('a second when: line continues the expression before it (`when` is an operator), and fails at its colon', () => {
    expect(errors('rule R {\n    when: Go(b)\n    when: Go(b)\n    ensures: Done(b: b)\n}\n')).toEqual([
      "4:9 expected expression (identifier, number, string, true/false, null, if/for/not/exists, '(', '{', '['), found ':'",
    ]);
  });

  it('an empty for/if body takes the next line for its own, however little it is indented', () => {
    expect(
      errors(
        'rule R {\n    when: Go(b)\n    ensures:\n        for i in b.items:\n    requires: b.ready\n}\n',
      ),
    ).toEqual([
      "6:13 expected expression (identifier, number, string, true/false, null, if/for/not/exists, '(', '{', '['), found ':'",
    ]);
  });

  it('`open` at the top level commits to an open question; a join entry must be a field name', () => {
    expect(errors('foo = open\nbar\n').at(-1)).toBe("3:1 expected 'question', found identifier");
    expect(errors('rule S {\n    when: Go(b)\n    ensures: F{a: b, 1}\n}\n')[0]).toBe(
      '4:22 expected join field name, found number',
    );
  });

  it('a context binding whose type is left out before the next clause is empty, not the next line', () => {
    const text =
      'surface S {\n    facing viewer: User\n    context region:\n    exposes:\n        region.name\n}\n';
    expect(errors(text)).toEqual([]);
    const surface = parseSpec(`-- allium: 3\n${text}`, 's.allium').declarations[0];
    const items = surface?.kind === 'block' ? surface.items : [];
    expect(items.map((item) => (item.kind === 'clause' ? item.keyword : item.kind))).toEqual([
      'facing',
      'context',
      'exposes',
    ]);
  });

  it('a byte order mark hides the version marker; an empty invariant body reads as its `}`', () => {
    const bom = checkSpecs([parseSpec('\uFEFF-- allium: 3\nentity A {\n    n: Integer\n}\n', 's.allium')]);
    expect(bom.slice(0, 2).map((d) => `${brief(d)} ${d.message.slice(0, 22)}`)).toEqual([
      '1:1 warning null missing version marker',
      '1:1 error null expected declaration (',
    ]);
    const plan = buildPlan(
      parseSpec('-- allium: 3\nentity Box {\n    invariant Positive {}\n}\n', 's.allium'),
    );
    expect(plan.obligations.find((o) => o.id === 'invariant.Box.Positive')?.expression).toBe('}');
  });

  it.each([
    [
      'a default with no type',
      'default limit = 5\nentity A {\n    n: Integer\n}\nrule R {\n    when: Go(a)\n    ensures: a.n = limit\n}\n',
      [],
    ],
    [
      'a projection names one field',
      'entity W {\n    admins: members where permission = admin ->\n',
      ['4:1 expected projection field, found end of file'],
    ],
    [
      'an annotation keyword after @',
      'rule R {\n    @\n}\n',
      ["4:1 expected annotation keyword after `@`, found '}'", "5:1 expected '}', found end of file"],
    ],
    [
      'no commas between enum values',
      'enum PayoutStatus { SCHEDULED, PAID, FAILED }\n',
      ["2:30 expected enum variant, found ','"],
    ],
    [
      'every entry of an object literal is name: value',
      'rule R {\n    when: Go(a)\n    ensures: a.v = {x: 1, y = 2}\n}\n',
      [
        "4:29 expected ':', found '='",
        "5:1 expected declaration (entity, rule, enum, value, config, surface, actor, given, default, variant, deferred, use, open question, contract, invariant), found '}'",
      ],
    ],
    [
      'a ( on the next line calls what precedes it',
      'rule R {\n    when: Go(a)\n    ensures:\n        Done(a: a)\n        (a.b)\n}\n',
      [],
    ],
    [
      'a < right after a word opens type arguments',
      'rule R {\n    when: Go(a)\n    requires: a.count<3\n    ensures: Done(a: a)\n}\n',
      [
        "5:12 expected expression (identifier, number, string, true/false, null, if/for/not/exists, '(', '{', '['), found ':'",
      ],
    ],
    [
      'external needs entity; a failed declaration skips one more token',
      'ownership: external\nactor One\nactor Two\n',
      [
        '2:1 expected declaration (entity, rule, enum, value, config, surface, actor, given, default, variant, deferred, use, open question, contract, invariant), found identifier',
        "3:1 expected 'entity' after 'external'",
        "5:1 expected '{', found end of file",
      ],
    ],
  ])('%s', (_, text, expected) => {
    expect(errors(text)).toEqual(expected);
  });

  it('a field with nothing after its colon has its own name for type (model); a bare when: binds the next line', () => {
    const model = buildModel(parseSpec('-- allium: 3\nentity A {\n    ready :\n}\n', 's.allium')) as {
      entities: { fields: { name: string; type_expr: string }[] }[];
    };
    expect(model.entities[0]?.fields).toEqual([{ name: 'ready', type_expr: 'ready' }]);
    const text =
      '-- allium: 3\nentity User {\n    email: String\n}\nrule R {\n    when:\n    ensures: User.created(email: "x")\n}\n';
    const plan = buildPlan(parseSpec(text, 's.allium'));
    expect(plan.obligations.find((o) => o.id === 'rule-success.R')?.dependencies).toEqual({
      entities_read: ['User'],
      trigger_source: 'creation',
    });
  });

  it('an error is left out only right after an error on its line (the version marker’s included)', () => {
    const found = (text: string): string[] =>
      parseSpec(text, 's.allium')
        .diagnostics.filter((d) => d.severity === 'error')
        .map((d) => `${d.location.line}:${d.location.col} ${d.message}`);
    expect(found('-- allium: 7\n       done\nentity Order {\n}')).toEqual([
      '2:8 unsupported allium version 7; this parser supports versions 1, 2 and 3',
    ]);
    expect(found('-- allium: 3\nsurface S {\n    contracts:\n        d')).toEqual([
      "4:9 Unknown direction 'd' in contracts clause. Use `demands` or `fulfils`.",
      '3:5 Empty `contracts:` clause. Add at least one `demands` or `fulfils` entry.',
      "4:10 expected '}', found end of file",
    ]);
  });

  it('at one position a diagnostic over a whole `A | B` value comes after one at its first name', () => {
    expect(
      v3('entity Order {\n    status: Pending | Shipped\n}\n')
        .filter((d) => d.location.col === 13)
        .map(brief),
    ).toEqual(['3:13 error allium.type.undefinedReference', '3:13 error allium.sum.v1InlineEnum']);
  });

  it('a name after `->` inside an entity is not a use of its own field', () => {
    const spec =
      'entity Section {\n    document: Document\n    kind: String\n}\nentity Document {\n    f1: String\n    f2: String\n    f3: String\n    f4: String\n    f5: String\n    f8: String\n    sections: Section with document = this\n    w: sections where kind = f1\n    p: sections -> f2\n    q: sections where kind = "x" -> f3\n    m: sections.any(s => s.kind = f4)\n    n: f5.length\n    z: (sections -> f8).count\n}\nrule R {\n    when: x: Document.created\n    ensures: Done(x.w, x.p, x.q, x.m, x.n, x.z)\n}\n';
    // The reference's answer for this spec.
    expect(withCode(v3(spec), 'allium.field.unused')).toEqual([
      '3:5 info allium.field.unused',
      '8:5 info allium.field.unused',
      '9:5 info allium.field.unused',
      '12:5 info allium.field.unused',
    ]);
  });

  it('a declaration named in lower case is used only as a variant base or a default type', () => {
    const spec =
      'entity user {\n    name: String\n}\nentity item {\n    kind: String\n}\nentity thing {\n    kind: String\n}\nvalue money {\n    amount: Integer\n}\nenum colour {\n    red | blue\n}\nvariant Special : item {\n    extra: String\n}\ndefault thing standard = thing.created(kind: "x")\nentity Owner {\n    u: user\n    m: money\n    c: colour\n    t: Set<thing>\n}\nrule R {\n    when: o: Owner.created\n    ensures: Done(o.u, o.m, o.c, o.t, user, money)\n}\n';
    // The reference's answer for this spec.
    expect(
      v3(spec)
        .filter((d) => d.code === 'allium.entity.unused' || d.code === 'allium.definition.unused')
        .map(brief),
    ).toEqual([
      '2:8 warning allium.entity.unused',
      '11:7 warning allium.definition.unused',
      '14:6 warning allium.definition.unused',
    ]);
  });

  it('`=>` makes a lambda of whatever precedes it, binding loosest and to the right', () => {
    const syntaxErrors = (condition: string): string[] =>
      v3(`rule R {\n    when: Go(a)\n    requires: ${condition}\n    ensures: Done()\n}\n`)
        .filter((d) => d.code === null)
        .map((d) => d.message);
    // The reference reports no syntax error for any of these.
    for (const condition of ['a.b => c', 'a.b(x) => c', '1 => 2', 'f(a.b => c)', 'a => b => c', 'a + b => c'])
      expect(syntaxErrors(condition)).toEqual([]);
    const [invariant] = parseSpec(
      '-- allium: 3\ninvariant I {\n    a + b => c -> d\n}\n',
      's.allium',
    ).declarations;
    const lambda = invariant?.kind === 'invariant' ? invariant.body : undefined;
    expect(lambda?.kind).toBe('lambda');
    expect(lambda?.name).toBeUndefined();
    expect(lambda?.a?.op).toBe('->');
  });

  it("a default's instance name is not a use of a declaration of that name", () => {
    expect(
      withCode(
        v3(
          'entity Role {\n    name: String\n}\nentity Plan {\n    name: String\n}\ndefault Role = { name: "x" }\ndefault Plan Plan = { name: "y" }\n',
        ),
        'allium.entity.unused',
      ),
    ).toEqual(['2:8 warning allium.entity.unused']);
  });

  it('a variant whose braces open on the base line is a join: no field of it judged, no name in it a use', () => {
    // The reference's answers for these two specs: `Reserved {` joins, `General` with `{` on the next line does not.
    const all = (spec: string): string[] => v3(spec).map(brief);
    expect(
      all(
        '\nvalue Seat {\n    row: String\n}\n\nvalue Other {\n    row: String\n}\n\nentity Venue {\n    name: String\n}\n\nentity Ticket {\n    kind: Reserved | General | Third\n    code: String\n}\n\nvariant Reserved : Ticket {\n    seat: Seat\n    venue: Venue\n    ghost: Missing\n    zone: String\n}\n\nvariant General : Ticket\n{\n    other: Other\n}\n\nvariant Third : Ticket {\n    when_at: Timestamp\n}\n\nrule R {\n    when: t: Ticket.created\n    ensures: Done(t.code, t.zone, t.seat)\n}\n',
      ),
    ).toEqual([
      '3:7 warning allium.definition.unused',
      '11:8 warning allium.entity.unused',
      '12:5 info allium.field.unused',
      '16:5 info allium.field.unused',
      '29:5 info allium.field.unused',
    ]);
    expect(
      all(
        '\nvalue Seat {\n    row: String\n}\n\nentity Ticket {\n    kind: Reserved | General\n    code: String\n}\n\nvariant Reserved : Ticket {\n    seat: Seat\n    ghost: Missing\n    status: a | b\n    items: Set<Seat>\n}\n\nvariant General : Ticket\n{\n    ghost2: Missing2\n    seat2: Seat\n    status2: c | d\n}\n\nrule R {\n    when: t: Ticket.created\n    ensures: Done(t.code, t.kind)\n}\n',
      ),
    ).toEqual([
      '21:5 info allium.field.unused',
      '21:13 error allium.type.undefinedReference',
      '22:5 info allium.field.unused',
      '23:5 info allium.field.unused',
    ]);
  });

  it('a related surface named with an alias is not looked for among the local surfaces', () => {
    const spec =
      'use "./other.allium" as bugs\nentity Ticket {\n    issue: String\n}\nsurface S {\n    facing t: Ticket\n    related:\n        bugs/IssuePage(t.issue) when t.issue != null\n        Missing(t)\n        bugs/Other\n        nope/Thing(t)\n}\n';
    // The reference's answer for this spec.
    expect(withCode(v3(spec), 'allium.surface.relatedUndefined')).toEqual([
      '10:9 error allium.surface.relatedUndefined',
    ]);
  });

  it('an unexpected duration is named `duration`', () => {
    const found = v3('entity E {\n    b: Duration  2.days\n    c: Integer 5\n}\n')
      .filter((d) => d.code === null)
      .map((d) => `${d.location.line}:${d.location.col} ${d.message.replace(/.*, found /, 'found ')}`);
    // The reference's answer for this spec.
    expect(found).toEqual(['3:18 found duration', '4:16 found number']);
  });

  it('an assigned value outside the enum stops the value warnings, not the check of transitions against the graph', () => {
    // The reference's answer for this spec (`suspended` is no status of Member).
    expect(
      v3(
        '\nentity Member {\n    status: pending | active | cancelled\n\n    transitions status {\n        pen:ding -> active\n        active -> cancelled\n        terminal: cancelled\n    }\n}\n\nentity ClassBooking {\n    member: Member\n    status: booked | no_show\n}\n\nrule ActivateMembership {\n    when: FirstPaymentReceived(member)\n    requires: member.status = pending\n    ensures: member.status = active\n}\n\nrule SuspendForNoShows {\n    when: booking: ClassBooking.status transitions_to no_show\n    ensures: booking.member.status = suspended\n}\n',
      )
        .filter((d) => d.code?.startsWith('allium.status.') === true)
        .map(brief),
    ).toEqual([
      '4:13 warning allium.status.undeclaredTransition',
      '15:13 warning allium.status.noExit',
      '15:13 warning allium.status.unreachableValue',
      '15:22 warning allium.status.noExit',
      '15:22 warning allium.status.unreachableValue',
    ]);
  });

  it("a variant's braces on its base line parse as a join, with a join's errors", () => {
    // The reference's answer for this spec: `variant Leaf : Node {` inside Branch's braces is two join entries, and
    // `let x = 1` fails as a join field. Sorted here (checkSpecs); the CLI prints the parse errors first, as the
    // reference does.
    expect(
      v3(
        'entity Node {\n    kind: Branch | Leaf | Twig\n}\nvariant Branch : Node {\n    children: List<Node?>\nvariant Leaf : Node {\n    data: List<Integer>\n}\n}\nvariant Twig : Node {\n    size: Integer\n    let x = 1\n}\nrule R {\n    when: n: Node.created\n    ensures: Done(n.kind)\n}\n',
      ).map(brief),
    ).toEqual([
      '3:20 error allium.sum.discriminatorUnknownVariant',
      '3:20 error allium.type.undefinedReference',
      '3:27 error allium.sum.discriminatorUnknownVariant',
      '3:27 error allium.type.undefinedReference',
      '13:11 error null',
      '14:1 error null',
    ]);
  });

  it("columns count UTF-8 bytes, as the reference's do", () => {
    // The reference's answer for this spec: characters outside ASCII (emoji, CJK, accents) in strings, backtick
    // literals, a string running over two lines and an unrecognised token move the columns after them by their extra
    // bytes.
    const found = check(
      '-- allium: 3 \u2014 \u00fcn\u00efcode\nentity Message {\n    subject: String -- \u201cquoted\u201d \u00fc\n    emoji: `\ud83c\udf89-\u00fc` | plain\n}\nrule R {\n    when: Go(x)\n    requires: x.subject = "\ud83c\udf89 party" and y1.bad = 1\n    requires: x.subject = "multi\\\n \u00fc line" and y2.bad = 1\n    requires: x.subject = `\u00fc` and y3.bad = 1\n    requires: x.a \u00fc y4.bad\n    requires: x.a = "\u65e5\u672c" and x.b = "\ud83c\udf89" and y5.c = 1\n    ensures: Done(x)\n}\n',
    )
      .filter((d) => d.code === 'allium.rule.undefinedBinding' || d.code === null)
      .map((d) => `${d.location.line}:${d.location.col}`);
    expect(found).toEqual(['2:1', '8:44', '10:15', '11:36', '12:19', '13:51']);
  });

  it("an error names `within`, `produces` and `consumes` as keywords, and a loop's name as its variable", () => {
    const found = (text: string): string[] =>
      v3(text)
        .filter((d) => d.code === null)
        .map((d) => `${d.location.line}:${d.location.col} ${d.message.replace(/^.*, found /, 'found ')}`);
    // The reference's answers.
    expect(found('within\nproduces\nconsumes\n')).toEqual([
      "2:1 found 'within'",
      "3:1 found 'produces'",
      "4:1 found 'consumes'",
    ]);
    expect(v3('config {\n    t: Duration = core/for.x\n}\n').map((d) => d.message)).toEqual([
      "expected loop variable, found '.'",
    ]);
  });

  it('an allium-ignore directive counts only as a whole-line comment', () => {
    const spec =
      'entity Ticket {\n    title: String -- allium-ignore allium.status.unreachableValue, allium.status.noExit\n    status: open | closed\n    legacy: String\n}\nrule Close {\n    when: Close(ticket)\n    requires: ticket.status = open\n    ensures: ticket.status = closed\n}\n';
    // The reference's answer: the trailing directive on line 3 does not silence line 4.
    expect(withCode(v3(spec), 'allium.status.unreachableValue')).toEqual([
      '4:13 warning allium.status.unreachableValue',
    ]);
  });

  it('a missing declaration name is named as the reference names it', () => {
    const expected = (keyword: string): string | undefined =>
      check(`-- allium: 3\n${keyword} : x\n`).find((d) => d.code === null)?.message;
    // The reference's messages for `<keyword> : x`.
    expect(
      ['entity', 'value', 'enum', 'rule', 'surface', 'actor', 'contract', 'external entity'].map(expected),
    ).toEqual([
      "expected entity name, found ':'",
      "expected value type name, found ':'",
      "expected enum name, found ':'",
      "expected rule name, found ':'",
      "expected surface name, found ':'",
      "expected actor name, found ':'",
      "expected contract name, found ':'",
      "expected entity name, found ':'",
    ]);
  });

  it('at one position an unknown alias read from `X.Y` (over the member) comes after one at the name `X`', () => {
    // The reference's order for this spec; a qualified name `foo/Parsed` has no second diagnostic at its position.
    const found = v3(
      'entity Entry {\n    name: String\n}\nrule R {\n    when: Surface.Parsed(entry)\n    ensures: Surface.Done(entry)\n    ensures: Nope.created(name: entry.name)\n}\nrule S {\n    when: foo/Parsed(entry)\n    ensures: Entry.created(name: entry.name)\n}\n',
    );
    expect(found.filter((d) => d.severity === 'error').map(brief)).toEqual([
      '6:11 error allium.rule.undefinedTypeReference',
      '6:11 error allium.reference.undefinedImportedAlias',
      '7:14 error allium.rule.undefinedTypeReference',
      '7:14 error allium.reference.undefinedImportedAlias',
      '8:14 error allium.rule.undefinedTypeReference',
      '11:11 error allium.reference.undefinedImportedAlias',
    ]);
  });
});
