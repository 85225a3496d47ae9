import type { BlockItem, Expr } from './ast.js';
import type { Diagnostic } from './diagnostic.js';
import { clausesOf, type SpecIndex } from './spec-index.js';
import { createdEntity, isPascal } from './walk.js';

const message = (name: string): string => `Type reference '${name}' is not declared locally or imported.`;

/**
 * `allium.type.undefinedReference`: a field of an entity, value or variant whose type names something that is
 * neither declared, built in, nor imported. Relationship (`with`) and derived fields are not type positions.
 */
export function checkTypeReferences(index: SpecIndex): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  const file = index.spec.file;
  for (const declaration of index.spec.declarations) {
    const isTyped =
      declaration.kind === 'variant' ||
      (declaration.kind === 'block' && ['entity', 'external entity', 'value'].includes(declaration.block));
    if (!isTyped || !('items' in declaration)) continue;
    for (const item of declaration.items) {
      if (item.kind !== 'field' || item.params !== undefined || item.path !== undefined) continue;
      for (const name of undeclaredTypes(item.value, index.typeNames)) {
        diagnostics.push({
          code: 'allium.type.undefinedReference',
          severity: 'error',
          message: message(name.name ?? ''),
          location: { file, line: name.line, col: name.col },
        });
      }
    }
  }
  return diagnostics;
}

function undeclaredTypes(type: Expr, declared: ReadonlySet<string>): Expr[] {
  switch (type.kind) {
    case 'ident':
      return type.name !== undefined &&
        isPascal(type.name) &&
        !type.name.includes('/') &&
        !declared.has(type.name)
        ? [type]
        : [];
    case 'generic':
    case 'optional':
      return type.kids.flatMap((kid) => undeclaredTypes(kid, declared));
    default:
      return [];
  }
}

/**
 * `allium.rule.undefinedTypeReference`: `E.created(…)` in a rule's `ensures` where `E` is not declared. Like the
 * reference, it looks at the clause value and the items of a block value, not inside expression-level `if`/`for`.
 */
export function checkCreatedTypes(index: SpecIndex): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  for (const rule of index.rules) {
    for (const clause of clausesOf(rule.items, 'ensures')) {
      for (const expr of topLevelEnsures(clause.value)) {
        const entity = createdEntity(expr);
        const callee = expr.kids[0]?.kids[0];
        if (
          entity === undefined ||
          callee === undefined ||
          index.typeNames.has(entity) ||
          entity.includes('/')
        )
          continue;
        diagnostics.push({
          code: 'allium.rule.undefinedTypeReference',
          severity: 'error',
          message: message(entity),
          location: { file: index.spec.file, line: callee.line, col: callee.col },
        });
      }
    }
  }
  return diagnostics;
}

function topLevelEnsures(value: Expr): readonly Expr[] {
  return value.kind === 'block' ? value.kids : [value];
}

/** True when an item list (or its nested `for`/`if` bodies) holds this clause. */
export function hasClause(items: readonly BlockItem[], keyword: string): boolean {
  return clausesOf(items, keyword).length > 0;
}
