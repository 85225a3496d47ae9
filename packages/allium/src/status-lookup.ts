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
