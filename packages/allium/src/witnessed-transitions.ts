import { COMPARISON_OPS, kidsOf, LOGICAL_OPS, type Expr } from './ast.js';
import { type NamedBlock, perSpec, type SpecIndex } from './spec-index.js';
import {
  addTo,
  append,
  commandParamTypes,
  type CommandParamTypes,
  forEachProvidedCall,
  ruleBindingTypes,
  statusEnums,
  unwrapRefinement,
} from './status-lookup.js';
import { ifBodies } from './triggers.js';
import { calleeName, simpleMember, walkExpr, walkItems } from './walk.js';

/** Entity → statuses, and entity → `from` → `to`: what importers establish on an imported file's entities. */
export interface Witnessed {
  readonly assigned: Map<string, Set<string>>;
  readonly transitions: Map<string, Map<string, Set<string>>>;
}

/**
 * The transitions a file (`importer`, which imports `target` as `alias`) witnesses on `target`'s entities, as the
 * reference credits them back across the import: a rule of the importer whose binding is typed to one of `target`'s
 * entities with a status enum, and whose `ensures` sets `binding.status = to` (a declared value), assigns `to`; with a
 * `from` state (`requires: binding.status = from`, or the state of a `b: alias/E.status becomes from` trigger) it
 * witnesses `from → to`. The binding is typed by that trigger, by a comparison trigger on the entity (`b:
 * alias/E.deadline <= now`: no `from` of its own), or by the parameter types of the trigger it subscribes to
 * (`alias/Cmd(b)` or a plain `Cmd(b)`): those `target`'s surfaces declare (`provides: Cmd(b: E)`), those the
 * importer's own surfaces declare (`Cmd(b: alias/E)`, or `Cmd(b)` with `context b: alias/E`), and those of an event a
 * rule of `target` emits with a binding its trigger types (`ensures: Done(b)`).
 */
export function witnessTransitions(
  importer: SpecIndex,
  alias: string,
  target: SpecIndex,
  out: Witnessed,
): void {
  const { statuses, commands: known } = targetFacts(target);
  if (statuses.size === 0) return;
  const qualified = (expr: Expr | undefined): string | undefined => {
    const inner = unwrapRefinement(expr);
    const name = inner?.kind === 'ident' ? inner.name : undefined;
    if (name === undefined || !name.startsWith(`${alias}/`)) return undefined;
    const entity = name.slice(alias.length + 1);
    return statuses.has(entity) ? entity : undefined;
  };
  const parts = aliasedParts(importer);
  // The importer's surfaces: `Cmd(b: alias/E)`, or `Cmd(b)` with `context b: alias/E`, over `target`'s own commands
  // (`provides: Cmd(b: E)`) and events (emitted with bindings their triggers type).
  const own: CommandParamTypes = new Map();
  for (const at of parts.surfaces.get(alias) ?? []) {
    const surface = importer.surfaces[at] as NamedBlock;
    const contexts = new Map<string, string>();
    for (const item of surface.items)
      if (item.kind === 'clause' && (item.keyword === 'context' || item.keyword === 'facing'))
        contextBindings(item.value, qualified, contexts);
    for (const item of surface.items)
      if (item.kind === 'clause' && item.keyword === 'provides')
        importerParamTypes(item.value, qualified, contexts, own);
  }
  const commands = (name: string): readonly (string | undefined)[] | undefined =>
    own.get(name) ?? known.get(name);
  for (const rule of candidateRules(importer, parts, alias, [own, known])) {
    const entities = new Map<string, string>();
    const froms = new Map<string, Set<string>>();
    for (const item of rule.items) {
      if (item.kind !== 'clause' || item.keyword !== 'when') continue;
      const value = item.value;
      if (value.kind === 'call') {
        // `alias/Cmd(b)` or a plain `Cmd(b)` (one the importer owns, typed by its own surfaces).
        let name = calleeName(value);
        if (name?.includes('/') === true)
          name = name.startsWith(`${alias}/`) ? name.slice(alias.length + 1) : undefined;
        if (name === undefined) continue;
        const params = commands(name);
        if (params === undefined) continue;
        kidsOf(value)
          .slice(1)
          .forEach((arg, i) => {
            const entity = params[i];
            if (arg.kind === 'ident' && arg.name !== undefined && entity !== undefined)
              entities.set(arg.name, entity);
          });
      } else if (value.kind === 'binding' && value.name !== undefined) {
        const inner = value.a;
        if (inner?.kind !== 'binary') continue;
        if (inner.op === 'becomes' || inner.op === 'transitions_to') {
          const member = simpleMember(inner.a);
          const entity = member?.[1] === 'status' ? qualified(inner.a?.a) : undefined;
          const state = inner.b?.kind === 'ident' ? inner.b.name : undefined;
          if (entity === undefined || state === undefined || statuses.get(entity)?.has(state) !== true)
            continue;
          entities.set(value.name, entity);
          addTo(froms, value.name, state);
        } else if (COMPARISON_OPS.includes(inner.op ?? '')) {
          const entity = memberOfQualified(inner.a, qualified) ?? memberOfQualified(inner.b, qualified);
          if (entity !== undefined) entities.set(value.name, entity);
        }
      }
    }
    if (entities.size === 0) continue;
    const tos = new Map<string, Set<string>>();
    walkItems(rule.items, (item) => {
      if (item.kind !== 'clause') return;
      if (item.keyword === 'requires')
        statusEqualities(item.value, (binding, status) => addTo(froms, binding, status));
      else if (item.keyword === 'ensures')
        statusEqualities(item.value, (binding, status) => addTo(tos, binding, status));
    });
    for (const [binding, entity] of entities) {
      const valid = statuses.get(entity);
      const targets = tos.get(binding);
      if (valid === undefined || targets === undefined) continue;
      for (const to of targets) {
        if (!valid.has(to)) continue;
        addTo(out.assigned, entity, to);
        for (const from of froms.get(binding) ?? []) {
          if (!valid.has(from)) continue;
          const edges = out.transitions.get(entity) ?? new Map<string, Set<string>>();
          addTo(edges, from, to);
          out.transitions.set(entity, edges);
        }
      }
    }
  }
}

