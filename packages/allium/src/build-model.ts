import { COMPARISON_OPS, kidsOf, type BlockItem, type Expr, type ParsedSpec } from './ast.js';
import type { Diagnostic } from './diagnostic.js';
import { collectPipe } from './parse-block-items.js';
import { literalText } from './string-literal.js';
import { plainName, sourceText } from './walk.js';

/** `when status = a | b` on a field or inferred for a derived value. */
export interface WhenSet {
  status_field: string;
  qualifying_states: string[];
}

/** A field of an entity or value type, in the reference `model` shape (empty parts omitted). */
export interface ModelField {
  name: string;
  type_expr: string;
  optional?: true;
  enum_values?: string[];
  when_set?: WhenSet;
  constraints?: { invariant: string; bound: string }[];
}

/** An entity in the reference `model` shape. */
export interface ModelEntity {
  name: string;
  kind: 'internal' | 'external';
  fields: ModelField[];
  relationships?: { name: string; target: string }[];
  projections?: { name: string; source: string }[];
  derived_values?: { name: string; when_set?: WhenSet }[];
  transition_graphs?: {
    field: string;
    edges: { from: string; to: string }[];
    terminal?: string[];
    states: string[];
  }[];
  invariants?: { name: string; scope: 'entity'; expression: string }[];
}

/** The domain model of one file, field for field the reference CLI's `allium model` JSON. */
export interface DomainModel {
  version: number | null;
  entities?: ModelEntity[];
  value_types?: { name: string; fields: ModelField[] }[];
  enums?: { name: string; values: string[] }[];
  config?: { name: string; type_expr: string; default_expr?: string }[];
  diagnostics: Diagnostic[];
}

const DERIVED_OPS = new Set(['=', '!=', '<', '<=', '>', '>=', 'and', 'or', 'implies', '+', '-', '*', '/']);

/** True for values the reference treats as derived: comparisons, logic, arithmetic and `not`. */
export function isDerived(value: Expr): boolean {
  return (
    (value.kind === 'binary' && DERIVED_OPS.has(value.op ?? '')) ||
    (value.kind === 'unary' && value.op === 'not')
  );
}

/** Builds the {@link DomainModel} of a parsed file. Rules, surfaces and variants are not part of it. */
export function buildModel(spec: ParsedSpec): DomainModel {
  const entities: ModelEntity[] = [];
  const valueTypes: { name: string; fields: ModelField[] }[] = [];
  const enums: { name: string; values: string[] }[] = [];
  const config: { name: string; type_expr: string; default_expr?: string }[] = [];
  for (const declaration of spec.declarations) {
    if (declaration.kind !== 'block') continue;
    const name = declaration.name?.name ?? '';
    if (declaration.block === 'entity' || declaration.block === 'external entity') {
      entities.push(
        buildEntity(
          spec.source,
          name,
          declaration.block === 'entity' ? 'internal' : 'external',
          declaration.items,
        ),
      );
    } else if (declaration.block === 'value') {
      valueTypes.push({ name, fields: buildValueFields(spec.source, declaration.items) });
    } else if (declaration.block === 'enum') {
      enums.push({
        name,
        values: declaration.items.flatMap((i) => (i.kind === 'enum-value' ? [i.name.name] : [])),
      });
    } else if (declaration.block === 'config') {
      config.push(...buildConfig(spec.source, declaration.items));
    }
  }
  return {
    version: spec.version ?? null,
    ...nonEmpty('entities', entities),
    ...nonEmpty('value_types', valueTypes),
    ...nonEmpty('enums', enums),
    ...nonEmpty('config', config),
    diagnostics: spec.diagnostics.filter((d) => d.code === null),
  };
}

function nonEmpty<K extends string, T>(key: K, list: T[]): Partial<Record<K, T[]>> {
  return list.length === 0 ? {} : ({ [key]: list } as Record<K, T[]>);
}

/**
 * A field's type as written. A field with nothing after its colon has the reference's empty value, which spans the
 * item's first token: its text is then the field's own name.
 */
function typeText(source: string, name: string, value: Expr): string {
  return value.kind === 'empty' ? name : sourceText(source, value);
}

