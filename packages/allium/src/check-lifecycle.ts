import type { Expr, Ident } from './ast.js';
import type { Diagnostic } from './diagnostic.js';
import { collectPipe } from './parse-block-items.js';
import { clausesOf, type NamedBlock, type SpecIndex } from './spec-index.js';
import { createdEntity, simpleMember, walkExpr } from './walk.js';

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
  /** Field name → entity type, for `x.field.status` navigation. */
  readonly fieldTypes: ReadonlyMap<string, string>;
}

/** What the rules do to statuses: values assigned per entity and observed `from → to` per entity. */
interface Observed {
  readonly assigned: Map<string, Set<string>>;
  readonly transitions: Map<string, Map<string, Set<string>>>;
}

/**
 * The lifecycle checks, as the reference computes them: `allium.status.unreachableValue` (a status no rule
 * assigns), `allium.status.noExit` (a non-terminal status with no observed transition out) and
 * `allium.status.undeclaredTransition` (a rule's `requires` status → `ensures` status edge missing from the
 * declared graph). Only internal entities with a field literally named `status` are tracked.
 */
export function checkLifecycle(index: SpecIndex): Diagnostic[] {
  const machines = collectMachines(index);
  if (machines.size === 0) return [];
  const observed: Observed = { assigned: new Map(), transitions: new Map() };
  for (const rule of index.rules) observeRule(rule, machines, observed);
  const diagnostics: Diagnostic[] = [];
  for (const machine of machines.values())
    diagnostics.push(...judgeMachine(machine, observed, index.spec.file));
  return diagnostics;
}

function collectMachines(index: SpecIndex): Map<string, StatusMachine> {
  const machines = new Map<string, StatusMachine>();
  for (const entity of index.entities) {
    if (entity.block !== 'entity') continue;
    let values: Ident[] | undefined;
    let terminals: Set<string> | undefined;
    let edges: Set<string> | undefined;
    const fieldTypes = new Map<string, string>();
    for (const item of entity.items) {
      if (item.kind === 'field' && item.when === undefined && item.name.name === 'status')
        values = statusValues(item.value, index.spec.file);
      else if (item.kind === 'field' && item.value.kind === 'ident' && item.value.name !== undefined)
        fieldTypes.set(item.name.name, item.value.name);
      if (item.kind === 'transitions') {
        edges = new Set(item.edges.map((edge) => `${edge.from.name}->${edge.to.name}`));
        if (item.terminal.length > 0) terminals = new Set(item.terminal.map((t) => t.name));
      }
    }
    if (values === undefined) continue;
    const machine = {
      entity: entity.name.name,
      values,
      valueSet: new Set(values.map((v) => v.name)),
      fieldTypes,
    };
    machines.set(entity.name.name, {
      ...machine,
      ...(terminals ? { terminals } : {}),
      ...(edges ? { edges } : {}),
    });
  }
  return machines;
}

function statusValues(value: Expr, file: string): Ident[] | undefined {
  const values: Ident[] = [];
  let plain = true;
  collectPipe(value, (leaf) => {
    if (leaf.kind !== 'ident' || leaf.name === undefined) return;
    if (/^[A-Z]/.test(leaf.name)) plain = false;
    values.push({ name: leaf.name, location: { file, line: leaf.line, col: leaf.col } });
  });
  return plain && values.length >= 2 ? values : undefined;
}

/** Binding → entity for one rule: `x: E.…` trigger bindings and `E(x)` calls where `E` has a status enum. */
function bindingTypes(rule: NamedBlock, machines: ReadonlyMap<string, StatusMachine>): Map<string, string> {
  const types = new Map<string, string>();
  const visit = (value: Expr): void => {
    if (value.kind === 'binding' && value.name !== undefined) {
      const entity = firstEntityMember(value.kids[0], machines);
      if (entity !== undefined) types.set(value.name, entity);
    } else if (value.kind === 'call') {
      const callee = value.kids[0]?.name;
      if (callee === undefined || !machines.has(callee)) return;
      for (const arg of value.kids.slice(1))
        if (arg.kind === 'ident' && arg.name !== undefined) types.set(arg.name, callee);
    } else if (value.kind === 'binary' && value.op === 'or') value.kids.forEach(visit);
  };
  for (const clause of clausesOf(rule.items, 'when')) visit(clause.value);
  return types;
}

function firstEntityMember(
  expr: Expr | undefined,
  machines: ReadonlyMap<string, StatusMachine>,
): string | undefined {
  let found: string | undefined;
  if (expr !== undefined) {
    walkExpr(expr, (e) => {
      const member = simpleMember(e);
      if (found === undefined && member !== undefined && machines.has(member[0])) found = member[0];
    });
  }
  return found;
}

const lowerNameCache = new WeakMap<ReadonlyMap<string, StatusMachine>, Map<string, string>>();

/** Lower-cased entity name → entity name, first declaration winning (computed once per machine map). */
function lowerNames(machines: ReadonlyMap<string, StatusMachine>): Map<string, string> {
  let names = lowerNameCache.get(machines);
  if (names === undefined) {
    names = new Map([...machines.keys()].reverse().map((name) => [name.toLowerCase(), name]));
    lowerNameCache.set(machines, names);
  }
  return names;
}

function resolveEntity(
  binding: string,
  types: ReadonlyMap<string, string>,
  machines: ReadonlyMap<string, StatusMachine>,
): string | undefined {
  const typed = types.get(binding);
  if (typed !== undefined) return typed;
  return lowerNames(machines).get(binding.toLowerCase());
}

