import {
  ARITHMETIC_OPS,
  COMPARISON_OPS,
  forEachKid,
  kidAt,
  kidCount,
  kidsOf,
  LOGICAL_OPS,
  type BlockItem,
  type Expr,
  type Ident,
} from './ast.js';
import { type Diagnostic, overMemberAccess, type SourceLocation } from './diagnostic.js';
import {
  aliasList,
  ambiguousImports,
  collectionHeads,
  declaredNames,
  offeredNames,
  qualifiedDeclarationTypes,
  type Imports,
} from './imports.js';
import { collectPipe } from './parse-block-items.js';
import { perSpec, type SpecIndex } from './spec-index.js';
import { specFacts } from './spec-facts.js';
import { forEachItemExpr, locationOf, memberNameLocation, walkExpr, walkItems } from './walk.js';

const capitalised = (name: string): boolean => /^[A-Z]/.test(name);

/**
 * Sum-type discriminators: an entity field `kind: A | B` whose pipe names include a capitalised one.
 * - `allium.sum.invalidDiscriminator`: capitalised names mixed with others (`Memo | String` counts as variants
 *   only when every name is capitalised; `Memo | draft` is invalid);
 * - `allium.sum.v1InlineEnum`: only capitalised names and no `variant X : Entity` declared at all;
 * - `allium.sum.discriminatorUnknownVariant`: each name with no matching `variant Name : Entity`.
 */
export function checkDiscriminators(index: SpecIndex): Diagnostic[] {
  const variantsByBase = new Map<string, Set<string>>();
  for (let d = 0; d < index.spec.declarations.length; d += 1) {
    const declaration = index.spec.declarations[d]!;
    if (declaration.kind !== 'variant' || declaration.base === undefined) continue;
    const set = variantsByBase.get(declaration.base.name) ?? new Set<string>();
    set.add(declaration.name.name);
    variantsByBase.set(declaration.base.name, set);
  }
  const diagnostics: Diagnostic[] = [];
  for (let e = 0; e < index.entities.length; e += 1) {
    const entity = index.entities[e]!;
    if (entity.block !== 'entity') continue;
    const name = entity.name.name;
    for (let i = 0; i < entity.items.length; i += 1) {
      const item = entity.items[i]!;
      if (item.kind !== 'field' || item.when !== undefined || item.params || item.path) continue;
      if (item.value.kind !== 'binary' || item.value.op !== '|') continue; // one name is no discriminator
      const idents: Expr[] = [];
      collectPipe(item.value, (leaf) => {
        if (leaf.kind === 'ident' && leaf.name !== undefined) idents.push(leaf);
      });
      if (idents.length < 2 || !idents.some((id) => capitalised(id.name ?? ''))) continue;
      const at = locationOf(index.spec, item.value);
      if (!idents.every((id) => capitalised(id.name ?? ''))) {
        diagnostics.push({
          code: 'allium.sum.invalidDiscriminator',
          severity: 'error',
          message: `Entity '${name}' discriminator '${item.name.name}' must use only capitalised variant names.`,
          location: at,
        });
        continue;
      }
      const declared = variantsByBase.get(name) ?? new Set<string>();
      if (declared.size === 0) {
        diagnostics.push({
          code: 'allium.sum.v1InlineEnum',
          severity: 'error',
          message:
            `Entity '${name}' field '${item.name.name}' uses capitalised pipe values with no variant declarations. ` +
            `In v3, capitalised values are variant references requiring 'variant X : ${name}' declarations. ` +
            `Use lowercase values for a plain enum.`,
          location: at,
        });
        continue;
      }
      for (const id of idents) {
        if (declared.has(id.name ?? '')) continue;
        diagnostics.push({
          code: 'allium.sum.discriminatorUnknownVariant',
          severity: 'error',
          message: `Entity '${name}' discriminator references '${id.name ?? ''}' without matching 'variant ${id.name ?? ''} : ${name}'.`,
          location: locationOf(index.spec, id),
        });
      }
    }
  }
  return diagnostics;
}

/** Expression kinds the reference looks through for `config.x` (not collections, `where`, `in` or bindings). */
const CONFIG_BINARY = new Set([...ARITHMETIC_OPS, ...COMPARISON_OPS, ...LOGICAL_OPS, '|', '??']);

/**
 * `allium.config.undefinedReference` (warning): `config.name` where no `config { … }` block of the file declares
 * `name`. Looked for in every block except `config` and in top-level invariants.
 */
