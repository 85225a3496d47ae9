import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normalisePath } from './check-declarations.js';
import { applySuppressions, checkSpecs, formatDiagnostic, inReferenceOrder } from './check-specs.js';
import type { Diagnostic } from './diagnostic.js';
import { fixtureNames, readFixture, referenceDiagnostics, V3_FIXTURES } from './fixtures.test-helpers.js';
import { parseSpec } from './parse-spec.js';
import { checkReports, type FileReport } from './reports.js';

const LIFECYCLE_CODES = [
  'allium.status.unreachableValue',
  'allium.status.noExit',
  'allium.status.undeclaredTransition',
  'allium.entity.unused',
  'allium.definition.unused',
];

const check = (name: string): Diagnostic[] => checkSpecs([parseSpec(readFixture(name), `${name}.allium`)]);
const at = (d: { location: { line: number; col: number } }): string => `${d.location.line}:${d.location.col}`;

describe('checkSpecs parity with the reference checker', () => {
  it.each(V3_FIXTURES)('%s: errors at exactly the reference lines, columns and codes', (name) => {
    const ours = check(name)
      .filter((d) => d.severity === 'error')
      .map((d) => `${at(d)} ${d.code ?? ''}`);
    const reference = referenceDiagnostics(name)
      .filter((d) => d.severity === 'error')
      .map((d) => `${at(d)} ${d.code ?? ''}`);
    expect(ours).toEqual(reference);
  });

  it.each(V3_FIXTURES.flatMap((name) => LIFECYCLE_CODES.map((code) => [name, code] as const)))(
    '%s: %s at the reference positions (recall and precision 1)',
    (name, code) => {
      const ours = check(name)
        .filter((d) => d.code === code)
        .map(at);
      const reference = referenceDiagnostics(name)
        .filter((d) => d.code === code)
        .map(at);
      expect(ours.sort()).toEqual(reference.sort());
    },
  );

  it('v1/v2 fixtures: every reference error line is an error here; no more than 5% extra error lines', () => {
    let referenceLines = 0;
    let extraLines = 0;
    const missed: string[] = [];
    for (const name of fixtureNames()) {
      const ours = new Set(
        check(name)
          .filter((d) => d.severity === 'error')
          .map((d) => d.location.line),
      );
      const reference = new Set(
        referenceDiagnostics(name)
          .filter((d) => d.severity === 'error')
          .map((d) => d.location.line),
      );
      referenceLines += reference.size;
      for (const line of reference) if (!ours.has(line)) missed.push(`${name}:${line}`);
      for (const line of ours) if (!reference.has(line)) extraLines += 1;
    }
    expect(missed).toEqual([]);
    expect(referenceLines).toBeGreaterThan(200);
    expect(extraLines / referenceLines).toBeLessThanOrEqual(0.05);
  });
});

