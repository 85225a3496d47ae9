import { kidsOf, LOGICAL_OPS, type Expr } from './ast.js';
import { collectPipe } from './parse-block-items.js';
import type { NamedBlock, SpecIndex } from './spec-index.js';
import { ifBodies } from './triggers.js';
import { calleeName, simpleMember } from './walk.js';

/**
 * Binding → entity resolution shared by the lifecycle checks and the process findings, as the reference resolves
 * a binding: its explicit type, else an entity whose name equals it ignoring case, else (given a status value) the
 * one entity whose status enum has that value. The lookups are built once per status table, so resolving is
 * constant time however many entities a spec declares.
 */
interface Lookup {
  readonly byLowerName: ReadonlyMap<string, string>;
  /** Status value → its only owner, or `null` when several entities have it. */
  readonly ownerOfValue: ReadonlyMap<string, string | null>;
}

const cache = new WeakMap<object, Lookup>();

function lookupFor(statuses: ReadonlyMap<string, Iterable<string>>): Lookup {
  let lookup = cache.get(statuses);
  if (lookup !== undefined) return lookup;
  const byLowerName = new Map<string, string>();
  const ownerOfValue = new Map<string, string | null>();
  for (const [entity, values] of statuses) {
    const lower = entity.toLowerCase();
    if (!byLowerName.has(lower)) byLowerName.set(lower, entity);
    for (const value of new Set(values)) ownerOfValue.set(value, ownerOfValue.has(value) ? null : entity);
  }
  lookup = { byLowerName, ownerOfValue };
  cache.set(statuses, lookup);
  return lookup;
}

/** The entity a binding stands for (see the module comment), or `undefined`. */
export function resolveBinding(
  binding: string,
  target: string | undefined,
  types: ReadonlyMap<string, string>,
  statuses: ReadonlyMap<string, Iterable<string>>,
): string | undefined {
  const typed = types.get(binding);
  if (typed !== undefined) return typed;
  const lookup = lookupFor(statuses);
  const named = lookup.byLowerName.get(binding.toLowerCase());
  if (named !== undefined) return named;
  if (target === undefined) return undefined;
  return lookup.ownerOfValue.get(target) ?? undefined;
}

/**
 * The status enums of a file's entities, as the reference's process analysis reads them: an internal entity's plain
 * `status` field (no `when`, parameters or path) of at least two values, none capitalised; entity → its values in
 * order.
 */
export function statusEnums(index: SpecIndex): Map<string, string[]> {
  const statuses = new Map<string, string[]>();
  for (const entity of index.entities) {
    if (entity.block !== 'entity') continue;
    for (const item of entity.items) {
      if (item.kind !== 'field' || item.when !== undefined || item.params || item.path) continue;
      if (item.name.name !== 'status') continue;
      const values: string[] = [];
      collectPipe(item.value, (leaf) => {
        if (leaf.kind === 'ident' && leaf.name !== undefined) values.push(leaf.name);
      });
      if (values.length >= 2 && !values.some((v) => /^[A-Z]/.test(v))) statuses.set(entity.name.name, values);
    }
  }
  return statuses;
}

const LOGICAL = new Set(LOGICAL_OPS);

/** Adds `value` to the set `map` holds for `key`. */
export function addTo(map: Map<string, Set<string>>, key: string, value: string): void {
  const set = map.get(key);
  if (set === undefined) map.set(key, new Set([value]));
  else set.add(value);
}

/** Adds `value` to the end of the list `map` holds for `key`. */
export function append<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [value]);
  else list.push(value);
}

/** Command → the entity each of its parameters is typed by (by position; `undefined` where none). */
export type CommandParamTypes = Map<string, (string | undefined)[]>;

/**
 * `x: E.f …` bindings and `E(x)` calls in a rule's top-level `when:` clauses, for entities with a status enum; then,
 * for a binding still untyped, the parameter types of the command it subscribes to (`when: Cmd(x)`, `commands`).
 */