export function checkConfigReferences(index: SpecIndex): Diagnostic[] {
  const declared = new Set<string>();
  for (let d = 0; d < index.spec.declarations.length; d += 1) {
    const declaration = index.spec.declarations[d]!;
    if (declaration.kind !== 'block' || declaration.block !== 'config') continue;
    for (const item of declaration.items)
      if (item.kind === 'field' && item.when === undefined && !item.params && !item.path)
        declared.add(item.name.name);
  }
  // The walk below finds a subset of the file's `config.x` accesses: with none undeclared there is nothing to find.
  if (specFacts(index).configRefs.every((ref) => declared.has(ref.name ?? ''))) return [];
  const diagnostics: Diagnostic[] = [];
  const visit = (expr: Expr): void => {
    switch (expr.kind) {
      case 'member': {
        const object = expr.a;
        if (object?.kind === 'ident' && object.name === 'config' && !declared.has(expr.name ?? '')) {
          diagnostics.push({
            code: 'allium.config.undefinedReference',
            severity: 'warning',
            message: `Config reference 'config.${expr.name ?? ''}' is not declared in any config block.`,
            location: memberNameLocation(index.spec, expr),
          });
          return;
        }
        if (object !== undefined) visit(object);
        return;
      }
      case 'binary':
        if (CONFIG_BINARY.has(expr.op ?? '')) forEachKid(expr, visit);
        return;
      case 'unary':
        if (expr.op === 'not' || expr.op === 'exists' || expr.op === 'not exists') forEachKid(expr, visit);
        return;
      case 'arg':
        if (expr.a !== undefined) visit(expr.a);
        return;
      case 'call':
      case 'block':
      case 'if':
      case 'for':
      case 'let':
      case 'lambda':
        forEachKid(expr, visit);
        return;
      default:
        return;
    }
  };
  for (let d = 0; d < index.spec.declarations.length; d += 1) {
    const declaration = index.spec.declarations[d]!;
    if (declaration.kind === 'invariant') visit(declaration.body);
    if (declaration.kind !== 'block' || declaration.block === 'config') continue;
    walkItems(declaration.items, (item) => {
      if (item.kind === 'invariant' || (item.kind === 'field' && item.path !== undefined)) return;
      forEachItemExpr(item, visit);
    });
  }
  return diagnostics;
}

/**
 * Qualified references: `alias/Name`, a member access with a capitalised member on a plain name (`shared.Name`,
 * which the reference reads as an imported type), a `default alias/Type` and a `variant V : alias/Base`.
 * - `allium.reference.undefinedImportedAlias` (error): the qualifier is not a `use … as alias` of the file;
 * - `allium.reference.unknownName` (warning): the alias names a file of the check set that does not offer the name
 *   (see `offeredNames`); a name in a collection's place is left alone (an entity's plural, which no file declares).
 */
export function checkImportedAliases(index: SpecIndex, imports: Imports): Diagnostic[] {
  const aliases = new Set<string>();
  for (let d = 0; d < index.spec.declarations.length; d += 1) {
    const declaration = index.spec.declarations[d]!;
    if (declaration.kind === 'use' && declaration.alias !== undefined) aliases.add(declaration.alias.name);
  }
  const diagnostics: Diagnostic[] = [];
  const heads = imports.size === 0 ? undefined : collectionHeads(index);
  // `member`: read from a member access `qualifier.name`, whose whole span the diagnostic covers.
  const report = (
    qualifier: string,
    name: string,
    location: SourceLocation,
    ref?: Expr,
    member = false,
  ): void => {
    const push = (diagnostic: Diagnostic): void => {
      diagnostics.push(member ? overMemberAccess(diagnostic) : diagnostic);
    };
    if (!aliases.has(qualifier)) {
      push({
        code: 'allium.reference.undefinedImportedAlias',
        severity: 'error',
        message: `Reference '${qualifier}/${name}' uses unknown import alias '${qualifier}'.`,
        location,
      });
      return;
    }
    const target = imports.get(qualifier);
    if (target === undefined || offeredNames(target).has(name)) return;
    if (ref !== undefined && heads?.has(ref) === true) return;
    push({
      code: 'allium.reference.unknownName',
      severity: 'warning',
      message: `Reference '${qualifier}/${name}' names '${name}', which imported module '${qualifier}' does not define.`,
      location,
    });
  };
  for (const type of qualifiedDeclarationTypes(index)) {
    const slash = type.name.indexOf('/');
    report(
      type.name.slice(0, slash),
      type.name.slice(slash + 1),
      type.location,
      undefined,
      type.member === true,
    );
  }
  for (const ref of specFacts(index).importedRefs) {
    const object = ref.a;
    if (ref.kind === 'member' && object !== undefined)
      report(object.name ?? '', ref.name ?? '', locationOf(index.spec, object), undefined, true);
    else if (ref.name !== undefined) {
      const slash = ref.name.indexOf('/');
      report(ref.name.slice(0, slash), ref.name.slice(slash + 1), locationOf(index.spec, ref), ref);
    }
  }
  return diagnostics;
}