describe('individual checks', () => {
  const run = (text: string): Diagnostic[] => checkSpecs([parseSpec(`-- allium: 3\n${text}`, 's.allium')]);
  const codes = (text: string): (string | null)[] => run(text).map((d) => d.code);

  it('reports a duplicate let in one scope', () => {
    const text = 'rule R {\n  when: Go(x)\n  let a = x.b\n  let a = x.c\n  ensures: Done(a: a)\n}\n';
    expect(codes(text)).toContain('allium.let.duplicateBinding');
  });

  it('reports an undefined binding only for unbound member roots', () => {
    const text = 'rule R {\n  when: Go(x)\n  requires: x.ok and y.ok\n  ensures: Done()\n}\n';
    const found = run(text).filter((d) => d.code === 'allium.rule.undefinedBinding');
    expect(found.map((d) => d.message)).toEqual([expect.stringContaining("'y'")]);
  });

  // The checks below share one walk of the file (spec-facts.ts); each keeps its own scope.
  const where = (text: string, code: string): string[] =>
    run(text)
      .filter((d) => d.code === code)
      .map((d) => `${d.location.line}:${d.location.col}`);

  it('reports an undefined binding at every use the reference judges (its answer for this spec)', () => {
    const text = [
      'rule R {',
      '  when: Go(x)',
      '  ensures: ghost.a = 1',
      '  for item in x.items:',
      '    requires: ghost.b and item.c',
      '  requires: phantom.d',
      '}',
    ].join('\n');
    expect(where(text, 'allium.rule.undefinedBinding')).toEqual(['4:12', '6:15', '7:13']);
  });

  it('reports duplicate lets across the whole rule, at the repeated name (the reference’s answer)', () => {
    const text = [
      'rule R {',
      '  when: Go(x)',
      '  let a = 1',
      '  if x.ok:',
      '    let a = 2',
      '    let a = 3',
      '  ensures:',
      '    let b = 1',
      '    let b = 2',
      '}',
    ].join('\n');
    expect(where(text, 'allium.let.duplicateBinding')).toEqual(['6:9', '7:9', '10:9']);
    expect(run(text).find((d) => d.code === 'allium.let.duplicateBinding')?.message).toBe(
      "Duplicate let binding 'a' in this rule.",
    );
  });

  it('judges list literals in blocks, invariants and defaults, not in variants', () => {
    const text = [
      'entity E {',
      '  kind: A | B',
      '  tags: List<String>',
      '}',
      'variant A : E {',
      '  x: [1, "a"]',
      '}',
      'default E e = E{tags: [1, "b"]}',
      'invariant I { [true, 1] = [] }',
    ].join('\n');
    expect(where(text, 'allium.list.mixedElementTypes')).toEqual(['9:23', '10:15']);
  });

  it('reports undeclared config names only where the config check looks', () => {
    const text = [
      'config {',
      '  limit: Integer = 1',
      '}',
      'entity E {',
      '  n: Integer',
      '  invariant Small { this.n < config.inside_invariant }',
      '}',
      'rule R {',
      '  when: Go(e)',
      '  requires: e.n < config.limit and e.n < config.missing',
      '  requires: e.n > -config.negated',
      '  ensures: e.n = [config.in_a_list]',
      '}',
    ].join('\n');
    expect(
      run(text)
        .filter((d) => d.code === 'allium.config.undefinedReference')
        .map((d) => d.message),
    ).toEqual([
      "Config reference 'config.missing' is not declared in any config block.",
      // A negation is the subtraction `0 - config.negated` to the reference, whose operands it looks into.
      "Config reference 'config.negated' is not declared in any config block.",
    ]);
  });

  it('reports an unknown import alias in every kind of declaration', () => {
    const text = [
      'entity E {',
      '  kind: A',
      '}',
      'variant A : E {',
      '  x: lib/Thing',
      '}',
      'default E e = E{kind: other.Thing}',
    ].join('\n');
    expect(where(text, 'allium.reference.undefinedImportedAlias')).toEqual(['6:6', '8:23']);
  });

  it('reads `x.Name` with an undeclared, unbound `x` as the reference does, and `X.name` not at all', () => {
    // The reference's answer for this spec: the lower-case root is an unbound binding and an unknown import alias at
    // once, in that order; a capitalised root with a lower-case member is neither.
    const text = [
      'entity Trip {',
      '  count: Integer',
      '}',
      'rule Start {',
      '  when: StartTrip(trip)',
      '  requires: missing.Field = 1',
      '  ensures: Missing.field = trip.count',
      '}',
    ].join('\n');
    expect(
      run(text)
        .filter((d) => d.location.line === 7 || d.location.line === 8)
        .map((d) => `${at(d)} ${d.code}`),
    ).toEqual(['7:13 allium.rule.undefinedBinding', '7:13 allium.reference.undefinedImportedAlias']);
  });

  it('judges a lifecycle next to an empty transitions block and a broken `ensures: Trip. now` as the reference does', () => {
    const text = [
      'entity Trip {',
      '  status: planned | active | done',
      '',
      '  transitions status {',
      '  }',
      '}',
      'rule Start {',
      '  when: StartTrip(trip)',
      '  ensures: Trip. now',
      '}',
      'rule Finish {',
      '  when: FinishTrip(trip)',
      '  requires: trip.status = active',
      '  ensures: trip.status = done',
      '}',
    ].join('\n');
    // The reference's answer: no parse error; `done` is reached, by an edge the empty graph does not declare.
    expect(
      run(text)
        .filter((d) => d.code?.startsWith('allium.status.') === true || d.severity === 'error')
        .map((d) => `${at(d)} ${d.code}`),
    ).toEqual([
      '3:11 allium.status.noExit',
      '3:11 allium.status.unreachableValue',
      '3:21 allium.status.undeclaredTransition',
      '3:21 allium.status.unreachableValue',
    ]);
  });

  it('reports an unresolved use path unless the target is in the check set', () => {
    const importer = parseSpec('-- allium: 3\nuse "./shared.allium" as shared\n', 'specs/a.allium');
    const alone = checkSpecs([importer]).map((d) => d.code);
    expect(alone).toContain('allium.use.unresolvedPath');
    const target = parseSpec('-- allium: 3\n', 'specs/shared.allium');
    expect(checkSpecs([importer, target]).map((d) => d.code)).not.toContain('allium.use.unresolvedPath');
    // The path is the string's text as the reference reads it: an interpolation dropped, an escape resolved.
    const braced = parseSpec(
      '-- allium: 3\nuse "./shared.allium{x}" as s\nuse "./sh\\ared.allium" as t\n',
      'specs/b.allium',
    );
    expect(checkSpecs([braced, target]).map((d) => d.code)).not.toContain('allium.use.unresolvedPath');
    const odd = parseSpec('-- allium: 3\nuse "./sh{x}ared.allium" as s\n', 'specs/c.allium');
    expect(checkSpecs([odd]).map((d) => d.message)).toContain(
      'Use path "./shared.allium" does not resolve to a file in the current check set.',
    );
  });

  it('asks the caller’s locator where a use path leads, when it gives one, and nothing else', () => {
    const importer = {
      path: 'specs/a.allium',
      key: '/r/common/a.allium',
      text: '-- allium: 3\nuse "./t.allium" as o\nentity A {\n  x: o/T\n}\n',
    };
    const beside = {
      path: 'specs/t.allium',
      key: '/r/specs/t.allium',
      text: '-- allium: 3\nentity T {\n  y: String\n}\n',
    };
    const real = {
      path: 'common/t.allium',
      key: '/r/common/t.allium',
      text: '-- allium: 3\nentity T {\n  z: String\n}\n',
    };
    const asked: string[] = [];
    const locate = (from: string, path: string): string | undefined => {
      asked.push(`${from} ${path}`);
      return from === 'specs/a.allium' && path === './t.allium' ? '/r/specs/t.allium' : undefined;
    };
    const unused = (reports: readonly FileReport[]): string[] =>
      reports.flatMap((r) =>
        r.diagnostics
          .filter((d) => d.code === 'allium.entity.unused')
          .map((d) => `${r.spec_file} ${d.message}`),
      );
    // By name (no locator), against the importer's key: common/t.allium is the one imported, and specs/t.allium unused.
    expect(unused(checkReports([importer, beside, real], 'check').reports)).toEqual([
      "specs/a.allium Entity 'A' is declared but not referenced elsewhere in this specification.",
      "specs/t.allium Entity 'T' is declared but not referenced elsewhere in this specification.",
    ]);
    // With a locator, where it says: the file beside the importer's name, as the reference finds it through a link.
    expect(unused(checkReports([importer, beside, real], 'check', locate).reports)).toEqual([
      "specs/a.allium Entity 'A' is declared but not referenced elsewhere in this specification.",
      "common/t.allium Entity 'T' is declared but not referenced elsewhere in this specification.",
    ]);
    expect(new Set(asked)).toEqual(new Set(['specs/a.allium ./t.allium']));
    // A path it says leads nowhere is unresolved, even where the name alone would find a file.
    const nowhere = checkReports([importer, beside, real], 'check', () => undefined).reports[0];
    expect(nowhere?.diagnostics.map((d) => d.code)).toContain('allium.use.unresolvedPath');
  });

  it('resolves a use path from a file named without a folder (the check run inside the specs folder)', () => {
    const importer = parseSpec('-- allium: 3\nuse "./shared.allium" as shared\n', 'a.allium');
    const target = parseSpec('-- allium: 3\n', 'shared.allium');
    expect(checkSpecs([importer, target]).map((d) => d.code)).not.toContain('allium.use.unresolvedPath');
    const up = parseSpec('-- allium: 3\nuse "../lib/shared.allium" as shared\n', 'specs/a.allium');
    const below = parseSpec('-- allium: 3\n', 'lib/shared.allium');
    expect(checkSpecs([up, below]).map((d) => d.code)).not.toContain('allium.use.unresolvedPath');
    // The path names the file exactly, extension included, as the reference resolves it.
    const bare = parseSpec('-- allium: 3\nuse "../lib/shared" as shared\n', 'specs/a.allium');
    expect(checkSpecs([bare, below]).map((d) => d.code)).toContain('allium.use.unresolvedPath');
  });

  describe('a check set of several files (the reference’s answers for these two-file sets)', () => {
    const core = [
      '-- allium: 3',
      'entity Customer {',
      '    name: String',
      '    status: active | closed',
      '}',
      'value Money {',
      '    amount: Decimal',
      '}',
      'enum Tier { basic | gold }',
      'rule Close {',
      '    when: CloseRequested(customer)',
      '    ensures: CustomerClosed(customer: customer)',
      '}',
    ].join('\n');
    const codesAt = (diagnostics: Diagnostic[], file: string): string[] =>
      diagnostics
        .filter((d) => d.location.file === file && d.code !== 'allium.field.unused')
        .map((d) => `${at(d)} ${d.code} ${d.message}`);

    it('a file that does not import another leaves its declarations unused, however many names they share', () => {
      const other = parseSpec(
        '-- allium: 3\nentity Account {\n    owner: Customer\n    cash: Money\n}\n',
        'b.allium',
      );
      const found = codesAt(checkSpecs([parseSpec(core, 'core.allium'), other]), 'core.allium');
      expect(found.filter((line) => line.includes('.unused'))).toEqual([
        "2:8 allium.entity.unused Entity 'Customer' is declared but not referenced elsewhere in this specification.",
        "6:7 allium.definition.unused Value 'Money' is declared but not referenced elsewhere.",
        "9:6 allium.definition.unused Value 'Tier' is declared but not referenced elsewhere.",
      ]);
    });

    it('an importer’s qualified and bare references use the imported declarations', () => {
      const importer = parseSpec(
        '-- allium: 3\nuse "./core.allium" as core\nentity Account {\n    owner: core/Customer\n    cash: Money\n}\n',
        'b.allium',
      );
      const found = codesAt(checkSpecs([parseSpec(core, 'core.allium'), importer]), 'core.allium');
      expect(found.filter((line) => line.includes('.unused'))).toEqual([
        "9:6 allium.definition.unused Value 'Tier' is declared but not referenced elsewhere.",
      ]);
    });

    it('a name not capitalised is used by an importer only in a type slot, as in its own file', () => {
      // The reference's answers for these pairs: `entity client` stays unused whatever the importer writes `client`
      // in (a binding and its reads, a field type, an expression, `lib.client`), except a variant's base or a
      // default's type.
      const lib = parseSpec('-- allium: 3\nentity client {\n    n: Integer\n}\n', 'lib.allium');
      const unusedIn = (body: string): string[] =>
        checkSpecs([lib, parseSpec(`-- allium: 3\nuse "./lib.allium" as lib\n${body}\n`, 'app.allium')])
          .filter((d) => d.location.file === 'lib.allium' && d.code === 'allium.entity.unused')
          .map(at);
      for (const body of [
        'surface S {\n    facing client: Other\n    provides: Req(client)\n}',
        'entity Box {\n    x: client\n}',
        'rule R {\n    when: Go(b)\n    ensures: Foo(v: client)\n}',
        'rule R {\n    when: Go(b)\n    ensures: lib.client.created(n: 1)\n}',
        'variant V : client { m: Integer }',
      ])
        expect(unusedIn(body), body).toEqual(['2:8']);
      expect(unusedIn('variant V : client')).toEqual([]);
      expect(unusedIn('default client d = { n: 1 }')).toEqual([]);
    });

    it('an importer’s qualified provides and alias/Entity.field reads count in the imported file', () => {
      const ticket = [
        '-- allium: 3',
        'entity Ticket {',
        '    title: String',
        '    priority: Integer',
        '}',
        'rule Escalate {',
        '    when: EscalateRequested(ticket)',
        '    ensures: Done(ticket: ticket)',
        '}',
      ].join('\n');
      const desk = [
        '-- allium: 3',
        'use "./core.allium" as core',
        'surface Desk {',
        '    context t: core/Ticket',
        '    exposes:',
        '        t.title',
        '    provides:',
        '        core/EscalateRequested(t) when core/Ticket.priority > 2',
        '}',
      ].join('\n');
      const alone = checkSpecs([parseSpec(ticket, 'core.allium')]).map((d) => `${at(d)} ${d.code}`);
      expect(alone).toEqual([
        '2:8 allium.entity.unused',
        '3:5 allium.field.unused',
        '4:5 allium.field.unused',
        '7:11 allium.rule.unreachableTrigger',
      ]);
      const together = checkSpecs([parseSpec(ticket, 'core.allium'), parseSpec(desk, 'desk.allium')]);
      expect(
        together.filter((d) => d.location.file === 'core.allium').map((d) => `${at(d)} ${d.code}`),
      ).toEqual(['3:5 allium.field.unused']);
    });

    it('use.ambiguousReference: a bare name two imported files declare (once, first site), a trigger both offer', () => {
      const offering = (extra: string): string =>
        `-- allium: 3\nentity Customer {\n    name: String\n}\n${extra}rule R {\n    when: Go(c)\n    ensures: Ping(c: c)\n}\nsurface S {\n    facing c: Customer\n    provides:\n        Go(c)\n}\n`;
      const importer = [
        '-- allium: 3',
        'use "./a.allium" as alpha',
        'use "./b.allium" as beta',
        'use "./a.allium" as aa',
        'entity Order {',
        '    buyer: Customer',
        '    other: Customer',
        '}',
        'rule Listen {',
        '    when: Ping(c) or Go(c)',
        '    ensures: Done(c: c)',
        '}',
      ].join('\n');
      const found = checkSpecs([
        parseSpec(importer, 'c.allium'),
        parseSpec(offering(''), 'a.allium'),
        parseSpec(offering('value Money {\n    amount: Decimal\n}\n'), 'b.allium'),
      ]).filter((d) => d.code === 'allium.use.ambiguousReference');
      expect(found.map((d) => `${d.location.file}:${at(d)} ${d.message}`)).toEqual([
        "c.allium:6:12 Unqualified reference 'Customer' is ambiguous: it is declared in imported modules 'aa' and 'beta'. Use a qualified name (e.g. 'aa/Customer').",
        "c.allium:10:11 Rule 'Listen' listens for trigger 'Ping', which is provided or emitted by imported modules 'aa' and 'beta'. Use a qualified name (e.g. 'aa/Ping').",
        "c.allium:10:22 Rule 'Listen' listens for trigger 'Go', which is provided or emitted by imported modules 'aa' and 'beta'. Use a qualified name (e.g. 'aa/Go').",
      ]);
    });

    it('a status an importer creates the entity with is assigned in the imported file', () => {
      const ticket =
        '-- allium: 3\nentity Ticket {\n    title: String\n    status: open | triaged | closed\n}\nrule Close {\n    when: CloseIt(ticket)\n    requires: ticket.status = triaged\n    ensures: ticket.status = closed\n}\n';
      const importer =
        '-- allium: 3\nuse "./core.allium" as core\nrule Open {\n    when: Report(title)\n    ensures:\n        if title = "x":\n            core/Ticket.created(title: title, status: open)\n        else:\n            core/Ticket.created(title: title, status: bogus)\n}\n';
      const statuses = (specs: ReturnType<typeof parseSpec>[]): string[] =>
        checkSpecs(specs)
          .filter((d) => d.location.file === 'core.allium' && d.code?.startsWith('allium.status.') === true)
          .map((d) => `${d.code} ${d.message.split("'")[1] ?? ''}`);
      expect(statuses([parseSpec(ticket, 'core.allium')])).toEqual([
        'allium.status.noExit open',
        'allium.status.unreachableValue open',
        'allium.status.unreachableValue triaged',
      ]);
      // `bogus` is no status of Ticket: ignored.
      expect(statuses([parseSpec(ticket, 'core.allium'), parseSpec(importer, 'imp.allium')])).toEqual([
        'allium.status.noExit open',
        'allium.status.unreachableValue triaged',
      ]);
    });

    it('a default of an imported type is checked against that type’s fields (top level)', () => {
      const ticket = '-- allium: 3\nentity Ticket {\n    title: String\n}\n';
      const importer =
        '-- allium: 3\nuse "./core.allium" as core\ndefault core/Ticket t = { title: "a", colour: "red" }\n';
      const found = checkSpecs([parseSpec(importer, 'd.allium'), parseSpec(ticket, 'core.allium')]).filter(
        (d) => d.code === 'allium.default.unknownField',
      );
      expect(found.map((d) => `${d.location.file}:${at(d)} ${d.message}`)).toEqual([
        "d.allium:3:39 Default sets field 'colour' which is not declared on 'core/Ticket'.",
      ]);
    });

    it('reference.unknownName for a name the imported file does not offer; triggers judged against it', () => {
      const importer = parseSpec(
        [
          '-- allium: 3',
          'use "./core.allium" as core',
          'entity Account {',
          '    owner: core/Customer',
          '    plan: core/Plan',
          '}',
          'rule A {',
          '    when: core/CustomerClosed(c)',
          '    ensures: Done(c: c)',
          '}',
          'rule B {',
          '    when: core/Vanished(c)',
          '    ensures: Done(c: c)',
          '}',
          'rule C {',
          '    when: CustomerClosed(c)',
          '    requires: c.status = core/active',
          '    ensures: Done(c: c)',
          '}',
          'rule D {',
          '    when: Tick()',
          '    ensures:',
          '        for c in core/Customers:',
          '            Done(c: c)',
          '}',
        ].join('\n'),
        'b.allium',
      );
      expect(codesAt(checkSpecs([importer, parseSpec(core, 'core.allium')]), 'b.allium')).toEqual([
        "3:8 allium.entity.unused Entity 'Account' is declared but not referenced elsewhere in this specification.",
        "5:11 allium.reference.unknownName Reference 'core/Plan' names 'Plan', which imported module 'core' does not define.",
        "12:11 allium.reference.unknownName Reference 'core/Vanished' names 'Vanished', which imported module 'core' does not define.",
        "12:11 allium.rule.unreachableTrigger Rule 'B' listens for trigger 'core/Vanished' but imported module 'core' does not provide or emit it.",
        "21:11 allium.rule.unreachableTrigger Rule 'D' listens for trigger 'Tick' but no local surface provides or rule emits it.",
      ]);
    });

    it('a variant based on `alias/Base`: the alias judged, the imported entity used (the reference’s answers)', () => {
      const importer = parseSpec(
        '-- allium: 3\nuse "./b.allium" as core\nvariant X : core/Base {\n    n: Integer\n}\nvariant Y : core/Nope\nvariant Z : zz/Base\nentity H {\n    x: X\n    y: Y\n    z: Z\n}\n',
        'a.allium',
      );
      const base = parseSpec('-- allium: 3\nentity Base {\n    kind: X | Y\n}\n', 'b.allium');
      expect(
        checkSpecs([importer, base])
          .filter((d) => d.code?.startsWith('allium.reference') || d.code === 'allium.entity.unused')
          .map((d) => `${d.location.file}:${at(d)} ${d.code ?? ''}`),
      ).toEqual([
        'a.allium:6:13 allium.reference.unknownName',
        'a.allium:7:13 allium.reference.undefinedImportedAlias',
        'a.allium:8:8 allium.entity.unused',
      ]);
    });

    it('a deferred path’s `alias/Name` or `X.Name`: the alias judged, the imported entity used (the reference’s answers)', () => {
      const importer = parseSpec(
        [
          '-- allium: 3',
          'use "./b.allium" as core',
          'deferred core/Base.settle "b.allium"',
          'deferred core.Other "b.allium"',
          'deferred core/Nope "b.allium"',
          'deferred MulMatCpu.VecDot    -- see: mul_mat_cpu.allium',
          'deferred zz/Base.x "z"',
          'deferred A.B.C "z"',
          'deferred Plain.field "z"',
          'deferred a.b.C "z"',
          'deferred Lonely "z"',
        ].join('\n'),
        'a.allium',
      );
      const base = parseSpec(
        '-- allium: 3\nentity Base {\n    n: Integer\n}\nentity Other {\n    n: Integer\n}\nentity Spare {\n    n: Integer\n}\n',
        'b.allium',
      );
      expect(
        checkSpecs([importer, base])
          .filter((d) => d.code?.startsWith('allium.reference') || d.code === 'allium.entity.unused')
          .map((d) => `${d.location.file}:${at(d)} ${d.message}`),
      ).toEqual([
        "a.allium:5:10 Reference 'core/Nope' names 'Nope', which imported module 'core' does not define.",
        "a.allium:6:10 Reference 'MulMatCpu/VecDot' uses unknown import alias 'MulMatCpu'.",
        "a.allium:7:10 Reference 'zz/Base' uses unknown import alias 'zz'.",
        "a.allium:8:10 Reference 'A/B' uses unknown import alias 'A'.",
        "b.allium:8:8 Entity 'Spare' is declared but not referenced elsewhere in this specification.",
      ]);
    });

    it('no qualified name right after a prefix operator: `exists core/X{…}` is `(exists core) / X{…}` (the reference)', () => {
      const importer = parseSpec(
        [
          '-- allium: 3',
          'use "./refd.allium" as ref',
          'rule R {',
          '    when: Go(t)',
          '    requires: exists ref/Trader{trader_id: t}',
          '    requires: ref/Other.x = 1',
          '    requires: not exists ref/Third',
          '    requires: not ref/Fourth.x',
          '    requires: t.n = -ref/Fifth.y',
          '    requires: not (ref/Sixth.x)',
          '    ensures: Done(t)',
          '}',
        ].join('\n'),
        'a.allium',
      );
      const refd = parseSpec('-- allium: 3\nentity Book {\n    id: String\n}\n', 'refd.allium');
      // The reference's answer for these two files: only the names not right after `exists`, `not` or `-`.
      expect(
        checkSpecs([importer, refd])
          .filter((d) => d.code === 'allium.reference.unknownName')
          .map((d) => `${d.location.file}:${at(d)}`),
      ).toEqual(['a.allium:6:15', 'a.allium:10:20']);
    });

    it('no qualified name as the right operand of `*`, `/` or `|`: `s/auth/User` is `(s / auth) / User` (the reference)', () => {
      const text = [
        '-- allium: 3',
        'use "./other.allium" as s',
        'entity T {',
        '    v: Integer',
        '}',
        'surface V {',
        '    facing u: s/auth/User',
        '    exposes: u.v',
        '}',
        'rule R {',
        '    when: t: T.created',
        '    requires: t.v = t.v * zz/X',
        '    requires: t.v = t.v | yy/X',
        '    requires: t.v = t.v + ww/X',
        '    ensures: t.v = 1',
        '}',
      ].join('\n');
      // The reference's answer: only `ww`, the operand of `+`, under which a `/` still binds.
      expect(
        checkSpecs([parseSpec(text, 'a.allium')])
          .filter((d) => d.code === 'allium.reference.undefinedImportedAlias')
          .map((d) => `${at(d)} ${d.message}`),
      ).toEqual(["14:27 Reference 'ww/X' uses unknown import alias 'ww'."]);
    });

    describe('transitions an importer witnesses on an imported entity (the reference’s answers for these sets)', () => {
      const CORE = [
        '-- allium: 3',
        '',
        'entity Ticket {',
        '    status: open | assigned | resolved | closed',
        '    deadline: Timestamp',
        '    transitions status {',
        '        open -> assigned',
        '        assigned -> resolved',
        '        resolved -> closed',
        '        open -> closed',
        '        terminal: closed',
        '    }',
        '}',
        '',
        'entity Shipment {',
        '    status: packed | sent | arrived',
        '    transitions status {',
        '        packed -> sent',
        '        sent -> arrived',
        '        terminal: arrived',
        '    }',
        '}',
        '',
        'surface Desk {',
        '    facing agent: Ticket',
        '    provides: Assign(ticket: Ticket)',
        '}',
        '',
        'rule Pack {',
        '    when: s: Shipment.status becomes packed',
        '    ensures: Packed(s)',
        '}',
        '',
        'rule Open {',
        '    when: Raise(x)',
        '    ensures: Ticket.created(status: open)',
        '}',
      ].join('\n');
      const A = [
        '-- allium: 3',
        'use \"./core.allium\" as core',
        '',
        'rule TakeIt {',
        '    when: core/Assign(t)',
        '    requires: t.status = open',
        '    ensures: t.status = assigned',
        '}',
      ].join('\n');
      const B = [
        '-- allium: 3',
        'use \"./core.allium\" as core',
        '',
        'surface Ops {',
        '    context job: core/Ticket where status = assigned',
        '    provides: Resolve(job)',
        '    provides: CloseIt(ticket: core/Ticket?)',
        '}',
        '',
        'rule ResolveIt {',
        '    when: Resolve(job)',
        '    requires: job.status = assigned',
        '    ensures: job.status = resolved',
        '}',
        '',
        'rule CloseItRule {',
        '    when: CloseIt(t)',
        '    requires: t.status = resolved',
        '    ensures: t.status = closed',
        '}',
      ].join('\n');
      const C = [
        '-- allium: 3',
        'use \"./core.allium\" as core',
        '',
        'rule Send {',
        '    when: core/Packed(s)',
        '    requires: s.status = packed',
        '    ensures: s.status = sent',
        '}',
        '',
        'rule Expire {',
        '    when: t: core/Ticket.deadline <= now',
        '    requires: t.status = open',
        '    ensures: t.status = closed',
        '}',
      ].join('\n');
      const D = [
        '-- allium: 3',
        'use \"./core.allium\" as core',
        '',
        'rule Arrive {',
        '    when: s: core/Shipment.status becomes sent',
        '    ensures: s.status = arrived',
        '    ensures: if s.status = sent:',
        '        s.status = arrived',
        '}',
        '',
        'rule Odd {',
        '    when: s: core/Shipment.status becomes gone',
        '    ensures: s.status = arrived',
        '}',
      ].join('\n');
      const statusLines = (...files: [string, string][]): string[] =>
        checkSpecs(files.map(([name, text]) => parseSpec(text, `${name}.allium`)))
          .filter((d) => d.location.file === 'core.allium' && d.code?.startsWith('allium.status.') === true)
          .map((d) => `${at(d)} ${d.code?.slice('allium.status.'.length) ?? ''}`);
      const ALONE = [
        '4:13 noExit',
        '4:20 noExit',
        '4:20 unreachableValue',
        '4:31 noExit',
        '4:31 unreachableValue',
        '4:42 unreachableValue',
        '16:13 noExit',
        '16:13 unreachableValue',
        '16:22 noExit',
        '16:22 unreachableValue',
        '16:29 unreachableValue',
      ];
      /** The lines of `core` alone that importing it from `importer` takes away (it adds none). */
      const settledBy = (importer: [string, string]): string[] => {
        const together = statusLines(importer, ['core', CORE]);
        expect(together.filter((line) => !ALONE.includes(line))).toEqual([]);
        return ALONE.filter((line) => !together.includes(line));
      };
      it('core alone', () => {
        expect(statusLines(['core', CORE])).toEqual(ALONE);
      });
      it("typed by the imported surface's `provides: Assign(ticket: Ticket)`, subscribed as `core/Assign(t)`", () => {
        expect(settledBy(['a', A])).toEqual(['4:13 noExit', '4:20 unreachableValue']);
      });
      it("typed by the importer's own surface: `context job: core/Ticket where …`, `CloseIt(ticket: core/Ticket?)`", () => {
        expect(settledBy(['b', B])).toEqual([
          '4:20 noExit',
          '4:31 noExit',
          '4:31 unreachableValue',
          '4:42 unreachableValue',
        ]);
      });
      it('typed by an event the imported file emits (`Packed(s)`) and by a comparison trigger (`t: core/Ticket.deadline <= now`)', () => {
        expect(settledBy(['c', C])).toEqual([
          '4:13 noExit',
          '4:42 unreachableValue',
          '16:13 noExit',
          '16:22 unreachableValue',
        ]);
      });
      it("a `becomes` trigger's state is the `from`; a state the entity does not declare types nothing", () => {
        expect(settledBy(['d', D])).toEqual(['16:22 noExit', '16:29 unreachableValue']);
      });
    });
  });

  it('checks a default’s object literal against its type’s fields, nested literals too (the reference’s answers)', () => {
    const text = [
      '-- allium: 3',
      'value Address {',
      '    street: String',
      '}',
      'entity Plan {',
      '    tags: Set<String>',
      '    items: List<String>?',
      '    home: Address?',
      '    can_edit(user): Boolean',
      '}',
      'default Plan basic = { tags: [], items: [], colour: "red", can_edit: true, home: { zip: "1" } }',
      'default ext/Plan other = { anything: 1 }',
    ].join('\n');
    const found = checkSpecs([parseSpec(text, 's.allium')])
      .filter((d) => d.severity === 'error')
      .map((d) => `${at(d)} ${d.code} ${d.message}`);
    expect(found).toEqual([
      "11:30 allium.list.emptyListNoElementType Empty list literal has no inferable element type: target field 'tags' is not a List<T>.",
      "11:45 allium.default.unknownField Default sets field 'colour' which is not declared on 'Plan'.",
      "11:60 allium.default.unknownField Default sets field 'can_edit' which is not declared on 'Plan'.",
      "11:84 allium.default.unknownField Default sets field 'zip' which is not declared on 'Address'.",
      // Another module's type is not checked here, but its alias must be declared.
      "12:9 allium.reference.undefinedImportedAlias Reference 'ext/Plan' uses unknown import alias 'ext'.",
    ]);
  });

  it('reads an entity declared twice as one status machine: graph and field types from either (the reference’s answer)', () => {
    // The first declaration has the graph and a field typed as an entity, the second the status values.
    const text = [
      '-- allium: 3',
      'entity Customer {',
      '    status: active | closed',
      '}',
      'entity Order {',
      '    customer: Customer',
      '    transitions status {',
      '        pending -> shipped',
      '        terminal: shipped',
      '    }',
      '}',
      'entity Order {',
      '    status: pending | shipped | lost',
      '}',
      'rule Lose {',
      '    when: order: Order.created',
      '    requires: order.status = pending',
      '    ensures: order.status = lost',
      '    ensures: order.customer.status = closed',
      '}',
    ].join('\n');
    const found = checkSpecs([parseSpec(text, 's.allium')])
      .filter((d) => d.code?.startsWith('allium.status.'))
      .map((d) => `${at(d)} ${d.code?.slice('allium.status.'.length)}`);
    expect(found).toEqual([
      '3:13 noExit',
      '3:13 unreachableValue',
      // The edge pending → lost is judged against the first declaration's graph …
      '13:13 undeclaredTransition',
      '13:13 unreachableValue',
      // … `shipped` is terminal by it (no noExit), and `closed` is reached through its `customer` field.
      '13:23 unreachableValue',
      '13:33 noExit',
    ]);
  });

  it('reads a qualified status value (`core/Active`) as no status value, as the reference does', () => {
    // To the reference `core/Active` is a qualified name, not an identifier: the assignment sets no value of
    // `Order`'s status, so the entity is still judged (without the fix, an unknown value assigned skipped it).
    const text = [
      '-- allium: 3',
      'rule Transition {',
      '  when: order: Order',
      '  ensures: order.status = core/Active',
      '}',
      'entity Order { status: pending | cancelled }',
      'rule Cancel {',
      '  when: Cancel(order)',
      '  ensures: order.status = cancelled',
      '}',
    ].join('\n');
    expect(
      checkSpecs([parseSpec(text, 's.allium')])
        .filter((d) => d.code?.startsWith('allium.status.'))
        .map((d) => `${at(d)} ${d.code}`),
    ).toEqual(['6:24 allium.status.noExit', '6:24 allium.status.unreachableValue']);
  });

  it('applies allium-ignore on the same and the next line only', () => {
    const text = '-- allium-ignore allium.entity.unused\nentity A { x: String }\n\nentity B { y: String }\n';
    expect(
      run(text)
        .filter((d) => d.code === 'allium.entity.unused')
        .map((d) => d.message),
    ).toEqual([expect.stringContaining("'B'")]);
    const diagnostic: Diagnostic = {
      code: null,
      severity: 'error',
      message: 'x',
      location: { file: 'f', line: 3, col: 1 },
    };
    expect(
      applySuppressions([diagnostic], [{ codes: ['all'], location: { file: 'f', line: 2, col: 1 } }]),
    ).toEqual([]);
    expect(
      applySuppressions([diagnostic], [{ codes: ['allium.x'], location: { file: 'f', line: 2, col: 1 } }]),
    ).toEqual([diagnostic]);
  });

  it('sorts by file, line and column and formats one line per diagnostic', () => {
    const diagnostics = checkSpecs([
      parseSpec('entity A {\n  x: Missing\n}\n', 'b.allium'),
      parseSpec('value V { a: String }\n', 'a.allium'),
    ]);
    expect(diagnostics.map((d) => d.location.file)).toEqual([
      'a.allium',
      'a.allium',
      'b.allium',
      'b.allium',
      'b.allium',
      'b.allium',
    ]);
    expect(formatDiagnostic(diagnostics[3] as Diagnostic)).toBe(
      "b.allium:1:8 warning allium.entity.unused Entity 'A' is declared but not referenced elsewhere in this specification.",
    );
  });
});