/** `b.status` or `b.field.status` (through a field typed as a tracked entity) → `[binding key, entity]`. */
function statusSubject(
  expr: Expr | undefined,
  types: ReadonlyMap<string, string>,
  machines: ReadonlyMap<string, StatusMachine>,
): [string, string] | undefined {
  if (expr?.kind !== 'member' || expr.name !== 'status') return undefined;
  const direct = simpleMember(expr) === undefined ? undefined : expr.kids[0]?.name;
  if (direct !== undefined) {
    const entity = resolveEntity(direct, types, machines);
    return entity === undefined ? undefined : [direct, entity];
  }
  const inner = simpleMember(expr.kids[0]);
  if (inner === undefined) return undefined;
  const owner = resolveEntity(inner[0], types, machines);
  const entity = owner === undefined ? undefined : machines.get(owner)?.fieldTypes.get(inner[1]);
  return entity === undefined || !machines.has(entity) ? undefined : [`${inner[0]}.${inner[1]}`, entity];
}

function observeRule(
  rule: NamedBlock,
  machines: ReadonlyMap<string, StatusMachine>,
  observed: Observed,
): void {
  const types = bindingTypes(rule, machines);
  const sources = new Map<string, Set<string>>();
  for (const clause of clausesOf(rule.items, 'requires')) {
    visitRequires(
      clause.value,
      (binding, entity, states) => {
        const set = sources.get(binding) ?? new Set<string>();
        for (const state of states(machines.get(entity)?.valueSet ?? new Set())) set.add(state);
        sources.set(binding, set);
      },
      types,
      machines,
    );
  }
  for (const clause of clausesOf(rule.items, 'ensures')) {
    walkExpr(clause.value, (e) => {
      if (e.kind === 'binary' && e.op === '=') recordAssignment(e, types, machines, sources, observed);
      const created = createdEntity(e);
      if (created !== undefined && machines.has(created)) recordCreation(e, created, observed);
    });
  }
}

type StateSelector = (values: ReadonlySet<string>) => Iterable<string>;

function visitRequires(
  expr: Expr,
  found: (binding: string, entity: string, states: StateSelector) => void,
  types: ReadonlyMap<string, string>,
  machines: ReadonlyMap<string, StatusMachine>,
): void {
  if (expr.kind === 'block' || (expr.kind === 'binary' && (expr.op === 'and' || expr.op === 'or'))) {
    for (const kid of expr.kids) visitRequires(kid, found, types, machines);
    return;
  }
  if (expr.kind !== 'binary') return;
  const subject = statusSubject(expr.kids[0], types, machines);
  const named = namesOf(expr.kids[1]);
  if (subject === undefined || named === undefined) return;
  const [binding, entity] = subject;
  if (expr.op === '=' || expr.op === 'in') found(binding, entity, () => named);
  if (expr.op === '!=' || expr.op === 'not in')
    found(binding, entity, (all) => [...all].filter((v) => !named.includes(v)));
}

/** The state names on the right of `= s`, `in {a, b}`. */
function namesOf(expr: Expr | undefined): string[] | undefined {
  if (expr?.kind === 'ident' && expr.name !== undefined) return [expr.name];
  if (expr?.kind === 'set' || expr?.kind === 'list')
    return expr.kids.flatMap((kid) => (kid.kind === 'ident' && kid.name ? [kid.name] : []));
  return undefined;
}

function recordAssignment(
  e: Expr,
  types: ReadonlyMap<string, string>,
  machines: ReadonlyMap<string, StatusMachine>,
  sources: ReadonlyMap<string, ReadonlySet<string>>,
  observed: Observed,
): void {
  const subject = statusSubject(e.kids[0], types, machines);
  const target = e.kids[1]?.kind === 'ident' ? e.kids[1].name : undefined;
  if (subject === undefined || target === undefined) return;
  const [binding, entity] = subject;
  addTo(observed.assigned, entity, target);
  const from = sources.get(binding);
  if (from === undefined) return;
  const perEntity = observed.transitions.get(entity) ?? new Map<string, Set<string>>();
  for (const state of from) addTo(perEntity, state, target);
  observed.transitions.set(entity, perEntity);
}

function recordCreation(call: Expr, entity: string, observed: Observed): void {
  for (const arg of call.kids.slice(1)) {
    const value = arg.kids[0];
    if (arg.kind === 'arg' && arg.name === 'status' && value?.kind === 'ident' && value.name)
      addTo(observed.assigned, entity, value.name);
  }
}

function addTo(map: Map<string, Set<string>>, key: string, value: string): void {
  const set = map.get(key) ?? new Set<string>();
  set.add(value);
  map.set(key, set);
}

function judgeMachine(machine: StatusMachine, observed: Observed, file: string): Diagnostic[] {
  const assigned = observed.assigned.get(machine.entity) ?? new Set<string>();
  // An assigned name outside the enum is a variable: it may be any value, so the reference judges nothing.
  if ([...assigned].some((value) => !machine.valueSet.has(value))) return [];
  const transitions = observed.transitions.get(machine.entity) ?? new Map<string, Set<string>>();
  const diagnostics: Diagnostic[] = [];
  const warn = (code: string, at: Ident, message: string): void => {
    diagnostics.push({ code, severity: 'warning', message, location: at.location });
  };
  for (const value of machine.values) {
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
  return diagnostics.map((d) => ({ ...d, location: { ...d.location, file } }));
}