/**
 * What {@link witnessTransitions} reads of the imported file, whoever imports it: its status enums, and the commands
 * its surfaces type with, after them, the events its rules emit with typed bindings (an event's types only when no
 * command or earlier event of that name has any). Computed once per file, not once per file importing it: a file
 * imported by thousands was read through, and its commands copied, once per importer.
 */
interface TargetFacts {
  readonly statuses: ReadonlyMap<string, ReadonlySet<string>>;
  readonly commands: ReadonlyMap<string, readonly (string | undefined)[]>;
}

const targetFacts = perSpec((target): TargetFacts => {
  const statuses = new Map([...statusEnums(target)].map(([entity, values]) => [entity, new Set(values)]));
  const commands: CommandParamTypes = new Map();
  if (statuses.size > 0) {
    const surfaceParams = commandParamTypes(target, statuses);
    for (const [name, params] of surfaceParams) commands.set(name, params);
    for (const rule of target.rules) {
      const types = ruleBindingTypes(rule, statuses, surfaceParams);
      if (types.size === 0) continue;
      walkItems(rule.items, (item) => {
        if (item.kind === 'clause' && item.keyword === 'ensures')
          emissionParamTypes(item.value, types, commands);
      });
    }
  }
  return { statuses, commands };
});

/**
 * Where in the importer {@link witnessTransitions} can find anything through one alias, so that a file importing
 * thousands of others is not read through once per alias: the surfaces whose `context`, `facing` or `provides` names
 * something as `alias/…`, the rules whose `when:` does, and the rules with a plain `Cmd(…)` trigger, by the command's
 * name (they count for an alias only when the commands known through it type `Cmd`). Each as positions in the file.
 */
interface AliasedParts {
  readonly surfaces: ReadonlyMap<string, readonly number[]>;
  readonly rules: ReadonlyMap<string, readonly number[]>;
  readonly plainTriggers: ReadonlyMap<string, readonly number[]>;
}

const aliasedParts = perSpec((importer): AliasedParts => {
  const surfaces = new Map<string, number[]>();
  importer.surfaces.forEach((surface, at) => {
    const aliases = new Set<string>();
    for (const item of surface.items)
      if (
        item.kind === 'clause' &&
        (item.keyword === 'context' || item.keyword === 'facing' || item.keyword === 'provides')
      )
        aliasesIn(item.value, aliases);
    for (const alias of aliases) append(surfaces, alias, at);
  });
  const rules = new Map<string, number[]>();
  const plainTriggers = new Map<string, number[]>();
  importer.rules.forEach((rule, at) => {
    const aliases = new Set<string>();
    const plain = new Set<string>();
    for (const item of rule.items) {
      if (item.kind !== 'clause' || item.keyword !== 'when') continue;
      aliasesIn(item.value, aliases);
      const name = calleeName(item.value);
      if (name !== undefined && !name.includes('/')) plain.add(name);
    }
    for (const alias of aliases) append(rules, alias, at);
    for (const name of plain) append(plainTriggers, name, at);
  });
  return { surfaces, rules, plainTriggers };
});

/** The prefixes of the qualified names (`alias/Name`) anywhere in `expr`. */
function aliasesIn(expr: Expr, out: Set<string>): void {
  walkExpr(expr, (e) => {
    const name = e.kind === 'ident' ? e.name : undefined;
    const slash = name === undefined ? -1 : name.indexOf('/');
    if (name !== undefined && slash > 0) out.add(name.slice(0, slash));
  });
}

