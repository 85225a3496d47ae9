import { kidsOf, LOGICAL_OPS, type BlockItem, type Expr } from './ast.js';
import type { Finding } from './reports.js';
import { clausesOf, type NamedBlock, perSpec, type SpecIndex } from './spec-index.js';
import { resolveBinding, ruleBindingTypes, statusEnums } from './status-lookup.js';
import { ALONE, type CheckSetContext, triggerReachability } from './imports.js';
import { ifBodies, type TriggerRef, triggerRefs } from './triggers.js';
import { isDotMember, isPlainIdent, simpleMember } from './walk.js';

/** Entity status enums, entity-typed fields, declared transition edges and terminal states of one file. */
interface EntityInfo {
  readonly statuses: ReadonlyMap<string, string[]>;
  readonly fieldTypes: ReadonlyMap<string, ReadonlyMap<string, string>>;
  readonly edges: ReadonlyMap<string, [string, string][]>;
  readonly terminals: ReadonlyMap<string, ReadonlySet<string>>;
}

/** What one rule needs, establishes and moves, as the reference's process analysis sees it. */
interface RuleData {
  readonly name: string;
  readonly reachable: boolean;
  /** Non-status `binding.field = value` requirements, typed: [entity, field, value]. */
  readonly requiresFields: [string, string, string][];
  /** [entity, from, to] status transitions the rule performs. */
  readonly transitions: [string, string, string][];
  /** `Entity.field` keys the rule's `ensures` assigns. */
  readonly assigns: Set<string>;
  /** Entities the rule's trigger binds. */
  readonly bindings: Set<string>;
}

const LOGICAL = new Set(LOGICAL_OPS);
const capitalised = (name: string): boolean => /^[A-Z]/.test(name);

/** What the findings read of a file's entities; once per file (every file importing it reads its status enums). */
const entityInfo = perSpec((index): EntityInfo => {
  const fieldTypes = new Map<string, Map<string, string>>();
  const edges = new Map<string, [string, string][]>();
  const terminals = new Map<string, Set<string>>();
  for (const entity of index.entities) {
    if (entity.block !== 'entity') continue;
    const name = entity.name.name;
    for (const item of entity.items) {
      if (item.kind === 'field' && item.when === undefined && !item.params && !item.path) {
        if (item.name.name !== 'status') {
          const target = item.value.kind === 'join' ? item.value.a : item.value;
          if (target?.kind === 'ident' && target.name !== undefined && capitalised(target.name)) {
            const fields = fieldTypes.get(name) ?? new Map<string, string>();
            fields.set(item.name.name, target.name);
            fieldTypes.set(name, fields);
          }
        }
      }
      if (item.kind === 'transitions') {
        edges.set(
          name,
          item.edges.map((edge) => [edge.from.name, edge.to.name]),
        );
        if (item.terminal.length > 0) terminals.set(name, new Set(item.terminal.map((t) => t.name)));
      }
    }
  }
  return { statuses: statusEnums(index), fieldTypes, edges, terminals };
});

const resolve = resolveBinding;

/** `x.a.b` → [x, a, b]. */
function nestedMember(expr: Expr | undefined): [string, string, string] | undefined {
  if (expr?.kind !== 'member' || expr.name === undefined) return undefined;
  const inner = simpleMember(expr.a);
  return inner === undefined ? undefined : [inner[0], inner[1], expr.name];
}

/** Visits the `=` comparisons of an `ensures` value through blocks and `if` branches. */
function ensuresEqualities(
  expr: Expr,
  visit: (left: Expr | undefined, right: Expr | undefined) => void,
): void {
  if (expr.kind === 'block') kidsOf(expr).forEach((kid) => ensuresEqualities(kid, visit));
  else if (expr.kind === 'if') ifBodies(expr).forEach((body) => ensuresEqualities(body, visit));
  else if (expr.kind === 'binary' && expr.op === '=') visit(expr.a, expr.b);
}

