import { findKid, forEachKid, LOGICAL_OPS, type Expr, type Ident, type ParsedSpec } from './ast.js';
import type { Diagnostic } from './diagnostic.js';
import { type Contributions, NO_CONTRIBUTIONS } from './imports.js';
import { collectPipe } from './parse-block-items.js';
import { clausesOf, type NamedBlock, type SpecIndex } from './spec-index.js';
import {
  addTo,
  commandParamTypes,
  type CommandParamTypes,
  resolveBinding,
  ruleBindingTypes,
} from './status-lookup.js';
import { ifBodies } from './triggers.js';
import { isDotMember, locationOf, plainName, simpleMember } from './walk.js';

/** Status names treated as terminal when an entity declares no terminal states. */
const LIKELY_TERMINAL = new Set([
  'completed',
  'cancelled',
  'canceled',
  'expired',
  'closed',
  'deleted',
  'archived',
  'failed',
  'rejected',
  'done',
]);

/** An entity's `status: a | b | …` enum (≥2 lower-case values) and its declared transition graph. */
interface StatusMachine {
  readonly entity: string;
  readonly values: readonly Ident[];
  readonly valueSet: ReadonlySet<string>;
  /** From the last `transitions` block that names terminal states (the reference keeps only that one). */
  readonly terminals?: ReadonlySet<string>;
  /** From the last `transitions` block. */
  readonly edges?: ReadonlySet<string>;
  /** Field name → tracked entity type, for `x.field.status` navigation. */
  readonly fieldTypes: ReadonlyMap<string, string>;
  /** Whether the entity declares a `transitions` block. */
  readonly hasTransitions: boolean;
}

type Machines = ReadonlyMap<string, StatusMachine>;

/** What the rules do to statuses: values assigned per entity and observed `from → to` per entity. */
interface Observed {
  readonly assigned: Map<string, Set<string>>;
  readonly transitions: Map<string, Map<string, Set<string>>>;
  readonly created: Diagnostic[];
}

/** Binding name → entity, for one rule. */
type BindingTypes = Map<string, string>;

/**
 * The lifecycle checks, as the reference computes them: `allium.status.unreachableValue` (a status no rule
 * assigns), `allium.status.noExit` (a non-terminal status with no observed transition out),
 * `allium.status.undeclaredTransition` (a rule's `requires` status → `ensures` status edge missing from the
 * declared graph), and on `E.created(…)` of a tracked entity `allium.created.invalidStatus` (a status that is not
 * a declared value) and `allium.created.missingStatus` (no status although the entity declares transitions).
 * Only internal entities with a field literally named `status` of ≥2 lower-case values are tracked. A binding is
 * typed by its `x: E.…` trigger, an `E(x)` trigger call, a surface `provides: Cmd(x: E)` parameter, its name
 * (case-insensitively equal to an entity's), or, failing those, by the status value it is compared with or set
 * to when exactly one tracked entity has that value. What the files importing this one establish (`importers`)
 * counts too: a status they create an entity with (`alias/Entity.created(status: v)`) or set on a binding typed to
 * it is assigned, and a transition they witness is observed.
 */
export function checkLifecycle(index: SpecIndex, importers: Contributions = NO_CONTRIBUTIONS): Diagnostic[] {
  const machines = collectMachines(index);
  if (machines.size === 0) return [];
  const commands = commandParamTypes(index, machines);
  const observed: Observed = { assigned: new Map(), transitions: new Map(), created: [] };
  for (let r = 0; r < index.rules.length; r += 1) {
    const rule = index.rules[r]!;
    observeRule(rule, machines, commands, observed, index.spec);
  }
  // A status an importing file creates the entity with or sets is assigned, and a transition it witnesses is observed
  // (only values the entity declares).
  for (const [entity, statuses] of importers.assignedStatuses) {
    const machine = machines.get(entity);
    if (machine !== undefined)
      for (const status of statuses)
        if (machine.valueSet.has(status)) addTo(observed.assigned, entity, status);
  }
  for (const [entity, edges] of importers.witnessedTransitions) {
    const machine = machines.get(entity);
    if (machine === undefined) continue;
    const perEntity = observed.transitions.get(entity) ?? new Map<string, Set<string>>();
    for (const [from, targets] of edges)
      for (const to of targets)
        if (machine.valueSet.has(from) && machine.valueSet.has(to)) {
          addTo(perEntity, from, to);
          addTo(observed.assigned, entity, to);
        }
    observed.transitions.set(entity, perEntity);
  }
  const diagnostics: Diagnostic[] = [];
  for (const machine of machines.values())
    diagnostics.push(...judgeMachine(machine, observed, index.spec.file));
  return [...diagnostics, ...observed.created];
}