/**
 * The importer's rules that can witness anything through `alias`: those naming it, and those whose plain trigger one of
 * the command tables types (looked up from whichever side is smaller), in the file's order.
 */
function candidateRules(
  importer: SpecIndex,
  parts: AliasedParts,
  alias: string,
  tables: readonly ReadonlyMap<string, unknown>[],
): NamedBlock[] {
  const found = new Set(parts.rules.get(alias));
  const known = tables.reduce((sum, table) => sum + table.size, 0);
  if (parts.plainTriggers.size <= known) {
    for (const [name, at] of parts.plainTriggers)
      if (tables.some((table) => table.has(name))) for (const i of at) found.add(i);
  } else
    for (const table of tables)
      for (const name of table.keys()) for (const i of parts.plainTriggers.get(name) ?? []) found.add(i);
  return [...found].sort((a, b) => a - b).map((i) => importer.rules[i] as NamedBlock);
}

/** `alias/E.field` → `E` (a status entity of the imported file). */
function memberOfQualified(
  expr: Expr | undefined,
  qualified: (expr: Expr | undefined) => string | undefined,
): string | undefined {
  return simpleMember(expr) === undefined ? undefined : qualified(expr?.a);
}

/** Parameters that record something, or nothing: the reference keeps a command only when one parameter is typed. */
function keep(
  out: CommandParamTypes,
  name: string,
  params: (string | undefined)[],
  overwrite: boolean,
): void {
  if (!params.some((p) => p !== undefined)) return;
  if (overwrite || !out.has(name)) out.set(name, params);
}

/** `context b: alias/E` (and `facing`) in an importer's surface: b → E. */
function contextBindings(
  expr: Expr,
  qualified: (expr: Expr | undefined) => string | undefined,
  out: Map<string, string>,
): void {
  if (expr.kind === 'binding' && expr.name !== undefined) {
    const entity = qualified(expr.a);
    if (entity !== undefined) out.set(expr.name, entity);
  } else if (expr.kind === 'block') for (const kid of kidsOf(expr)) contextBindings(kid, qualified, out);
}

/** `provides: Cmd(b)` or `Cmd(x: alias/E)` in an importer's surface, `b` typed by a context binding. */
function importerParamTypes(
  expr: Expr,
  qualified: (expr: Expr | undefined) => string | undefined,
  contexts: ReadonlyMap<string, string>,
  out: CommandParamTypes,
): void {
  forEachProvidedCall(
    expr,
    (call) => {
      const name = calleeName(call);
      if (name === undefined || name.includes('/')) return;
      const params = kidsOf(call)
        .slice(1)
        .map((arg) => {
          if (arg.kind === 'ident') return arg.name === undefined ? undefined : contexts.get(arg.name);
          if (arg.kind !== 'arg') return undefined;
          const type = unwrapRefinement(arg.a);
          if (type?.kind !== 'ident' || type.name === undefined) return undefined;
          return type.name.includes('/') ? qualified(type) : contexts.get(type.name);
        });
      keep(out, name, params, true);
    },
    true,
  );
}

/** `ensures: Event(b)` (or `Event(p: b)`) with `b` typed: the event's parameters, unless the event is known already. */
function emissionParamTypes(expr: Expr, types: ReadonlyMap<string, string>, out: CommandParamTypes): void {
  if (expr.kind === 'call') {
    const name = calleeName(expr);
    if (name === undefined || name.includes('/')) return;
    const params = kidsOf(expr)
      .slice(1)
      .map((arg) => {
        const value = arg.kind === 'arg' ? arg.a : arg;
        return value?.kind === 'ident' && value.name !== undefined ? types.get(value.name) : undefined;
      });
    keep(out, name, params, false);
  } else if (expr.kind === 'block') for (const kid of kidsOf(expr)) emissionParamTypes(kid, types, out);
  else if (expr.kind === 'if') for (const body of ifBodies(expr)) emissionParamTypes(body, types, out);
}

/** Each `b.status = s` of a clause value, through `and`/`or`/`implies`, blocks and `if` bodies. */
function statusEqualities(expr: Expr, found: (binding: string, status: string) => void): void {
  if (expr.kind === 'binary' && expr.op === '=') {
    const member = simpleMember(expr.a);
    if (member?.[1] === 'status' && expr.b?.kind === 'ident' && expr.b.name !== undefined)
      found(member[0], expr.b.name);
  } else if (expr.kind === 'binary' && LOGICAL_OPS.includes(expr.op ?? '')) {
    for (const kid of kidsOf(expr)) statusEqualities(kid, found);
  } else if (expr.kind === 'block') for (const kid of kidsOf(expr)) statusEqualities(kid, found);
  else if (expr.kind === 'if') for (const body of ifBodies(expr)) statusEqualities(body, found);
}