/** `E.created(k: v, …)` calls of an `ensures` value (through blocks and `if` branches), for status entities. */
function createdAssignments(expr: Expr, statuses: ReadonlyMap<string, string[]>, out: Set<string>): void {
  if (expr.kind === 'block') kidsOf(expr).forEach((kid) => createdAssignments(kid, statuses, out));
  else if (expr.kind === 'if') ifBodies(expr).forEach((body) => createdAssignments(body, statuses, out));
  else if (expr.kind === 'call' && isDotMember(expr.a) && expr.a.name === 'created') {
    const entity = expr.a.a;
    if (entity?.kind !== 'ident' || entity.name === undefined || !statuses.has(entity.name)) return;
    for (const arg of kidsOf(expr).slice(1)) {
      if (arg.kind !== 'arg' || arg.name === undefined) continue;
      out.add(`${entity.name}.${arg.name}`);
      const value = arg.a;
      if (arg.name === 'status' && value?.kind === 'ident')
        out.add(`${entity.name}.status.${value.name ?? ''}`);
    }
  }
}

/**
 * The `binding.field = value` conditions of a `requires` value (through blocks, `and`, `or`, `implies`), as the
 * reference collects them: `x.f = v`, `x.f = true`, and `x.y.status = v` read as a condition on `x`'s status.
 */
function requiresConditions(
  expr: Expr,
  onRequire: (binding: string, field: string, value: string) => void,
): void {
  if (expr.kind === 'block' || (expr.kind === 'binary' && LOGICAL.has(expr.op ?? ''))) {
    for (const kid of kidsOf(expr)) requiresConditions(kid, onRequire);
    return;
  }
  if (expr.kind !== 'binary' || expr.op !== '=') return;
  const right = expr.b;
  if (right?.kind === 'ident' && right.name !== undefined) {
    const direct = simpleMember(expr.a);
    const nested = direct === undefined ? nestedMember(expr.a) : undefined;
    if (direct !== undefined) onRequire(direct[0], direct[1], right.name);
    else if (nested !== undefined && nested[2] === 'status') onRequire(nested[0], 'status', right.name);
  }
  if (right?.kind === 'bool' && right.name === 'true') {
    const direct = simpleMember(expr.a);
    if (direct !== undefined) onRequire(direct[0], direct[1], 'true');
  }
}

function ruleData(
  rule: NamedBlock,
  info: EntityInfo,
  reachability: (ref: TriggerRef) => boolean | undefined,
  assigned: Set<string>,
): RuleData {
  let trigger: ReturnType<typeof triggerRefs>[number] | undefined;
  for (const item of rule.items) {
    if (item.kind !== 'clause' || item.keyword !== 'when') continue;
    const refs = triggerRefs(item.value);
    if (refs[0] !== undefined) trigger = refs[0];
  }
  const types = ruleBindingTypes(rule, info.statuses);
  const requiresStatuses = new Map<string, Set<string>>();
  const requiresFields: [string, string, string][] = [];
  const onRequire = (binding: string, field: string, value: string): void => {
    if (field === 'status') {
      const set = requiresStatuses.get(binding) ?? new Set<string>();
      set.add(value);
      requiresStatuses.set(binding, set);
      return;
    }
    const entity = resolve(binding, undefined, types, info.statuses);
    if (entity !== undefined) requiresFields.push([entity, field, value]);
  };
  for (const clause of clausesOf(rule.items, 'requires')) requiresConditions(clause.value, onRequire);
  const assigns = new Set<string>();
  const ensuresStatuses: [string, string][] = [];
  const onAssign = (entity: string, field: string, value: string): void => {
    assigned.add(`${entity}.${field}`);
    assigns.add(`${entity}.${field}`);
    if (field === 'status' && value !== '_variable_') assigned.add(`${entity}.status.${value}`);
  };
  for (const clause of clausesOf(rule.items, 'ensures')) {
    ensuresEqualities(clause.value, (left, right) => {
      const value = right?.kind === 'ident' && right.name !== undefined ? right.name : '_variable_';
      const direct = simpleMember(left);
      if (direct !== undefined) {
        const entity = resolve(direct[0], undefined, types, info.statuses);
        if (entity !== undefined) onAssign(entity, direct[1], value);
        if (direct[1] === 'status' && right?.kind === 'ident' && right.name !== undefined)
          ensuresStatuses.push([direct[0], right.name]);
      }
      const nested = nestedMember(left);
      if (nested !== undefined) {
        const root = resolve(nested[0], undefined, types, info.statuses);
        const type = root === undefined ? undefined : info.fieldTypes.get(root)?.get(nested[1]);
        if (type !== undefined) onAssign(type, nested[2], value);
      }
    });
  }
  const transitions: [string, string, string][] = [];
  for (const [binding, target] of ensuresStatuses) {
    const entity = resolve(binding, target, types, info.statuses);
    if (entity === undefined) continue;
    for (const source of requiresStatuses.get(binding) ?? []) transitions.push([entity, source, target]);
  }
  return {
    name: rule.name.name,
    reachable: trigger === undefined || reachability(trigger) !== false,
    requiresFields,
    transitions,
    assigns,
    bindings: new Set(types.values()),
  };
}