/**
 * The status machines by entity name. Like the reference, everything but the status values is gathered per name over
 * every `entity` declaration of that name, whichever holds the status field: the terminal states of the last
 * `transitions` block naming any, the edges of the last block, the fields typed as entities (a later declaration's
 * field over an earlier one's), whether any declares a graph. The status values are the last valid `status` field's.
 */
function collectMachines(index: SpecIndex): Map<string, StatusMachine> {
  const statuses = new Map<string, Ident[]>();
  const terminalsOf = new Map<string, Set<string>>();
  const edgesOf = new Map<string, Set<string>>();
  const fieldTypesOf = new Map<string, Map<string, string>>();
  const hasTransitions = new Set<string>();
  for (let e = 0; e < index.entities.length; e += 1) {
    const entity = index.entities[e]!;
    if (entity.block !== 'entity') continue;
    const name = entity.name.name;
    for (let i = 0; i < entity.items.length; i += 1) {
      const item = entity.items[i]!;
      const plain = item.kind === 'field' && item.when === undefined && !item.params && !item.path;
      if (plain && item.name.name === 'status') {
        const values = statusValues(item.value, index.spec);
        if (values !== undefined) statuses.set(name, values);
      } else if (plain) {
        const type = fieldEntityType(item.value);
        if (type !== undefined) {
          let types = fieldTypesOf.get(name);
          if (types === undefined) fieldTypesOf.set(name, (types = new Map()));
          types.set(item.name.name, type);
        }
      }
      if (item.kind === 'transitions') {
        hasTransitions.add(name);
        edgesOf.set(name, new Set(item.edges.map((edge) => `${edge.from.name}->${edge.to.name}`)));
        if (item.terminal.length > 0) terminalsOf.set(name, new Set(item.terminal.map((t) => t.name)));
      }
    }
  }
  const machines = new Map<string, StatusMachine>();
  for (const [entity, values] of statuses) {
    const terminals = terminalsOf.get(entity);
    const edges = edgesOf.get(entity);
    machines.set(entity, {
      entity,
      values,
      valueSet: new Set(values.map((v) => v.name)),
      // Navigation only through fields typed as a tracked entity.
      fieldTypes: new Map([...(fieldTypesOf.get(entity) ?? [])].filter(([, type]) => statuses.has(type))),
      hasTransitions: hasTransitions.has(entity),
      ...(terminals ? { terminals } : {}),
      ...(edges ? { edges } : {}),
    });
  }
  return machines;
}

function statusValues(value: Expr, spec: ParsedSpec): Ident[] | undefined {
  const values: Ident[] = [];
  let plain = true;
  collectPipe(value, (leaf) => {
    if (leaf.kind !== 'ident' || leaf.name === undefined) return;
    if (/^[A-Z]/.test(leaf.name)) plain = false;
    values.push({ name: leaf.name, location: locationOf(spec, leaf) });
  });
  return plain && values.length >= 2 ? values : undefined;
}

/** `Payment` or `Slot{…}` as a field type → the capitalised entity name. */
function fieldEntityType(value: Expr): string | undefined {
  const target = value.kind === 'join' ? value.a : value;
  return target?.kind === 'ident' && target.name !== undefined && /^[A-Z]/.test(target.name)
    ? target.name
    : undefined;
}

const LOGICAL = new Set(LOGICAL_OPS);

/** Entity → status values, per machine table (for {@link resolveBinding}). */
const valueTables = new WeakMap<Machines, ReadonlyMap<string, ReadonlySet<string>>>();

