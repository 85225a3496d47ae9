import { forEachKid, type BlockItem, type BlockKind, type Expr } from './ast.js';
import type { Diagnostic } from './diagnostic.js';
import { clausesOf, type SpecIndex } from './spec-index.js';
import { isPlainField, judgedFields } from './spec-facts.js';
import { isDotMember, isPascal, locationOf, startsUpper } from './walk.js';

const message = (name: string): string => `Type reference '${name}' is not declared locally or imported.`;

/**
 * `allium.type.undefinedReference`: a field of an entity or value whose type (or one of its `A | B` alternatives)
 * names something that is neither declared, built in, nor imported. Relationship (`with`) and derived fields are
 * not type positions.
 */
export function checkTypeReferences(index: SpecIndex): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  for (let d = 0; d < index.spec.declarations.length; d += 1) {
    const fields = judgedFields(index.spec.declarations[d]!, TYPED_BLOCKS);
    if (fields === undefined) continue;
    for (let i = 0; i < fields.items.length; i += 1) {
      const item = fields.items[i]!;
      if (!isPlainField(item)) continue;
      findUndeclaredTypes(item.value, index.typeNames, (name) => {
        diagnostics.push({
          code: 'allium.type.undefinedReference',
          severity: 'error',
          message: message(name.name ?? ''),
          location: locationOf(index.spec, name),
        });
      });
    }
  }
  return diagnostics;
}

const TYPED_BLOCKS: ReadonlySet<BlockKind> = new Set(['entity', 'external entity', 'value']);

function findUndeclaredTypes(type: Expr, declared: ReadonlySet<string>, found: (name: Expr) => void): void {
  switch (type.kind) {
    case 'ident':
      if (
        type.name !== undefined &&
        isPascal(type.name) &&
        !type.name.includes('/') &&
        !declared.has(type.name)
      )
        found(type);
      return;
    case 'binary':
      if (type.op === '|') forEachKid(type, (kid) => findUndeclaredTypes(kid, declared, found));
      return;
    case 'generic':
    case 'optional':
      forEachKid(type, (kid) => findUndeclaredTypes(kid, declared, found));
      return;
    default:
      return;
  }
}

/**
 * `allium.rule.undefinedTypeReference`: an undeclared capitalised entity in a rule's `when`, `requires` or
 * `ensures` clause, where the reference looks: `E.f` and `x: E.f …` triggers, `E.f becomes v`, calls on a member
 * (`E.created(…)`, `E.lookup(…)`), through blocks and `and`/`or`, not inside comparisons or `if`/`for` values.
 */
export function checkCreatedTypes(index: SpecIndex): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  const report = (object: Expr | undefined): void => {
    const name = object?.kind === 'ident' ? object.name : undefined;
    if (object === undefined || name === undefined || !startsUpper(name) || index.typeNames.has(name)) return;
    // A qualified name (`Core/Order`, whatever the alias's case) is another module's: the alias checks judge it.
    if (name.includes('/')) return;
    diagnostics.push({
      code: 'allium.rule.undefinedTypeReference',
      severity: 'error',
      message: message(name),
      location: locationOf(index.spec, object),
    });
  };
  const visit = (expr: Expr): void => {
    switch (expr.kind) {
      case 'binding':
        if (expr.a !== undefined) visit(expr.a);
        return;
      case 'binary':
        if (expr.op === 'becomes' || expr.op === 'transitions_to') {
          const subject = expr.a;
          if (isDotMember(subject)) report(subject.a);
        } else if (expr.op === 'and' || expr.op === 'or' || expr.op === 'implies') forEachKid(expr, visit);
        return;
      case 'call':
        if (isDotMember(expr.a)) report(expr.a.a);
        return;
      case 'member':
        if (isDotMember(expr)) report(expr.a);
        return;
      case 'block':
        forEachKid(expr, visit);
        return;
      default:
        return;
    }
  };
  const visitAll = (clauses: readonly { readonly value: Expr }[]): void => {
    for (let c = 0; c < clauses.length; c += 1) visit(clauses[c]!.value);
  };
  for (let r = 0; r < index.rules.length; r += 1) {
    const rule = index.rules[r]!;
    visitAll(clausesOf(rule.items, 'when'));
    visitAll(clausesOf(rule.items, 'requires'));
    visitAll(clausesOf(rule.items, 'ensures'));
  }
  return diagnostics;
}

/** True when an item list (or its nested `for`/`if` bodies) holds this clause. */
export function hasClause(items: readonly BlockItem[], keyword: string): boolean {
  return clausesOf(items, keyword).length > 0;
}