/** Fields surfaces provide: `T(entity)` → `Entity.status`, `T(k: Entity)` → `Entity.k` (status entities only). */
function surfaceProvidedFields(index: SpecIndex, statuses: ReadonlyMap<string, string[]>): Set<string> {
  const out = new Set<string>();
  const visit = (expr: Expr): void => {
    if (expr.kind === 'call' && expr.a?.kind === 'ident') {
      for (const arg of kidsOf(expr).slice(1)) {
        if (arg.kind === 'ident' && arg.name !== undefined && statuses.has(arg.name))
          out.add(`${arg.name}.status`);
        const value = arg.kind === 'arg' ? arg.a : undefined;
        if (value?.kind === 'ident' && value.name !== undefined && statuses.has(value.name))
          out.add(`${value.name}.${arg.name ?? ''}`);
      }
    } else if (expr.kind === 'block') kidsOf(expr).forEach(visit);
    else if (expr.kind === 'binary' && expr.op === 'when') {
      if (expr.a !== undefined) visit(expr.a);
    } else if (expr.kind === 'if') ifBodies(expr).forEach(visit);
  };
  for (const surface of index.surfaces)
    for (const item of surface.items as readonly BlockItem[])
      if (item.kind === 'clause' && item.keyword === 'provides') visit(item.value);
  return out;
}

/**
 * The reference's process findings for one file: `dead_transition`, `missing_producer`, `deadlock` and
 * `unreachable_trigger` (only in files with an entity status enum). Unsorted. Its check set counts as the
 * reference's cross-module context does: a trigger is reachable as {@link triggerReachability} says, and a status an
 * importer creates an entity of this file with (`alias/Entity.created(status: v)`) or sets on a binding typed to it
 * is assigned.
 */