function plainField(source: string, name: string, value: Expr, withEnums: boolean): ModelField {
  const enumValues = withEnums ? inlineEnumValues(value) : [];
  return {
    name,
    type_expr: typeText(source, name, value),
    ...(value.kind === 'optional' ? { optional: true as const } : {}),
    ...(enumValues.length > 0 ? { enum_values: enumValues } : {}),
  };
}

function inlineEnumValues(value: Expr): string[] {
  if (value.kind !== 'binary' && value.kind !== 'ident') return [];
  if (value.kind === 'binary' && value.op !== '|') return [];
  const values: string[] = [];
  collectPipe(value, (leaf) => {
    // A qualified `alias/Name` is a type from another module, never an enum value (even with a lower-case alias).
    if (
      leaf.kind === 'ident' &&
      leaf.name !== undefined &&
      /^[a-z]/.test(leaf.name) &&
      !leaf.name.includes('/')
    )
      values.push(leaf.name);
  });
  return values;
}

function buildEntity(
  source: string,
  name: string,
  kind: 'internal' | 'external',
  items: readonly BlockItem[],
): ModelEntity {
  const entity: Required<ModelEntity> = {
    name,
    kind,
    fields: [],
    relationships: [],
    projections: [],
    derived_values: [],
    transition_graphs: [],
    invariants: [],
  };
  const whenSets = new Map<string, WhenSet>();
  for (const item of items) addEntityItem(source, entity, whenSets, item);
  attachConstraints(entity, items);
  const { fields, relationships, projections, derived_values, transition_graphs, invariants } = entity;
  return {
    name,
    kind,
    fields,
    ...nonEmpty('relationships', relationships),
    ...nonEmpty('projections', projections),
    ...nonEmpty('derived_values', derived_values),
    ...nonEmpty('transition_graphs', transition_graphs),
    ...nonEmpty('invariants', invariants),
  };
}

function addEntityItem(
  source: string,
  entity: Required<ModelEntity>,
  whenSets: Map<string, WhenSet>,
  item: BlockItem,
): void {
  if (item.kind === 'transitions') {
    const states = new Set<string>();
    const edges = item.edges.map((edge) => {
      states.add(edge.from.name).add(edge.to.name);
      return { from: edge.from.name, to: edge.to.name };
    });
    for (const state of item.terminal) states.add(state.name);
    const terminal = item.terminal.map((t) => t.name);
    const sorted = [...states].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    entity.transition_graphs.push({
      field: item.field.name,
      edges,
      ...nonEmpty('terminal', terminal),
      states: sorted,
    });
    return;
  }
  if (item.kind === 'invariant') {
    entity.invariants.push({
      name: item.name.name,
      scope: 'entity',
      expression: sourceText(source, item.body),
    });
    return;
  }
  if (item.kind !== 'field' || item.params !== undefined || item.path !== undefined) return;
  const name = item.name.name;
  const value = item.value;
  if (item.when !== undefined) {
    const whenSet = { status_field: item.when.field, qualifying_states: item.when.states.map((s) => s.name) };
    whenSets.set(name, whenSet);
    entity.fields.push({ ...plainField(source, name, value, true), when_set: whenSet });
  } else if (value.kind === 'binary' && value.op === 'with') {
    entity.relationships.push({ name, target: sourceIdent(value) });
  } else if (value.kind === 'binary' && value.op === 'where') {
    entity.projections.push({ name, source: sourceIdent(value) });
  } else if (isDerived(value)) {
    const whenSet = inferWhenSet(value, whenSets);
    entity.derived_values.push({ name, ...(whenSet === undefined ? {} : { when_set: whenSet }) });
  } else {
    entity.fields.push(plainField(source, name, value, true));
  }
}

/** The plain name a `with`/`where` selects from; `unknown` for anything else, a qualified `alias/Name` included. */
function sourceIdent(value: Expr): string {
  const left = value.a;
  return left?.kind === 'ident' && left.name !== undefined && !left.name.includes('/')
    ? left.name
    : 'unknown';
}