/** `allium.surface.relatedUndefined` (error): a surface's `related:` entry naming no surface of the file. */
export function checkRelatedSurfaces(index: SpecIndex): Diagnostic[] {
  const surfaces = new Set(index.surfaces.map((surface) => surface.name.name));
  const diagnostics: Diagnostic[] = [];
  // A qualified `alias/Name` is another module's surface: the reference does not look for it here.
  const plain = (expr: Expr | undefined): expr is Expr =>
    expr?.kind === 'ident' && expr.name?.includes('/') !== true;
  const leading = (expr: Expr | undefined): Expr | undefined => {
    let current = expr;
    while (current?.kind === 'member') current = current.a;
    return plain(current) ? current : undefined;
  };
  const names = (expr: Expr): Expr[] => {
    if (expr.kind === 'ident') return plain(expr) ? [expr] : [];
    if (expr.kind === 'call') {
      const found = leading(expr.a);
      return found === undefined ? [] : [found];
    }
    if (expr.kind === 'binary' && expr.op === 'when') return expr.a === undefined ? [] : names(expr.a);
    if (expr.kind === 'block') return kidsOf(expr).flatMap(names);
    return [];
  };
  for (const surface of index.surfaces) {
    for (const item of surface.items) {
      if (item.kind !== 'clause' || item.keyword !== 'related') continue;
      for (const name of names(item.value)) {
        if (surfaces.has(name.name ?? '')) continue;
        diagnostics.push({
          code: 'allium.surface.relatedUndefined',
          severity: 'error',
          message: `Surface '${surface.name.name}' references unknown related surface '${name.name ?? ''}'.`,
          location: locationOf(index.spec, name),
        });
      }
    }
  }
  return diagnostics;
}

/** The literal kind of a list element when it is knowable without a type system. */
function literalKind(expr: Expr): string | undefined {
  switch (expr.kind) {
    case 'string':
      return 'string';
    case 'number':
      return 'number';
    case 'bool':
      return 'boolean';
    case 'duration':
      return 'duration';
    case 'backtick':
      return 'backtick literal';
    default:
      return undefined;
  }
}

/** `allium.list.mixedElementTypes` (error): a list literal whose literal elements have different kinds. */
export function checkListLiterals(index: SpecIndex): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  for (const list of specFacts(index).lists) {
    let first: string | undefined;
    for (const element of kidsOf(list)) {
      const kind = literalKind(element);
      if (kind === undefined) continue;
      if (first === undefined) first = kind;
      else if (first !== kind) {
        diagnostics.push({
          code: 'allium.list.mixedElementTypes',
          severity: 'error',
          message: `List literal has elements of differing types ('${first}' and '${kind}'); all elements of a list must share a type.`,
          location: locationOf(index.spec, list),
        });
        break;
      }
    }
  }
  return diagnostics;
}

/**
 * The defaults' object literals against the fields their type declares (entities, external entities and values of
 * this file; a later declaration of a name wins, as a later field does), nested literals against the nested field's
 * own type:
 * - `allium.default.unknownField` (error): a field the type does not declare, at the field's name;
 * - `allium.list.emptyListNoElementType` (error): `[]` for a field that is not a `List<T>` (nothing to infer its
 *   element type from), at the `[`.
 * A qualified `default alias/Type` is checked, top-level fields only, against the type of the file the alias names
 * when that file is in the check set (else left alone, as is a literal for a type declared nowhere here).
 */
export function checkDefaultSchemas(index: SpecIndex, imports: Imports): Diagnostic[] {
  const schemas = typeSchemas(index);
  const diagnostics: Diagnostic[] = [];
  const validate = (literal: Expr, typeName: string): void => {
    const schema = schemas.get(typeName);
    if (schema === undefined) return;
    for (let k = 0; k < kidCount(literal); k += 1) {
      const field = kidAt(literal, k)!;
      const value = field.a;
      if (field.kind !== 'arg' || field.name === undefined || value === undefined) continue;
      const fieldType = schema.get(field.name);
      if (fieldType === undefined) {
        diagnostics.push({
          code: 'allium.default.unknownField',
          severity: 'error',
          message: `Default sets field '${field.name}' which is not declared on '${typeName}'.`,
          location: locationOf(index.spec, field),
        });
        continue;
      }
      if (value.kind === 'list' && kidCount(value) === 0 && !isListType(fieldType))
        diagnostics.push({
          code: 'allium.list.emptyListNoElementType',
          severity: 'error',
          message: `Empty list literal has no inferable element type: target field '${field.name}' is not a List<T>.`,
          location: locationOf(index.spec, value),
        });
      const nestedType = value.kind === 'object' ? baseTypeName(fieldType) : undefined;
      if (nestedType !== undefined) validate(value, nestedType);
    }
  };
  for (let d = 0; d < index.spec.declarations.length; d += 1) {
    const declaration = index.spec.declarations[d]!;
    if (
      declaration.kind !== 'default' ||
      declaration.value.kind !== 'object' ||
      declaration.type === undefined
    )
      continue;
    const type = declaration.type.name;
    const slash = type.indexOf('/');
    if (slash === -1) {
      validate(declaration.value, type);
      continue;
    }
    // `default alias/Type`: only the top-level field names, against the imported file's type, when in the check set.
    const target = imports.get(type.slice(0, slash));
    const schema = target === undefined ? undefined : typeSchemas(target).get(type.slice(slash + 1));
    if (schema === undefined) continue;
    for (const field of kidsOf(declaration.value)) {
      if (field.kind !== 'arg' || field.name === undefined || schema.has(field.name)) continue;
      diagnostics.push({
        code: 'allium.default.unknownField',
        severity: 'error',
        message: `Default sets field '${field.name}' which is not declared on '${type}'.`,
        location: locationOf(index.spec, field),
      });
    }
  }
  return diagnostics;
}