export function processFindings(index: SpecIndex, context: CheckSetContext = ALONE): Finding[] {
  const info = entityInfo(index);
  if (info.statuses.size === 0) return [];
  const { imports, contributions } = context;
  const reachability = triggerReachability(index, imports, contributions.providedTriggers);
  const assigned = new Set<string>();
  for (const [entity, statuses] of contributions.assignedStatuses)
    for (const status of statuses) assigned.add(`${entity}.status.${status}`);
  const rules = index.rules.map((rule) => ruleData(rule, info, reachability, assigned));
  const created = new Set<string>();
  for (const rule of index.rules)
    for (const clause of clausesOf(rule.items, 'ensures')) {
      createdAssignments(clause.value, info.statuses, assigned);
      createdAssignments(clause.value, info.statuses, created);
    }
  const provided = surfaceProvidedFields(index, info.statuses);
  const achievable = (rule: RuleData): boolean =>
    rule.requiresFields.every(([e, f]) => assigned.has(`${e}.${f}`));
  const searched = (entity: string, field: string): unknown[] => {
    const key = `${entity}.${field}`;
    const producer = rules.find((rule) => rule.assigns.has(key));
    return [
      producer === undefined
        ? { kind: 'rule_ensures', found: false }
        : producer.reachable
          ? { kind: 'rule_ensures', found: producer.name }
          : { kind: 'rule_ensures', found: producer.name, but: 'trigger has no providing surface' },
      { kind: 'surface_provides', found: provided.has(key) },
      { kind: 'created_calls', found: created.has(key) },
    ];
  };
  const findings: Finding[] = [];
  for (const [entity, edges] of info.edges) {
    if (!info.statuses.has(entity)) continue;
    for (const [from, to] of edges) {
      const witnesses = rules.filter((r) =>
        r.transitions.some(([e, f, t]) => e === entity && f === from && t === to),
      );
      if (witnesses.length === 0 || witnesses.some(achievable)) continue;
      findings.push({
        type: 'dead_transition',
        summary: `Transition '${from}' → '${to}' on entity '${entity}' is declared but unachievable`,
        edge: { entity, from, to },
        witnessing_rules: witnesses.map((r) => r.name),
        unsatisfiable_requires: witnesses.flatMap((r) =>
          r.requiresFields
            .filter(([e, f]) => !assigned.has(`${e}.${f}`))
            .map(([e, f, v]) => ({ entity: e, field: f, value: v, searched: searched(e, f) })),
        ),
        affected_entities: [entity],
      });
    }
  }
  for (const rule of rules) {
    for (const [entity, field, value] of rule.requiresFields) {
      if (assigned.has(`${entity}.${field}`)) continue;
      findings.push({
        type: 'missing_producer',
        summary: `Nothing establishes ${entity}.${field} = ${value}`,
        requires: { rule: rule.name, field, value },
        searched: searched(entity, field),
        affected_entities: [entity],
      });
    }
  }
  for (const [entity, edges] of info.edges) {
    const terminals = info.terminals.get(entity);
    const statuses = info.statuses.get(entity);
    if (terminals === undefined || statuses === undefined) continue;
    const live = edges.filter(([, to]) => {
      const producers = rules.filter((r) => r.transitions.some(([e, , t]) => e === entity && t === to));
      return producers.length === 0 ? assigned.has(`${entity}.status.${to}`) : producers.some(achievable);
    });
    for (const status of new Set(statuses)) {
      if (terminals.has(status)) continue;
      const visited = new Set<string>();
      const queue = [status];
      let terminal = false;
      for (let current = queue.pop(); current !== undefined; current = queue.pop()) {
        if (visited.has(current)) continue;
        visited.add(current);
        if (terminals.has(current)) {
          terminal = true;
          break;
        }
        for (const [from, to] of live) if (from === current) queue.push(to);
      }
      if (terminal) continue;
      if (!live.some(([, to]) => to === status) && new Set(statuses).size > 6) continue;
      findings.push({
        type: 'deadlock',
        summary: `Entity '${entity}' can reach state '${status}' but has no achievable path to any terminal state`,
        state: status,
        outbound_edges: edges
          .filter(([from]) => from === status)
          .map(([from, to]) => ({ from, to, reason: blockedReason(rules, entity, to, assigned) })),
        cycle: findCycle(status, live),
        affected_entities: [entity],
      });
    }
  }
  const byTrigger = new Map<string, { rules: string[]; entities: Set<string> }>();
  for (const rule of index.rules) {
    for (const clause of rule.items) {
      if (clause.kind !== 'clause' || clause.keyword !== 'when') continue;
      for (const ref of triggerRefs(clause.value)) {
        if (reachability(ref) !== false) continue;
        const entry = byTrigger.get(ref.name) ?? { rules: [], entities: new Set<string>() };
        entry.rules.push(rule.name.name);
        // The entities bound by the first rule of that name, as the reference looks them up (by name): a rule declared
        // twice lends the first declaration's bindings to the second.
        const data = rules.find((r) => r.name === rule.name.name);
        for (const entity of data?.bindings ?? []) entry.entities.add(entity);
        byTrigger.set(ref.name, entry);
      }
    }
  }
  const surfaces = index.surfaces.map((surface) => surface.name.name);
  for (const [trigger, entry] of byTrigger)
    findings.push({
      type: 'unreachable_trigger',
      summary: `Trigger '${trigger}' is not provided by any surface`,
      trigger,
      listening_rules: entry.rules,
      surfaces_checked: surfaces,
      affected_entities: [...entry.entities].sort(),
    });
  return findings;
}