function resolveEntity(
  binding: string,
  target: string | undefined,
  types: BindingTypes,
  machines: Machines,
): string | undefined {
  let table = valueTables.get(machines);
  if (table === undefined) {
    table = new Map([...machines].map(([entity, machine]) => [entity, machine.valueSet]));
    valueTables.set(machines, table);
  }
  return resolveBinding(binding, target, types, table);
}

function observeRule(
  rule: NamedBlock,
  machines: Machines,
  commands: CommandParamTypes,
  observed: Observed,
  spec: ParsedSpec,
): void {
  const ensures = clausesOf(rule.items, 'ensures');
  // Most rules assign no status: their binding types and `requires` states are worked out only when needed.
  let types: BindingTypes | undefined;
  let sources: ReadonlyMap<string, ReadonlySet<string>> | undefined;
  const typesOf = (): BindingTypes => (types ??= ruleBindingTypes(rule, machines, commands));
  for (let c = 0; c < ensures.length; c += 1) {
    const clause = ensures[c]!;
    visitAssignments(clause.value, typesOf, machines, (binding, target, entity) => {
      addTo(observed.assigned, entity, target);
      if (binding === undefined) return;
      sources ??= sourceStates(rule, typesOf(), machines);
      const from = sources.get(binding);
      if (from === undefined) return;
      const perEntity = observed.transitions.get(entity) ?? new Map<string, Set<string>>();
      for (const state of from) addTo(perEntity, state, target);
      observed.transitions.set(entity, perEntity);
    });
    visitCreated(clause.value, machines, observed, spec);
  }
}

/** Binding → the statuses a rule starts from: its `requires` comparisons and `x: E.status becomes v` triggers. */
function sourceStates(rule: NamedBlock, types: BindingTypes, machines: Machines): Map<string, Set<string>> {
  const sources = new Map<string, Set<string>>();
  const addSource = (binding: string, state: string): void => addTo(sources, binding, state);
  for (const clause of clausesOf(rule.items, 'requires'))
    visitComparisons(clause.value, types, machines, addSource);
  for (const clause of clausesOf(rule.items, 'when')) {
    const value = clause.value;
    const trigger = value.kind === 'binding' ? value.a : undefined;
    if (value.name === undefined || trigger?.kind !== 'binary') continue;
    if (trigger.op !== 'becomes' && trigger.op !== 'transitions_to') continue;
    const member = simpleMember(trigger.a);
    const state = plainName(trigger.b);
    if (member === undefined || member[1] !== 'status' || state === undefined) continue;
    if (machines.get(member[0])?.valueSet.has(state) === true) addSource(value.name, state);
  }
  return sources;
}

/** `b.status = s` (and `b.status != s`: every other value) in `requires`, through and/or/implies and blocks. */
function visitComparisons(
  expr: Expr,
  types: BindingTypes,
  machines: Machines,
  found: (binding: string, state: string) => void,
): void {
  if (expr.kind === 'block' || (expr.kind === 'binary' && LOGICAL.has(expr.op ?? ''))) {
    forEachKid(expr, (kid) => visitComparisons(kid, types, machines, found));
    return;
  }
  if (expr.kind !== 'binary' || (expr.op !== '=' && expr.op !== '!=')) return;
  const target = plainName(expr.b);
  const member = simpleMember(expr.a);
  if (target === undefined || member === undefined || member[1] !== 'status') return;
  const entity = resolveEntity(member[0], target, types, machines);
  if (entity === undefined) return;
  if (expr.op === '=') {
    found(member[0], target);
    return;
  }
  const values = machines.get(entity)?.valueSet;
  if (values?.has(target) !== true) return;
  for (const value of values) if (value !== target) found(member[0], value);
}

