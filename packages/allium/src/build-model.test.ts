import { describe, expect, it } from 'vitest';
import { buildModel } from './build-model.js';
import { readFixture, readReference, V3_FIXTURES } from './fixtures.test-helpers.js';
import { parseSpec } from './parse-spec.js';

describe('buildModel parity with `allium model`', () => {
  it.each(V3_FIXTURES)('%s: entities, value types, enums and config equal the reference', (name) => {
    const ours = buildModel(parseSpec(readFixture(name), `${name}.allium`));
    const reference = readReference(name, 'model') as Record<string, unknown>;
    expect(ours.version).toBe(reference['version']);
    expect(ours.entities).toEqual(reference['entities']);
    expect(ours.value_types).toEqual(reference['value_types']);
    expect(ours.enums).toEqual(reference['enums']);
    expect(ours.config).toEqual(reference['config']);
  });

  it('omits empty parts and attaches simple invariant bounds to fields', () => {
    const model = buildModel(
      parseSpec(
        '-- allium: 3\nentity Gauge {\n  level: Integer\n  invariant Min { 0 <= this.level }\n}\n',
        'g',
      ),
    );
    expect(model).toEqual({
      version: 3,
      entities: [
        {
          name: 'Gauge',
          kind: 'internal',
          fields: [
            { name: 'level', type_expr: 'Integer', constraints: [{ invariant: 'Min', bound: '>= 0' }] },
          ],
          invariants: [{ name: 'Min', scope: 'entity', expression: '0 <= this.level' }],
        },
      ],
      diagnostics: [],
    });
  });
});