/**
 * Each entity, external entity and value type of a file with its fields' declared types (a later declaration of a
 * name wins, as a later field does; parameterised and path fields are not fields of the type).
 */
const typeSchemas = perSpec((index): ReadonlyMap<string, ReadonlyMap<string, Expr>> => {
  const schemas = new Map<string, Map<string, Expr>>();
  for (let b = 0; b < index.blocks.length; b += 1) {
    const block = index.blocks[b]!;
    if (block.block !== 'entity' && block.block !== 'external entity' && block.block !== 'value') continue;
    const fields = new Map<string, Expr>();
    for (let i = 0; i < block.items.length; i += 1) {
      const item = block.items[i]!;
      if (item.kind === 'field' && item.params === undefined && item.path === undefined)
        fields.set(item.name.name, item.value);
    }
    schemas.set(block.name.name, fields);
  }
  return schemas;
});

/** Whether a field's declared type is `List<T>`, or `List<T>?`. */
function isListType(type: Expr): boolean {
  if (type.kind === 'optional') return type.a !== undefined && isListType(type.a);
  return type.kind === 'generic' && type.a?.kind === 'ident' && type.a.name === 'List';
}

/** The type a field names directly (`Address`, `Address?`), to check a nested literal against; else undefined. */
function baseTypeName(type: Expr): string | undefined {
  if (type.kind === 'optional') return type.a === undefined ? undefined : baseTypeName(type.a);
  return type.kind === 'ident' ? type.name : undefined;
}

/**
 * `allium.use.ambiguousReference` (warning): a bare capitalised name that more than one imported file declares and
 * this file does not (its own declarations, contracts, built-ins and aliases shadow imports); once per name, at its
 * first reference, in the reference's order (declarations in order; a variant's base, a default's type, then the
 * expressions of each item).
 */
export function checkAmbiguousNames(index: SpecIndex, imports: Imports): Diagnostic[] {
  if (imports.size < 2) return [];
  const ambiguous = ambiguousImports(imports, declaredNames);
  if (ambiguous.size === 0) return [];
  const local = new Set(index.typeNames);
  for (const block of index.blocks) if (block.block === 'contract') local.add(block.name.name);
  const diagnostics: Diagnostic[] = [];
  const flagged = new Set<string>();
  // A name used in an expression (located from its offset) or a declared base or type (an ident with a location).
  const consider = (at: Expr | Ident): void => {
    const name = at.name;
    if (
      name === undefined ||
      !capitalised(name) ||
      name.includes('/') ||
      local.has(name) ||
      flagged.has(name)
    )
      return;
    const aliases = ambiguous.get(name);
    if (aliases === undefined) return;
    flagged.add(name);
    diagnostics.push({
      code: 'allium.use.ambiguousReference',
      severity: 'warning',
      message: `Unqualified reference '${name}' is ambiguous: it is declared in imported modules ${aliasList(aliases)}. Use a qualified name (e.g. '${aliases[0]}/${name}').`,
      location: 'location' in at ? at.location : locationOf(index.spec, at),
    });
  };
  const visit = (e: Expr): void => {
    if (e.kind === 'ident') consider(e);
  };
  const items = (list: readonly BlockItem[]): void =>
    walkItems(list, (item) => forEachItemExpr(item, (expr) => walkExpr(expr, visit)));
  for (const declaration of index.spec.declarations) {
    if (declaration.kind === 'block') items(declaration.items);
    else if (declaration.kind === 'variant') {
      if (declaration.base !== undefined) consider(declaration.base);
      items(declaration.items);
    } else if (declaration.kind === 'invariant') walkExpr(declaration.body, visit);
    else if (declaration.kind === 'default') {
      const type = declaration.type;
      if (type !== undefined) consider(type);
      walkExpr(declaration.value, visit);
    }
  }
  return diagnostics;
}