function inferWhenSet(value: Expr, whenSets: ReadonlyMap<string, WhenSet>): WhenSet | undefined {
  let result: { field: string; states: Set<string> } | undefined;
  for (const ref of fieldRefs(value)) {
    const set = whenSets.get(ref);
    if (set === undefined) continue;
    if (result === undefined) result = { field: set.status_field, states: new Set(set.qualifying_states) };
    else if (result.field === set.status_field) {
      const other = new Set(set.qualifying_states);
      result.states = new Set([...result.states].filter((s) => other.has(s)));
    }
  }
  if (result === undefined) return undefined;
  return { status_field: result.field, qualifying_states: [...result.states].sort() };
}

function fieldRefs(expr: Expr): string[] {
  if (expr.kind === 'ident' && expr.name !== undefined) return [expr.name];
  if (expr.kind === 'member' && expr.name !== undefined) return [expr.name];
  if (
    (expr.kind === 'binary' && DERIVED_OPS.has(expr.op ?? '')) ||
    (expr.kind === 'unary' && expr.op === 'not')
  ) {
    return kidsOf(expr).flatMap(fieldRefs);
  }
  return [];
}

const FLIP: Readonly<Record<string, string>> = { '<': '>', '<=': '>=', '>': '<', '>=': '<=' };
const COMPARISON = new Set(COMPARISON_OPS);

/**
 * Attaches to each field the bounds the entity's invariants put on it alone, as the reference does: an invariant
 * that is one comparison of `this.field` with a literal (either way round: `1 <= this.f` is `>= 1` on `f`).
 */
function attachConstraints(entity: Required<ModelEntity>, items: readonly BlockItem[]): void {
  for (const item of items) {
    if (item.kind !== 'invariant') continue;
    const found = singleFieldBound(item.body);
    if (found === undefined) continue;
    const field = entity.fields.find((f) => f.name === found.field);
    if (field !== undefined)
      (field.constraints ??= []).push({ invariant: item.name.name, bound: found.bound });
  }
}

function singleFieldBound(body: Expr): { field: string; bound: string } | undefined {
  if (
    body.kind !== 'binary' ||
    !COMPARISON.has(body.op ?? '') ||
    body.a === undefined ||
    body.b === undefined
  )
    return undefined;
  const op = body.op ?? '';
  const left = thisField(body.a);
  const right = literalOf(body.b);
  if (left !== undefined && right !== undefined) return { field: left, bound: `${op} ${right}` };
  const field = thisField(body.b);
  const value = literalOf(body.a);
  return field !== undefined && value !== undefined
    ? { field, bound: `${FLIP[op] ?? op} ${value}` }
    : undefined;
}

/** `f` of `this.f`. */
function thisField(expr: Expr): string | undefined {
  return expr.kind === 'member' && expr.op === '.' && expr.a?.kind === 'this' ? expr.name : undefined;
}

/** A literal as the model prints a bound: a number as written, `null`, `true`, a string, a plain name. */
function literalOf(expr: Expr): string | undefined {
  switch (expr.kind) {
    case 'number':
    case 'bool':
    case 'null':
      return expr.name;
    case 'string':
      return literalText(expr.name ?? '""');
    case 'ident':
      return plainName(expr);
    default:
      return undefined;
  }
}

function buildValueFields(source: string, items: readonly BlockItem[]): ModelField[] {
  return items.flatMap((item) =>
    item.kind === 'field' &&
    item.when === undefined &&
    item.params === undefined &&
    item.path === undefined &&
    !isDerived(item.value)
      ? [plainField(source, item.name.name, item.value, false)]
      : [],
  );
}

function buildConfig(
  source: string,
  items: readonly BlockItem[],
): { name: string; type_expr: string; default_expr?: string }[] {
  return items.flatMap((item) => {
    // A field with a `when` qualifier, or a path's (`a.b: …`), is another kind of item to the reference, which lists
    // only plain ones here.
    if (
      item.kind !== 'field' ||
      item.params !== undefined ||
      item.when !== undefined ||
      item.path !== undefined
    )
      return [];
    const value = item.value;
    const [left, right] = kidsOf(value);
    if (value.kind === 'binary' && value.op === '=' && left !== undefined && right !== undefined) {
      return [
        {
          name: item.name.name,
          type_expr: sourceText(source, left),
          default_expr: sourceText(source, right),
        },
      ];
    }
    return [{ name: item.name.name, type_expr: typeText(source, item.name.name, value) }];
  });
}