function blockedReason(
  rules: readonly RuleData[],
  entity: string,
  to: string,
  assigned: ReadonlySet<string>,
): string {
  const witnesses = rules.filter((r) => r.transitions.some(([e, , t]) => e === entity && t === to));
  if (witnesses.length === 0) return 'no witnessing rule';
  for (const rule of witnesses)
    for (const [e, f, v] of rule.requiresFields)
      if (!assigned.has(`${e}.${f}`)) return `rule ${rule.name} requires ${e}.${f} = ${v}, never established`;
  return 'no achievable witnessing rule';
}

/** A cycle through `start` in the achievable edges (as a list of states, first repeated last), or `null`. */
function findCycle(start: string, edges: readonly [string, string][]): string[] | null {
  const stack: [string, string[]][] = [[start, [start]]];
  const visited = new Set<string>();
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [current, path] = next;
    if (visited.has(current)) continue;
    visited.add(current);
    for (const [from, to] of edges) {
      if (from !== current) continue;
      const at = path.indexOf(to);
      if (at !== -1) return [...path.slice(at), to];
      visited.delete(to);
      stack.push([to, [...path, to]]);
    }
  }
  return null;
}

/**
 * The reference's `conflict` findings: two rules, not both fired by trigger calls, that can fire in the same
 * status of an entity (their `requires` status sets intersect) and set its status to different values. Bindings
 * are typed by name or by a status value unique to one entity, the entities of the files it imports included (a
 * local entity wins over an imported one of the same name), so a rule acting on an imported entity is attributed.
 */