/** `b.status = s` and `b.field.status = s` in `ensures`, through blocks and `if` branches. */
function visitAssignments(
  expr: Expr,
  types: () => BindingTypes,
  machines: Machines,
  found: (binding: string | undefined, target: string, entity: string) => void,
): void {
  if (expr.kind === 'block') {
    forEachKid(expr, (kid) => visitAssignments(kid, types, machines, found));
    return;
  }
  if (expr.kind === 'if') {
    for (const body of ifBodies(expr)) visitAssignments(body, types, machines, found);
    return;
  }
  if (expr.kind !== 'binary' || expr.op !== '=') return;
  const target = plainName(expr.b);
  const left = expr.a;
  if (target === undefined || !isDotMember(left) || left.name !== 'status') return;
  const direct = simpleMember(left);
  if (direct !== undefined) {
    const entity = resolveEntity(direct[0], target, types(), machines);
    if (entity !== undefined) found(direct[0], target, entity);
    return;
  }
  const nested = simpleMember(left.a);
  if (nested === undefined) return;
  const root = resolveEntity(nested[0], undefined, types(), machines);
  const entity = root === undefined ? undefined : machines.get(root)?.fieldTypes.get(nested[1]);
  if (entity !== undefined) found(undefined, target, entity);
}

/** `E.created(…)` of a tracked entity in `ensures`: records its status or reports a bad or missing one. */
function visitCreated(expr: Expr, machines: Machines, observed: Observed, spec: ParsedSpec): void {
  if (expr.kind === 'block') {
    forEachKid(expr, (kid) => visitCreated(kid, machines, observed, spec));
    return;
  }
  if (expr.kind === 'if') {
    for (const body of ifBodies(expr)) visitCreated(body, machines, observed, spec);
    return;
  }
  const callee = expr.kind === 'call' ? expr.a : undefined;
  if (!isDotMember(callee) || callee.name !== 'created') return;
  const entity = plainName(callee.a);
  const machine = entity === undefined ? undefined : machines.get(entity);
  if (machine === undefined || entity === undefined) return;
  const status = findKid(expr, 1, (arg) => arg.kind === 'arg' && arg.name === 'status');
  if (status === undefined) {
    if (machine.hasTransitions) {
      observed.created.push({
        code: 'allium.created.missingStatus',
        severity: 'warning',
        message: `.created() on entity '${entity}' omits the status field, but the entity has a transition graph. The initial state is unspecified.`,
        location: locationOf(spec, expr),
      });
    }
    return;
  }
  const value = status.a;
  const name = plainName(value);
  if (value === undefined || name === undefined) return;
  if (machine.valueSet.has(name)) addTo(observed.assigned, entity, name);
  else
    observed.created.push({
      code: 'allium.created.invalidStatus',
      severity: 'error',
      message: `.created() on entity '${entity}' sets status to '${name}', which is not a declared status value.`,
      location: locationOf(spec, value),
    });
}

function judgeMachine(machine: StatusMachine, observed: Observed, file: string): Diagnostic[] {
  const assigned = observed.assigned.get(machine.entity) ?? new Set<string>();
  const transitions = observed.transitions.get(machine.entity) ?? new Map<string, Set<string>>();
  const diagnostics: Diagnostic[] = [];
  const warn = (code: string, at: Ident, message: string): void => {
    diagnostics.push({ code, severity: 'warning', message, location: { ...at.location, file } });
  };
  // An assigned name outside the enum is a variable: it may be any value, so the reference judges no value as
  // unreachable or without exit; it still judges the transitions the rules produce against the graph.
  const judgeValues = [...assigned].every((value) => machine.valueSet.has(value));
  for (const value of judgeValues ? machine.values : []) {
    const what = `Status '${value.name}' in entity '${machine.entity}'`;
    if (!assigned.has(value.name))
      warn('allium.status.unreachableValue', value, `${what} is never assigned by any rule ensures clause.`);
    const terminal = machine.terminals ? machine.terminals.has(value.name) : LIKELY_TERMINAL.has(value.name);
    if (!terminal && (transitions.get(value.name)?.size ?? 0) === 0) {
      warn('allium.status.noExit', value, `${what} has no observed transition to a different status.`);
    }
  }
  if (machine.edges === undefined) return diagnostics;
  for (const [from, targets] of transitions) {
    for (const to of targets) {
      if (from === to || machine.edges.has(`${from}->${to}`)) continue;
      const at = machine.values.find((v) => v.name === from) ?? machine.values[0];
      if (at === undefined) continue;
      const message = `Rule produces transition '${from}' → '${to}' on entity '${machine.entity}', but this edge is not in the declared transition graph.`;
      warn('allium.status.undeclaredTransition', at, message);
    }
  }
  return diagnostics;
}