export function ruleBindingTypes(
  rule: NamedBlock,
  statuses: ReadonlyMap<string, unknown>,
  commands?: ReadonlyMap<string, readonly (string | undefined)[]>,
): Map<string, string> {
  const types = new Map<string, string>();
  const visit = (value: Expr): void => {
    if (value.kind === 'binding' && value.name !== undefined) {
      let inner = value.a;
      if (inner?.kind === 'binary' && (inner.op === 'becomes' || inner.op === 'transitions_to'))
        inner = inner.a;
      const entity = simpleMember(inner)?.[0];
      if (entity !== undefined && statuses.has(entity)) types.set(value.name, entity);
    } else if (value.kind === 'call' && value.a?.kind === 'ident') {
      const callee = value.a.name ?? '';
      for (const arg of kidsOf(value).slice(1))
        if (arg.kind === 'ident' && arg.name !== undefined && statuses.has(callee))
          types.set(arg.name, callee);
    } else if (value.kind === 'binary' && LOGICAL.has(value.op ?? '')) kidsOf(value).forEach(visit);
  };
  const augment = (value: Expr, known: ReadonlyMap<string, readonly (string | undefined)[]>): void => {
    if (value.kind === 'call' && value.a?.kind === 'ident') {
      const params = known.get(value.a.name ?? '');
      if (params === undefined) return;
      kidsOf(value)
        .slice(1)
        .forEach((arg, i) => {
          const entity = params[i];
          if (arg.kind === 'ident' && arg.name !== undefined && entity !== undefined && !types.has(arg.name))
            types.set(arg.name, entity);
        });
    } else if (value.kind === 'binary' && LOGICAL.has(value.op ?? ''))
      kidsOf(value).forEach((kid) => augment(kid, known));
  };
  for (const item of rule.items) if (item.kind === 'clause' && item.keyword === 'when') visit(item.value);
  if (commands !== undefined)
    for (const item of rule.items)
      if (item.kind === 'clause' && item.keyword === 'when') augment(item.value, commands);
  return types;
}

/** A type without its refinements: `E where …`, `E with …` and `E?` all name `E`. */
export function unwrapRefinement(expr: Expr | undefined): Expr | undefined {
  let current = expr;
  while (
    current !== undefined &&
    ((current.kind === 'binary' && (current.op === 'where' || current.op === 'with')) ||
      current.kind === 'optional')
  )
    current = current.a;
  return current;
}

/**
 * The calls of a surface's `provides:` value (or a rule's `ensures:`), where the reference looks for them: the value
 * itself, a `when` guard's action, a block's items, an `if`'s bodies and, with `forBodies`, a `for`'s body.
 */
export function forEachProvidedCall(expr: Expr, visit: (call: Expr) => void, forBodies = false): void {
  if (expr.kind === 'call') visit(expr);
  else if (expr.kind === 'binary' && expr.op === 'when') {
    if (expr.a !== undefined) forEachProvidedCall(expr.a, visit, forBodies);
  } else if (expr.kind === 'block')
    for (const kid of kidsOf(expr)) forEachProvidedCall(kid, visit, forBodies);
  else if (expr.kind === 'if') for (const body of ifBodies(expr)) forEachProvidedCall(body, visit, forBodies);
  else if (forBodies && expr.kind === 'for' && expr.rest[0] !== undefined)
    forEachProvidedCall(expr.rest[0], visit, true);
}

/**
 * Command → parameter types from a file's surfaces: `provides: Cmd(a, x: E)` types its second parameter by `E` (a
 * status entity of `statuses`; `E where …`, `E with …` and `E?` too). A command with no typed parameter is left out.
 */
export function commandParamTypes(
  index: SpecIndex,
  statuses: ReadonlyMap<string, unknown>,
): CommandParamTypes {
  const commands: CommandParamTypes = new Map();
  for (const surface of index.surfaces)
    for (const item of surface.items)
      if (item.kind === 'clause' && item.keyword === 'provides')
        forEachProvidedCall(item.value, (call) => {
          const name = calleeName(call);
          if (name === undefined || name.includes('/')) return;
          const params = kidsOf(call)
            .slice(1)
            .map((arg) => {
              if (arg.kind !== 'arg') return undefined;
              const type = unwrapRefinement(arg.a);
              return type?.kind === 'ident' && type.name !== undefined && statuses.has(type.name)
                ? type.name
                : undefined;
            });
          if (params.some((p) => p !== undefined)) commands.set(name, params);
        });
  return commands;
}