describe('buildModel on qualified names (the reference’s answers)', () => {
  it('a qualified type is no inline enum value, and a qualified with/where source is unknown', () => {
    const model = buildModel(
      parseSpec(
        '-- allium: 3\nuse "./pay.allium" as pay\nentity Order {\n    payment: pay/Payment\n    status: open | paid\n    refunds: pay/Refund with order = this\n}\n',
        'o.allium',
      ),
    );
    const [order] = model.entities as {
      fields: { name: string; enum_values?: string[] }[];
      relationships: unknown[];
    }[];
    expect(order?.fields.map((f) => [f.name, f.enum_values])).toEqual([
      ['payment', undefined],
      ['status', ['open', 'paid']],
    ]);
    expect(order?.relationships).toEqual([{ name: 'refunds', target: 'unknown' }]);
  });

  it('`A | ai/B` is `(A | ai) / B`, a derived value, as the reference reads it (`/` binds less tightly than `|`)', () => {
    const model = buildModel(
      parseSpec(
        '-- allium: 3\nuse "./ai.allium" as ai\nentity Message {\n    content: Map<String, Any> | ai/Content\n    kind: ai/Text | ai/Image\n    note: ai/Text\n}\n',
        'm.allium',
      ),
    );
    const [message] = model.entities as { fields: { name: string }[]; derived_values?: { name: string }[] }[];
    expect(message?.fields.map((f) => f.name)).toEqual(['note']);
    expect(message?.derived_values).toEqual([{ name: 'content' }, { name: 'kind' }]);
  });

  it('`not exists X` is a field, as the reference reads it (an operator of its own, not `not`): `not` is derived', () => {
    // The reference's `allium model` answer for this entity: `is_leaf` a field typed by its text, the other two
    // derived (`not (…)` is a `not`; `not exists X = true` compares `not exists X` with `true`).
    const model = buildModel(
      parseSpec(
        '-- allium: 3\nentity Node {\n    status: open | closed\n    is_leaf: not exists Link{from: this}\n    is_closed: not (status = open)\n    odd: not exists Link{from: this} = true\n}\nentity Link {\n    from: Node\n}\n',
        'n.allium',
      ),
    );
    const [node] = model.entities as {
      fields: { name: string; type_expr: string }[];
      derived_values?: { name: string }[];
    }[];
    expect(node?.fields.map((f) => [f.name, f.type_expr])).toEqual([
      ['status', 'open | closed'],
      ['is_leaf', 'not exists Link{from: this}'],
    ]);
    expect(node?.derived_values).toEqual([{ name: 'is_closed' }, { name: 'odd' }]);
  });
  it('a negation `-a` is a derived value, as the reference reads it (the subtraction `0 - a`)', () => {
    const model = buildModel(
      parseSpec(
        '-- allium: 3\nentity E {\n    a: Integer\n    b: -a\n    c: -a + 1\n    d: Integer\n}\n',
        'e.allium',
      ),
    );
    const [entity] = model.entities as { fields: { name: string }[]; derived_values?: { name: string }[] }[];
    expect(entity?.fields.map((f) => f.name)).toEqual(['a', 'd']);
    expect(entity?.derived_values).toEqual([{ name: 'b' }, { name: 'c' }]);
  });
  it('attaches an invariant comparing `this.f` with a literal to `f`, as the reference reads the literal', () => {
    // The reference's `allium model` answer: a negation is arithmetic (no literal), parentheses are only grouping,
    // a string's escapes are resolved and its interpolations written `${name}`, a number is kept as written.
    const text = [
      '-- allium: 3',
      'entity E {',
      '    a: Integer',
      '    b: String',
      '    c: String',
      '    d: String',
      '    e: Integer',
      '    f: Integer',
      '    g: String',
      '    invariant Neg { this.a >= -1 }',
      '    invariant Spaced { this.b != "a b" }',
      '    invariant Interp { this.c != "x{name}y" }',
      '    invariant Esc { this.d != "q\\"r" }',
      '    invariant Under { 1_000 >= this.e }',
      '    invariant Paren { this.f <= (3) }',
      '    invariant Upper { this.g != Pending }',
      '    invariant Now { this.g != now }',
      '}',
    ].join('\n');
    const [entity] = buildModel(parseSpec(text, 'e.allium')).entities as {
      fields: { name: string; constraints?: { invariant: string; bound: string }[] }[];
    }[];
    expect(
      entity?.fields.map((f) => [f.name, f.constraints?.map((c) => `${c.invariant}: ${c.bound}`)]),
    ).toEqual([
      ['a', undefined],
      ['b', ['Spaced: != "a b"']],
      ['c', ['Interp: != "x${name}y"']],
      ['d', ['Esc: != "q"r"']],
      ['e', ['Under: <= 1_000']],
      ['f', ['Paren: <= 3']],
      ['g', ['Upper: != Pending']],
    ]);
  });
  it('a value that is only an indented `}` on the next line is an empty block spanning it (the reference’s answer)', () => {
    // The `}` then closes the entity. `b:` has nothing indented after it: its value is empty and prints as its name.
    const model = buildModel(
      parseSpec('-- allium: 3\nentity E {\n    b:\n    c: String\n    a:\n        }\n', 'e.allium'),
    );
    const [entity] = model.entities as { fields: { name: string; type_expr: string }[] }[];
    expect(entity?.fields.map((f) => [f.name, f.type_expr])).toEqual([
      ['b', 'b'],
      ['c', 'String'],
      ['a', '}'],
    ]);
  });
});

describe('buildModel inline enums (the reference’s answers)', () => {
  it('reads `|` as binding tighter than `??`, `+` and `*`, as the reference’s parser does', () => {
    const spec =
      '-- allium: 3\nentity Order {\n    status: pending ?? shipped | delivered\n    kind: small | big + huge\n    size: tiny | wee\n    mood: calm | a * b\n}\n';
    const fields = buildModel(parseSpec(spec, 's.allium')).entities?.[0]?.fields;
    expect(fields).toEqual([
      { name: 'status', type_expr: 'pending ?? shipped | delivered' },
      { name: 'size', type_expr: 'tiny | wee', enum_values: ['tiny', 'wee'] },
    ]);
  });
});

describe('buildModel config (the reference’s answer)', () => {
  it('lists plain parameters only, not one with a `when` qualifier nor a path (`x.f: …`)', () => {
    const spec =
      '-- allium: 3\nconfig {\n    a: Integer = 1\n    b: String\n    c: Timestamp when status = x\n    d: Integer = 2\n    e: Set<Integer>\n    mail.window: Duration = 2.days\n}\n';
    expect(buildModel(parseSpec(spec, 's.allium')).config).toEqual([
      { default_expr: '1', name: 'a', type_expr: 'Integer' },
      { name: 'b', type_expr: 'String' },
      { default_expr: '2', name: 'd', type_expr: 'Integer' },
      { name: 'e', type_expr: 'Set<Integer>' },
    ]);
  });
});