describe('inReferenceOrder', () => {
  /** What it must equal: a stable sort by line, column, whole-value span, code and message. */
  const WHOLE = new Set(['allium.sum.v1InlineEnum', 'allium.sum.invalidDiscriminator']);
  const byComparison = (list: readonly Diagnostic[]): Diagnostic[] =>
    [...list].sort(
      (a, b) =>
        a.location.line - b.location.line ||
        a.location.col - b.location.col ||
        Number(WHOLE.has(a.code ?? '')) - Number(WHOLE.has(b.code ?? '')) ||
        ((a.code ?? '') < (b.code ?? '') ? -1 : (a.code ?? '') > (b.code ?? '') ? 1 : 0) ||
        (a.message < b.message ? -1 : a.message > b.message ? 1 : 0),
    );
  const diagnostic = (line: number, col: number, code: string | null, message: string): Diagnostic => ({
    code,
    severity: 'warning',
    message,
    location: { file: 'f.allium', line, col },
  });
  const arbitrary = (lines: fc.Arbitrary<number>) =>
    fc.array(
      fc
        .record({
          line: lines,
          // Small columns and columns past 2^21 (once the cap of a packed sort key).
          col: fc.oneof(fc.integer({ min: 1, max: 4 }), fc.integer({ min: 2 ** 21 - 2, max: 2 ** 21 + 2 })),
          code: fc.constantFrom(null, 'allium.a', 'allium.b', 'allium.sum.v1InlineEnum'),
          message: fc.constantFrom('x', 'y'),
        })
        .map(({ line, col, code, message }) => diagnostic(line, col, code, message)),
      { maxLength: 60 },
    );

  it('orders as the full comparison does, ties (equal in every part) kept in their given order', () => {
    fc.assert(
      fc.property(arbitrary(fc.integer({ min: 1, max: 5 })), (list) => {
        const sorted = inReferenceOrder(list);
        expect(sorted).toEqual(byComparison(list));
        // The same objects: equal ones stay in their given order.
        sorted.forEach((d, i) => expect(d).toBe(byComparison(list)[i]));
      }),
    );
  });

  it('orders long runs on one line (sorted, not inserted) the same way', () => {
    fc.assert(
      fc.property(
        fc.array(arbitrary(fc.constant(7)), { minLength: 1, maxLength: 4 }).map((lists) => lists.flat()),
        (list) => {
          const sorted = inReferenceOrder(list);
          sorted.forEach((d, i) => expect(d).toBe(byComparison(list)[i]));
        },
      ),
    );
  });

  it('orders lines too sparse for its counting sort by comparison, the same way', () => {
    fc.assert(
      fc.property(arbitrary(fc.constantFrom(1, 2 ** 20, 2 ** 31, 2 ** 32 - 1)), (list) => {
        expect(inReferenceOrder(list)).toEqual(byComparison(list));
      }),
    );
  });
});