export function conflictFindings(index: SpecIndex, context: CheckSetContext = ALONE): Finding[] {
  // The file's own enums, then the imported ones it does not declare; either alone as it is, so that the files
  // importing one file and declaring no enum of their own share its table and the lookups built on it.
  const own = entityInfo(index).statuses;
  const imported = importedStatuses(context.imports);
  let statuses: ReadonlyMap<string, string[]> = imported.size === 0 ? own : imported;
  if (own.size > 0 && imported.size > 0) {
    const joined = new Map(own);
    for (const [entity, values] of imported) if (!joined.has(entity)) joined.set(entity, values);
    statuses = joined;
  }
  if (statuses.size === 0) return [];
  const none = new Map<string, string>();
  const rules = index.rules.map((rule) => {
    let byCall = false;
    const requires = new Map<string, Set<string>>();
    const ensures = new Map<string, string>();
    const statusEquality = (
      left: Expr | undefined,
      right: Expr | undefined,
    ): [string, string] | undefined => {
      const member = simpleMember(left);
      const target = right?.kind === 'ident' ? right.name : undefined;
      if (member === undefined || member[1] !== 'status' || target === undefined) return undefined;
      const entity = resolve(member[0], target, none, statuses);
      return entity === undefined ? undefined : [entity, target];
    };
    const visitRequires = (expr: Expr): void => {
      if (expr.kind === 'block' || (expr.kind === 'binary' && LOGICAL.has(expr.op ?? ''))) {
        kidsOf(expr).forEach(visitRequires);
      } else if (expr.kind === 'binary' && expr.op === '=') {
        const found = statusEquality(expr.a, expr.b);
        if (found === undefined) return;
        const set = requires.get(found[0]) ?? new Set<string>();
        set.add(found[1]);
        requires.set(found[0], set);
      }
    };
    for (const clause of clausesOf(rule.items, 'when')) {
      const value = clause.value.kind === 'binding' ? clause.value.a : clause.value;
      // A call of a plain name: `core/Denies(claim)` is no such trigger to the reference, which then reports a
      // conflict with a rule triggered by a plain call.
      byCall = value?.kind === 'call' && isPlainIdent(value.a);
    }
    for (const clause of clausesOf(rule.items, 'requires')) visitRequires(clause.value);
    for (const clause of clausesOf(rule.items, 'ensures'))
      ensuresEqualities(clause.value, (left, right) => {
        const found = statusEquality(left, right);
        if (found !== undefined) ensures.set(found[0], found[1]);
      });
    return { name: rule.name.name, byCall, requires, ensures };
  });
  // Pairs in rule order, as the reference takes them, but only the pairs that can conflict: both rules require a
  // common entity state and both set a status. (Every pair of a spec with thousands of rules is millions of pairs:
  // a 4 MB spec took 13 s here before.)
  const stateKey = (entity: string, state: string): string => `${entity}\u0000${state}`;
  const requiring = new Map<string, number[]>();
  const candidates = [...rules.keys()].filter((i) => {
    const rule = rules[i] as (typeof rules)[number];
    return rule.requires.size > 0 && rule.ensures.size > 0;
  });
  for (const i of candidates)
    for (const [entity, states] of (rules[i] as (typeof rules)[number]).requires)
      for (const state of states) {
        const key = stateKey(entity, state);
        const list = requiring.get(key);
        if (list === undefined) requiring.set(key, [i]);
        else list.push(i);
      }
  const findings: Finding[] = [];
  for (const i of candidates) {
    const a = rules[i] as (typeof rules)[number];
    const partners = new Set<number>();
    for (const [entity, states] of a.requires)
      for (const state of states)
        for (const j of requiring.get(stateKey(entity, state)) ?? []) if (j > i) partners.add(j);
    for (const j of [...partners].sort((x, y) => x - y)) {
      const b = rules[j] as (typeof rules)[number];
      if (a.byCall && b.byCall) continue;
      let state: string | undefined;
      for (const [entity, states] of a.requires) {
        const shared = [...states].filter((s) => b.requires.get(entity)?.has(s) === true);
        if (shared[0] !== undefined) {
          state = shared[0];
          break;
        }
      }
      if (state === undefined) continue;
      for (const [entity, target] of a.ensures) {
        const other = b.ensures.get(entity);
        if (other === undefined || other === target) continue;
        findings.push({
          type: 'conflict',
          summary: `Rules '${a.name}' and '${b.name}' can both fire when entity '${entity}' is in state '${state}', setting status to conflicting values`,
          rule_a: a.name,
          rule_b: b.name,
          field: 'status',
          state,
          values: { [a.name]: target, [b.name]: other },
          affected_entities: [entity],
        });
        break;
      }
    }
  }
  return findings;
}

/** The status enums of the entities of the files `imports` names, an entity declared in several with their values joined. */
function importedStatuses(imports: CheckSetContext['imports']): ReadonlyMap<string, string[]> {
  const targets = new Set(imports.values());
  if (targets.size === 1) for (const target of targets) return entityInfo(target).statuses;
  const joined = new Map<string, string[]>();
  for (const target of targets)
    for (const [entity, values] of entityInfo(target).statuses) {
      const known = joined.get(entity);
      joined.set(entity, known === undefined ? values : [...new Set([...known, ...values])]);
    }
  return joined;
}

/** `for a in X: for b in X: a != b and a.key = b.key implies not (a.status = V and b.status = V)` → V and key. */
function uniquenessPattern(body: Expr): { prohibited: string; key: string } | undefined {
  const outer = body.kind === 'for' ? body.rest[0] : undefined;
  const inner = outer?.kind === 'for' ? outer.rest[0] : undefined;
  if (inner?.kind !== 'binary' || inner.op !== 'implies') return undefined;
  const [premise, conclusion] = kidsOf(inner);
  if (conclusion?.kind !== 'unary' || conclusion.op !== 'not') return undefined;
  const both = conclusion.a;
  if (both?.kind !== 'binary' || both.op !== 'and') return undefined;
  const statusValue = (expr: Expr | undefined): string | undefined => {
    if (expr?.kind !== 'binary' || expr.op !== '=') return undefined;
    if (simpleMember(expr.a)?.[1] !== 'status') return undefined;
    const right = expr.b;
    return right?.kind === 'ident' ? right.name : undefined;
  };
  const prohibited = statusValue(both.a);
  if (prohibited === undefined || statusValue(both.b) !== prohibited) return undefined;
  if (premise?.kind !== 'binary' || premise.op !== 'and') return undefined;
  const keyComparison = premise.b;
  if (keyComparison?.kind !== 'binary' || keyComparison.op !== '=') return undefined;
  const key = simpleMember(keyComparison.a)?.[1];
  return key === undefined ? undefined : { prohibited, key };
}

