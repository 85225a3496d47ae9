import { kidsOf, type Expr } from './ast.js';
import { collectPipe } from './parse-block-items.js';
import type { NamedBlock, SpecIndex } from './spec-index.js';
import { simpleMember } from './walk.js';

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

const LOGICAL = new Set(['and', 'or', 'implies']);

/** `x: E.f …` bindings and `E(x)` calls in a rule's top-level `when:` clauses, for entities with a status enum. */
export function ruleBindingTypes(
  rule: NamedBlock,
  statuses: ReadonlyMap<string, unknown>,
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
  for (const item of rule.items) if (item.kind === 'clause' && item.keyword === 'when') visit(item.value);
  return types;
}