describe('normalisePath', () => {
  it('collapses empty, `.` and `..` segments and leaves every other path as it is', () => {
    const cases: [string, string][] = [
      ['', ''],
      ['/', '/'],
      ['.', ''],
      ['..', '..'],
      ['a/', 'a'],
      ['/a//b', '/a/b'],
      ['./a', 'a'],
      ['a/./b', 'a/b'],
      ['a/.', 'a'],
      ['a/..', ''],
      ['../a', '../a'],
      ['../../a/../b', '../../b'],
      ['/..', '/..'],
      ['a/b/../../..', '..'],
      ['/tmp/specs/f1.allium', '/tmp/specs/f1.allium'],
      ['specs/a.allium', 'specs/a.allium'],
      ['.allium', '.allium'],
      ['a/.hidden/..b/c...', 'a/.hidden/..b/c...'],
      ['/a/b/', '/a/b'],
    ];
    for (const [path, normal] of cases) {
      expect(normalisePath(path), path).toBe(normal);
      expect(normalisePath(normal), normal).toBe(normal);
    }
  });

  it('gives a path the same answer as the segment by segment reading, whatever it is made of', () => {
    const bySegment = (path: string): string => {
      const parts: string[] = [];
      for (const part of path.split('/')) {
        if (part === '' || part === '.') continue;
        if (part === '..' && parts.length > 0 && parts.at(-1) !== '..') parts.pop();
        else parts.push(part);
      }
      return `${path.startsWith('/') ? '/' : ''}${parts.join('/')}`;
    };
    const piece = fc.constantFrom('/', '.', '..', 'a', '.a', 'a.', '..a', 'x.allium', '');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
        const path = pieces.join('');
        expect(normalisePath(path)).toBe(bySegment(path));
      }),
      { numRuns: 2000 },
    );
  });
});