/**
 * The reference's `invariant_risk` findings: for a top-level uniqueness invariant (no two `X` sharing a key may
 * both be in status `V`), each rule that sets an entity's status to `V` without touching the key's entity (no
 * field of it assigned, no `requires` on it) could violate it. Only in files with an entity status enum.
 */
export function invariantRiskFindings(index: SpecIndex): Finding[] {
  const info = entityInfo(index);
  if (info.statuses.size === 0) return [];
  const effects = index.rules.map((rule) => {
    const types = ruleBindingTypes(rule, info.statuses);
    const statusSets: [string, string][] = [];
    const fieldSets = new Set<string>();
    const requiresEntities = new Set<string>();
    for (const clause of clausesOf(rule.items, 'ensures')) {
      ensuresEqualities(clause.value, (left, right) => {
        if (right?.kind !== 'ident' || right.name === undefined) return;
        const target = right.name;
        const direct = simpleMember(left);
        if (direct !== undefined) {
          const entity = resolve(
            direct[0],
            direct[1] === 'status' ? target : undefined,
            types,
            info.statuses,
          );
          if (entity !== undefined) {
            if (direct[1] === 'status') statusSets.push([entity, target]);
            fieldSets.add(`${entity}.${direct[1]}`);
          }
        }
        const nested = nestedMember(left);
        if (nested === undefined) return;
        const root = resolve(nested[0], undefined, types, info.statuses);
        const type = root === undefined ? undefined : info.fieldTypes.get(root)?.get(nested[1]);
        if (type === undefined) return;
        if (nested[2] === 'status') statusSets.push([type, target]);
        fieldSets.add(`${type}.${nested[2]}`);
      });
    }
    for (const clause of clausesOf(rule.items, 'requires'))
      requiresConditions(clause.value, (binding) => {
        const entity = resolve(binding, undefined, types, info.statuses);
        if (entity !== undefined) requiresEntities.add(entity);
      });
    return { name: rule.name.name, statusSets, fieldSets, requiresEntities };
  });
  const findings: Finding[] = [];
  for (const declaration of index.spec.declarations) {
    if (declaration.kind !== 'invariant') continue;
    const pattern = uniquenessPattern(declaration.body);
    if (pattern === undefined) continue;
    let keyEntity: string | undefined;
    for (const entity of info.statuses.keys()) {
      keyEntity = info.fieldTypes.get(entity)?.get(pattern.key);
      if (keyEntity !== undefined) break;
    }
    for (const effect of effects) {
      for (const [entity, target] of effect.statusSets) {
        if (target !== pattern.prohibited) continue;
        const guarded =
          keyEntity !== undefined &&
          ([...effect.fieldSets].some((f) => f.startsWith(`${keyEntity}.`)) ||
            effect.requiresEntities.has(keyEntity));
        if (guarded) continue;
        const invariant = declaration.name.name;
        findings.push({
          type: 'invariant_risk',
          summary: `Rule '${effect.name}' could violate invariant '${invariant}'`,
          rule: effect.name,
          invariant,
          mechanism: `Sets ${entity}.status to '${target}' without preventing concurrent instances`,
          guard_analysis: {
            has_guard: false,
            needed: `Rule should set ${keyEntity ?? 'related entity'}.status to prevent concurrent ${pattern.prohibited} states`,
          },
          affected_entities: [entity],
        });
      }
    }
  }
  return findings;
}
