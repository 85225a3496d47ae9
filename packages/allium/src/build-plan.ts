import {
  ARITHMETIC_OPS,
  COMPARISON_OPS,
  kidsOf,
  LOGICAL_OPS,
  MEMBERSHIP_OPS,
  type BlockItem,
  type Declaration,
  type Expr,
  type ParsedSpec,
  type Span,
} from './ast.js';
import { isDerived } from './build-model.js';
import type { Diagnostic } from './diagnostic.js';
import { isDotMember, isPlainIdent } from './walk.js';

/** The 24 obligation categories of the reference `allium plan`. */
export type ObligationCategory =
  | 'entity_fields'
  | 'entity_optional'
  | 'entity_relationship'
  | 'value_equality'
  | 'enum_comparable'
  | 'sum_type_variant'
  | 'derived'
  | 'projection'
  | 'config_default'
  | 'invariant'
  | 'rule_success'
  | 'rule_failure'
  | 'rule_entity_creation'
  | 'transition_edge'
  | 'transition_rejected'
  | 'transition_terminal'
  | 'when_presence'
  | 'when_set'
  | 'when_clear'
  | 'temporal'
  | 'surface_exposure'
  | 'surface_provides'
  | 'surface_actor'
  | 'contract_signature';

/** How a rule is set off, as the reference classifies its `when` clause. */
export type TriggerSource = 'external' | 'state_transition' | 'temporal' | 'creation' | 'chained';

/** Per-rule dependencies, on rule obligations only; empty lists are omitted as the reference omits them. */
export interface PlanDependencies {
  entities_read?: string[];
  entities_written?: string[];
  entities_created?: string[];
  entities_removed?: string[];
  deferred_specs?: string[];
  trigger_emissions?: string[];
  trigger_source: TriggerSource;
}

/** Category-specific detail (the reference's untagged shapes). */
export type ObligationDetail =
  | { fields: string[] }
  | { entity: string; field: string; from: string; to: string }
  | { entity: string; field: string; states: string[] }
  | { entity: string; field: string; status_field: string; qualifying_states: string[] }
  | {
      rule: string;
      entity: string;
      field: string;
      source_state: string;
      target_state: string;
      qualifying_states: string[];
    }
  | { surface: string; items: string[] };

/** One test that should exist, derived mechanically from a spec construct. */
export interface Obligation {
  id: string;
  category: ObligationCategory;
  description: string;
  /** The entity, rule, surface, … the obligation comes from (`Entity.field` for field-level ones). */
  source_construct: string;
  /** The invariant's expression as written, on invariant obligations. */
  expression?: string;
  /** UTF-8 byte offsets into the file, as the reference reports them. */
  source_span: { start: number; end: number };
  detail?: ObligationDetail;
  dependencies?: PlanDependencies;
}

/** The test plan of one file, field for field the reference CLI's `allium plan` JSON. */
export interface TestPlan {
  version: number | null;
  obligations: Obligation[];
  diagnostics: Diagnostic[];
}

type Block = Extract<Declaration, { kind: 'block' }>;

interface ModuleContext {
  readonly entityNames: ReadonlySet<string>;
  readonly deferredNames: ReadonlySet<string>;
  readonly emittedTriggers: ReadonlySet<string>;
}

/**
 * Derives the test obligations of a parsed file, as the reference `allium plan` does: per entity (fields,
 * optional fields, relationships, projections, derived values, `when` presence, transition graphs, invariants),
 * value type, enum, rule (success, one failure per `requires`, temporal triggers, entity creation, with the rule's
 * dependencies), surface, config parameter, contract signature, variant and top-level invariant, then the
 * presence/absence obligations of rules whose transition crosses a field's `when` set. Only parse diagnostics are
 * included; the checker's analysis does not run.
 */
export function buildPlan(spec: ParsedSpec): TestPlan {
  const toBytes = byteOffsets(spec.source);
  const obligations: Obligation[] = [];
  const push = (o: Omit<Obligation, 'source_span'>, span: Span): void => {
    obligations.push({ ...o, source_span: { start: toBytes(span.start), end: toBytes(span.end) } });
  };
  const ctx = moduleContext(spec.declarations);
  for (const declaration of spec.declarations) {
    if (declaration.kind === 'variant') {
      const name = declaration.name.name;
      const description = `Verify variant ${name} has its specific fields accessible within a type guard`;
      push(
        { id: `sum-type-variant.${name}`, category: 'sum_type_variant', description, source_construct: name },
        declaration.span,
      );
    } else if (declaration.kind === 'invariant') {
      const name = declaration.name.name;
      push(
        {
          id: `invariant.${name}`,
          category: 'invariant',
          description: `Verify invariant ${name} holds after every state-changing rule that touches constrained entities`,
          source_construct: name,
          expression: bodyText(spec.source, declaration.body),
        },
        declaration.span,
      );
    } else if (declaration.kind === 'block') {
      emitBlock(declaration, spec.source, ctx, push);
    }
  }
  emitWhenCrossings(spec.declarations, push);
  return {
    version: spec.version ?? null,
    obligations,
    diagnostics: spec.diagnostics.filter((d) => d.code === null),
  };
}

type Push = (o: Omit<Obligation, 'source_span'>, span: Span) => void;

function emitBlock(block: Block, source: string, ctx: ModuleContext, push: Push): void {
  switch (block.block) {
    case 'entity':
    case 'external entity':
      emitEntity(block, source, push);
      return;
    case 'value':
      emitValue(block, push);
      return;
    case 'enum': {
      const name = block.name?.name ?? '';
      const description = `Verify fields typed with enum ${name} are comparable`;
      push(
        { id: `enum-comparable.${name}`, category: 'enum_comparable', description, source_construct: name },
        block.span,
      );
      return;
    }
    case 'rule':
      emitRule(block, ctx, push);
      return;
    case 'surface':
      emitSurface(block, push);
      return;
    case 'config':
      for (const item of block.items) {
        if (!isAssignment(item)) continue;
        const name = item.name.name;
        push(
          {
            id: `config-default.${name}`,
            category: 'config_default',
            description: `Verify config parameter ${name} has its declared default`,
            source_construct: `config.${name}`,
          },
          item,
        );
      }
      return;
    case 'contract': {
      const name = block.name?.name ?? '';
      for (const item of block.items) {
        if (!isAssignment(item)) continue;
        const signature = item.name.name;
        push(
          {
            id: `contract-signature.${name}.${signature}`,
            category: 'contract_signature',
            description: `Verify implementation satisfies contract ${name}.${signature}`,
            source_construct: `${name}.${signature}`,
          },
          item,
        );
      }
      return;
    }
    default:
      return;
  }
}

type FieldItem = Extract<BlockItem, { kind: 'field' }>;

/** A plain `name: value` item (the reference's assignment): no parameters, no `Owner.field` path, no `when`. */
function isAssignment(item: BlockItem): item is FieldItem {
  return (
    item.kind === 'field' && item.params === undefined && item.path === undefined && item.when === undefined
  );
}

function emitEntity(block: Block, source: string, push: Push): void {
  const name = block.name?.name ?? '';
  const fields: string[] = [];
  const optional: string[] = [];
  const relationships: string[] = [];
  const projections: string[] = [];
  const derived: string[] = [];
  for (const item of block.items) {
    if (item.kind === 'field' && item.params === undefined && item.path === undefined) {
      const field = item.name.name;
      fields.push(field);
      if (item.value.kind === 'optional') optional.push(field);
      if (item.when !== undefined) {
        const states = item.when.states.map((s) => s.name);
        push(
          {
            id: `when-presence.${name}.${field}`,
            category: 'when_presence',
            description: `Verify ${name}.${field} is present when ${item.when.field} in {${states.join(', ')}} and absent otherwise`,
            source_construct: `${name}.${field}`,
            detail: { entity: name, field, status_field: item.when.field, qualifying_states: states },
          },
          item,
        );
        continue;
      }
      if (isBinary(item.value, 'with')) relationships.push(field);
      if (isBinary(item.value, 'where')) projections.push(field);
      if (isDerived(item.value)) derived.push(field);
    } else if (item.kind === 'transitions') {
      emitTransitions(name, item, push);
    } else if (item.kind === 'invariant') {
      push(
        {
          id: `invariant.${name}.${item.name.name}`,
          category: 'invariant',
          description: `Verify invariant ${item.name.name} holds after any field mutation on ${name}`,
          source_construct: `${name}.${item.name.name}`,
          expression: bodyText(source, item.body),
        },
        item,
      );
    }
  }
  pushFields(name, fields, block.span, push);
  const perField = (
    list: readonly string[],
    category: ObligationCategory,
    prefix: string,
    describe: (field: string) => string,
  ): void => {
    for (const field of list) {
      push(
        {
          id: `${prefix}.${name}.${field}`,
          category,
          description: describe(field),
          source_construct: `${name}.${field}`,
        },
        block.span,
      );
    }
  };
  perField(
    optional,
    'entity_optional',
    'entity-optional',
    (f) => `Verify optional field ${name}.${f} accepts null and non-null values`,
  );
  perField(
    relationships,
    'entity_relationship',
    'entity-relationship',
    (f) => `Verify relationship ${name}.${f} navigates to the correct related entities`,
  );
  perField(
    projections,
    'projection',
    'projection',
    (f) => `Verify projection ${name}.${f} filters correctly`,
  );
  perField(derived, 'derived', 'derived', (f) => `Verify derived value ${name}.${f} computes correctly`);
}

function emitTransitions(
  entity: string,
  graph: Extract<BlockItem, { kind: 'transitions' }>,
  push: Push,
): void {
  const field = graph.field.name;
  const construct = `${entity}.${field}`;
  for (const edge of graph.edges) {
    const from = edge.from.name;
    const to = edge.to.name;
    push(
      {
        id: `transition-edge.${entity}.${from}.${to}`,
        category: 'transition_edge',
        description: `Verify transition ${from} -> ${to} on ${construct} is reachable via a witnessing rule`,
        source_construct: construct,
        detail: { entity, field, from, to },
      },
      edge.span,
    );
  }
  push(
    {
      id: `transition-rejected.${construct}`,
      category: 'transition_rejected',
      description: `Verify undeclared transitions on ${construct} are rejected`,
      source_construct: construct,
    },
    graph,
  );
  if (graph.terminal.length > 0) {
    push(
      {
        id: `transition-terminal.${construct}`,
        category: 'transition_terminal',
        description: `Verify terminal states on ${construct} have no outbound transitions`,
        source_construct: construct,
        detail: { entity, field, states: graph.terminal.map((t) => t.name) },
      },
      graph,
    );
  }
}

function emitValue(block: Block, push: Push): void {
  const name = block.name?.name ?? '';
  push(
    {
      id: `value-equality.${name}`,
      category: 'value_equality',
      description: `Verify value type ${name} has structural equality`,
      source_construct: name,
    },
    block.span,
  );
  const fields = block.items.filter(isAssignment).map((item) => item.name.name);
  pushFields(name, fields, block.span, push);
}

/** `entity-fields.N` for an entity or value type with at least one field. */
function pushFields(name: string, fields: string[], span: Span, push: Push): void {
  if (fields.length === 0) return;
  push(
    {
      id: `entity-fields.${name}`,
      category: 'entity_fields',
      description: `Verify all declared fields on ${name} are present with correct types`,
      source_construct: name,
      detail: { fields },
    },
    span,
  );
}

function emitSurface(block: Block, push: Push): void {
  const name = block.name?.name ?? '';
  push(
    {
      id: `surface-actor.${name}`,
      category: 'surface_actor',
      description: `Verify surface ${name} is accessible only to the specified actor`,
      source_construct: name,
    },
    block.span,
  );
  for (const item of block.items) {
    if (item.kind !== 'clause') continue;
    if (item.keyword === 'exposes') {
      const items: string[] = [];
      collectExposed(item.value, items);
      push(
        {
          id: `surface-exposure.${name}`,
          category: 'surface_exposure',
          description: `Verify each exposed item on ${name} is accessible`,
          source_construct: name,
          ...(items.length === 0 ? {} : { detail: { surface: name, items } }),
        },
        item,
      );
    } else if (item.keyword === 'provides') {
      push(
        {
          id: `surface-provides.${name}`,
          category: 'surface_provides',
          description: `Verify provided operations on ${name} appear/hide based on when conditions`,
          source_construct: name,
        },
        item,
      );
    }
  }
}

function collectExposed(expr: Expr, out: string[]): void {
  if (isDotMember(expr)) out.push(expr.name ?? '');
  else if (expr.kind === 'block') for (const kid of kidsOf(expr)) collectExposed(kid, out);
  else if (isBinary(expr, 'when')) collectExposed(expr.a as Expr, out);
}

// --- rules ---

function emitRule(block: Block, ctx: ModuleContext, push: Push): void {
  const name = block.name?.name ?? '';
  const dependencies = ruleDependencies(block.items, ctx);
  push(
    {
      id: `rule-success.${name}`,
      category: 'rule_success',
      description: `Verify rule ${name} succeeds when all preconditions are met`,
      source_construct: name,
      dependencies,
    },
    block.span,
  );
  const ordinals = { failure: 0, creation: 0 };
  const walk = (items: readonly BlockItem[]): void => {
    for (const item of items) {
      if (item.kind === 'for') walk(item.items);
      else if (item.kind === 'if') {
        for (const branch of item.branches) walk(branch.items);
        if (item.elseItems !== undefined) walk(item.elseItems);
      } else if (item.kind === 'clause') {
        const base = { source_construct: name, dependencies };
        if (item.keyword === 'requires') {
          ordinals.failure += 1;
          push(
            {
              ...base,
              id: `rule-failure.${name}.${ordinals.failure}`,
              category: 'rule_failure',
              description: `Verify rule ${name} is rejected when requires clause fails`,
            },
            item,
          );
        } else if (item.keyword === 'when') {
          if (containsTemporal(item.value)) {
            push(
              {
                ...base,
                id: `temporal.${name}`,
                category: 'temporal',
                description: `Verify temporal trigger in ${name} fires at deadline, not before, and does not re-fire`,
              },
              item,
            );
          }
          if (containsCreation(item.value)) {
            ordinals.creation += 1;
            push(
              {
                ...base,
                id: `rule-entity-creation.${name}.${ordinals.creation}`,
                category: 'rule_entity_creation',
                description: `Verify entity creation in rule ${name} produces the specified fields`,
              },
              item,
            );
          }
        } else if (item.keyword === 'ensures' && containsCreation(item.value)) {
          ordinals.creation += 1;
          push(
            {
              ...base,
              id: `rule-entity-creation.${name}.${ordinals.creation}`,
              category: 'rule_entity_creation',
              description: `Verify entity creation in rule ${name} ensures clause produces the specified fields`,
            },
            item,
          );
        }
      }
    }
  };
  walk(block.items);
}

function moduleContext(declarations: readonly Declaration[]): ModuleContext {
  const entityNames = new Set<string>();
  const deferredNames = new Set<string>();
  const emittedTriggers = new Set<string>();
  for (const declaration of declarations) {
    if (declaration.kind === 'deferred') {
      deferredNames.add(deferredLeaf(declaration.path));
    } else if (declaration.kind === 'block') {
      if (declaration.block === 'entity' || declaration.block === 'external entity') {
        if (declaration.name !== undefined) entityNames.add(declaration.name.name);
      } else if (declaration.block === 'rule') {
        for (const item of declaration.items) {
          if (item.kind === 'clause' && item.keyword === 'ensures')
            collectEmissions(item.value, undefined, emittedTriggers);
        }
      }
    }
  }
  return { entityNames, deferredNames, emittedTriggers };
}

/** The last name of a deferred path: `Foo.bar.baz` → `baz`, `alias/Foo` → `Foo`. */
function deferredLeaf(path: string): string {
  const dot = path.lastIndexOf('.');
  if (dot >= 0) return path.slice(dot + 1);
  return path.slice(path.indexOf('/') + 1);
}

interface DependencySets {
  read: Set<string>;
  written: Set<string>;
  created: Set<string>;
  removed: Set<string>;
  deferred: Set<string>;
  emissions: Set<string>;
}

function ruleDependencies(items: readonly BlockItem[], ctx: ModuleContext): PlanDependencies {
  const sets: DependencySets = {
    read: new Set(),
    written: new Set(),
    created: new Set(),
    removed: new Set(),
    deferred: new Set(),
    emissions: new Set(),
  };
  let source: TriggerSource = 'external';
  for (const item of items) {
    if (item.kind === 'clause' && item.keyword === 'when') {
      source = triggerSource(item.value, ctx.emittedTriggers);
      collectEntityRefs(item.value, ctx.entityNames, sets.read);
      collectDeferred(item.value, ctx.deferredNames, sets.deferred);
    }
  }
  nestedDependencies(items, ctx, sets);
  const sorted = (set: Set<string>): string[] | undefined =>
    set.size === 0 ? undefined : [...set].sort(compareBytes);
  const result: PlanDependencies = { trigger_source: source };
  const entries: [keyof Omit<PlanDependencies, 'trigger_source'>, Set<string>][] = [
    ['entities_read', sets.read],
    ['entities_written', sets.written],
    ['entities_created', sets.created],
    ['entities_removed', sets.removed],
    ['deferred_specs', sets.deferred],
    ['trigger_emissions', sets.emissions],
  ];
  for (const [key, set] of entries) {
    const list = sorted(set);
    if (list !== undefined) result[key] = list;
  }
  return result;
}

/** `requires` and `ensures` clauses, at the top level and inside nested `for`/`if` items. */
function nestedDependencies(items: readonly BlockItem[], ctx: ModuleContext, sets: DependencySets): void {
  for (const item of items) {
    if (item.kind === 'clause' && item.keyword === 'requires') {
      collectEntityRefs(item.value, ctx.entityNames, sets.read);
      collectDeferred(item.value, ctx.deferredNames, sets.deferred);
    } else if (item.kind === 'clause' && item.keyword === 'ensures') {
      collectWritten(item.value, ctx.entityNames, sets.written);
      collectCreated(item.value, sets.created);
      collectRemoved(item.value, sets.removed);
      collectEmissions(item.value, ctx.entityNames, sets.emissions);
      collectDeferred(item.value, ctx.deferredNames, sets.deferred);
    } else if (item.kind === 'for') {
      nestedDependencies(item.items, ctx, sets);
    } else if (item.kind === 'if') {
      for (const branch of item.branches) nestedDependencies(branch.items, ctx, sets);
      if (item.elseItems !== undefined) nestedDependencies(item.elseItems, ctx, sets);
    }
  }
}

function triggerSource(expr: Expr, emitted: ReadonlySet<string>): TriggerSource {
  if (isBinary(expr, 'transitions_to') || isBinary(expr, 'becomes')) return 'state_transition';
  if (expr.kind === 'binding') return triggerSource(expr.a as Expr, emitted);
  if (expr.kind === 'block') {
    for (const kid of kidsOf(expr)) {
      const source = triggerSource(kid, emitted);
      if (source !== 'external') return source;
    }
    return 'external';
  }
  if (isComparison(expr)) return expr.b?.kind === 'now' ? 'temporal' : 'external';
  if (expr.kind === 'call') {
    const callee = expr.a as Expr;
    if (isDotMember(callee) && callee.name === 'created') return 'creation';
    if (isPlainIdent(callee) && emitted.has(callee.name ?? '')) return 'chained';
  }
  return 'external';
}

function containsTemporal(expr: Expr): boolean {
  if (isComparison(expr)) return expr.b?.kind === 'now';
  if (expr.kind === 'binding') return containsTemporal(expr.a as Expr);
  if (expr.kind === 'block') return kidsOf(expr).some(containsTemporal);
  return false;
}

function containsCreation(expr: Expr): boolean {
  if (expr.kind === 'call') {
    const callee = expr.a as Expr;
    return isDotMember(callee) && callee.name === 'created';
  }
  if (expr.kind === 'block') return kidsOf(expr).some(containsCreation);
  return false;
}

/** The argument expressions of a call (named arguments give their values). */
function callArgs(call: Expr): Expr[] {
  return kidsOf(call)
    .slice(1)
    .map((arg) => (arg.kind === 'arg' ? (arg.a as Expr) : arg));
}

/** Calls `visit` on the sub-expressions the reference's ensures walkers descend into. */
function ensuresChildren(expr: Expr, visit: (e: Expr) => void, throughBindings: boolean): void {
  if (expr.kind === 'block') for (const kid of kidsOf(expr)) visit(kid);
  else if (expr.kind === 'if') ifBodies(expr).forEach(visit);
  else if (expr.kind === 'for') visit(expr.rest[0] as Expr);
  else if (throughBindings && (expr.kind === 'binding' || expr.kind === 'let')) visit(expr.a as Expr);
}

/** The bodies of an `if` expression (kids alternate condition, body; an odd last kid is the else body). */
function ifBodies(expr: Expr): Expr[] {
  return kidsOf(expr).filter((_, i) => i % 2 === 1 || i === kidsOf(expr).length - 1);
}

/** Trigger emissions `Name(…)`: calls of a bare capitalised name (`exclude`: names that are entities). */
function collectEmissions(expr: Expr, exclude: ReadonlySet<string> | undefined, out: Set<string>): void {
  if (expr.kind === 'call') {
    const callee = expr.a as Expr;
    const name = callee.name ?? '';
    if (isPlainIdent(callee) && startsUpper(name) && exclude?.has(name) !== true) out.add(name);
    for (const arg of callArgs(expr)) collectEmissions(arg, exclude, out);
    return;
  }
  ensuresChildren(expr, (e) => collectEmissions(e, exclude, out), true);
}

function collectWritten(expr: Expr, entities: ReadonlySet<string>, out: Set<string>): void {
  if (isBinary(expr, '=')) {
    addResolved(expr.a as Expr, entities, out);
    return;
  }
  if (isBinary(expr, 'transitions_to') || isBinary(expr, 'becomes')) {
    addResolved(expr.a as Expr, entities, out);
    return;
  }
  ensuresChildren(expr, (e) => collectWritten(e, entities, out), true);
}

/** `Entity.f` or `entity.f` (the variable capitalised) → the entity, when it is declared. */
function addResolved(expr: Expr, entities: ReadonlySet<string>, out: Set<string>): void {
  if (!isDotMember(expr)) return;
  const object = expr.a as Expr;
  if (!isPlainIdent(object)) return;
  const name = object.name ?? '';
  if (entities.has(name)) out.add(name);
  else if (entities.has(capitalise(name))) out.add(capitalise(name));
}

function collectCreated(expr: Expr, out: Set<string>): void {
  if (expr.kind === 'call') {
    const callee = expr.a as Expr;
    if (isDotMember(callee) && callee.name === 'created') addCapitalisedObject(callee, out);
    for (const arg of callArgs(expr)) collectCreated(arg, out);
    return;
  }
  ensuresChildren(expr, (e) => collectCreated(e, out), true);
}

function collectRemoved(expr: Expr, out: Set<string>): void {
  if (expr.kind === 'call') {
    const callee = expr.a as Expr;
    if (isDotMember(callee) && (callee.name === 'remove' || callee.name === 'removed'))
      addCapitalisedObject(callee, out);
    return;
  }
  ensuresChildren(expr, (e) => collectRemoved(e, out), false);
}

function addCapitalisedObject(member: Expr, out: Set<string>): void {
  const object = member.a as Expr;
  if (isPlainIdent(object) && startsUpper(object.name ?? '')) out.add(object.name ?? '');
}

function collectDeferred(expr: Expr, deferred: ReadonlySet<string>, out: Set<string>): void {
  const recurse = (e: Expr | undefined): void => {
    if (e !== undefined && e.kind !== 'empty') collectDeferred(e, deferred, out);
  };
  switch (expr.kind) {
    case 'call': {
      const callee = expr.a as Expr;
      if (isPlainIdent(callee) && deferred.has(callee.name ?? '')) out.add(callee.name ?? '');
      callArgs(expr).forEach(recurse);
      return;
    }
    case 'ident':
      if (isPlainIdent(expr) && deferred.has(expr.name ?? '')) out.add(expr.name ?? '');
      return;
    case 'block':
      kidsOf(expr).forEach(recurse);
      return;
    case 'binding':
    case 'let':
      recurse(expr.a);
      return;
    case 'if':
    case 'for':
      kidsOf(expr).forEach(recurse);
      return;
    case 'binary':
      if (isComparison(expr) || LOGICAL.has(expr.op ?? '') || ARITHMETIC.has(expr.op ?? ''))
        kidsOf(expr).forEach(recurse);
      return;
    case 'unary':
      if (expr.op === 'not') recurse(expr.a);
      return;
    case 'member':
      if (expr.op === '.') recurse(expr.a);
      return;
    default:
      return;
  }
}

/** Binary operators whose two sides the reference's entity-reference walk visits. */
const TWO_SIDED = new Set([
  ...COMPARISON_OPS,
  ...LOGICAL_OPS,
  ...ARITHMETIC_OPS,
  ...MEMBERSHIP_OPS,
  '??',
  'where',
  'with',
  '|',
  'transitions_to',
  'becomes',
  'when',
]);
const LOGICAL = new Set(LOGICAL_OPS);
const ARITHMETIC = new Set(ARITHMETIC_OPS);

/**
 * Entities a `when`/`requires` expression refers to: by name, or a variable whose capitalised name is one. With a
 * stack of its own rather than a call per level, so that a chain as long as the parser takes (`a or b or …`, up to
 * MAX_DEPTH links) cannot overflow it; kids are visited in order, as a recursive walk would.
 */
function collectEntityRefs(root: Expr, entities: ReadonlySet<string>, out: Set<string>): void {
  const stack: Expr[] = [root];
  const push = (kids: readonly (Expr | undefined)[]): void => {
    for (let i = kids.length - 1; i >= 0; i -= 1) {
      const kid = kids[i];
      if (kid !== undefined && kid.kind !== 'empty') stack.push(kid);
    }
  };
  for (let expr = stack.pop(); expr !== undefined; expr = stack.pop()) {
    switch (expr.kind) {
      case 'ident': {
        const name = identName(expr);
        if (entities.has(name)) out.add(name);
        break;
      }
      case 'member': {
        const object = expr.a as Expr;
        if (object.kind === 'ident' && isPlainIdent(object)) {
          const name = object.name ?? '';
          if (entities.has(name)) out.add(name);
          else if (entities.has(capitalise(name))) out.add(capitalise(name));
        } else push([object]);
        break;
      }
      // The last pushed is visited first: the callee's object before the arguments, the joined before its entries.
      case 'call': {
        const callee = expr.a as Expr;
        push(callArgs(expr));
        if (isDotMember(callee)) push([callee.a]);
        break;
      }
      case 'join':
        push(kidsOf(expr).map((entry, i) => (i > 0 && entry.kind === 'arg' ? entry.a : undefined)));
        push([expr.a]);
        break;
      case 'binary':
        if (expr.op === '->') push([expr.a]);
        else if (TWO_SIDED.has(expr.op ?? '')) push(kidsOf(expr));
        break;
      case 'unary':
      case 'optional':
      case 'binding':
      case 'let':
      case 'lambda':
        push([expr.a]);
        break;
      case 'block':
      case 'set':
      case 'if':
      case 'for':
      case 'generic':
        push(kidsOf(expr));
        break;
      case 'object':
        push(kidsOf(expr).map((entry) => (entry.kind === 'arg' ? entry.a : undefined)));
        break;
      default:
        break;
    }
  }
}

// --- presence/absence obligations of rules that cross a field's `when` set ---

type StateRef = readonly [object: string, field: string, value: string];

interface WhenEntity {
  readonly whenFields: { field: string; statusField: string; states: string[] }[];
  readonly edges: [string, string][];
  readonly states: string[];
}

function emitWhenCrossings(declarations: readonly Declaration[], push: Push): void {
  const entities = new Map<string, WhenEntity>();
  for (const declaration of declarations) {
    if (declaration.kind !== 'block') continue;
    if (declaration.block !== 'entity' && declaration.block !== 'external entity') continue;
    const name = declaration.name?.name ?? '';
    let info = entities.get(name);
    if (info === undefined) {
      info = { whenFields: [], edges: [], states: [] };
      entities.set(name, info);
    }
    for (const item of declaration.items) {
      if (
        item.kind === 'field' &&
        item.when !== undefined &&
        item.params === undefined &&
        item.path === undefined
      ) {
        info.whenFields.push({
          field: item.name.name,
          statusField: item.when.field,
          states: item.when.states.map((s) => s.name),
        });
      } else if (item.kind === 'transitions') {
        const addState = (state: string): void => {
          if (!info.states.includes(state)) info.states.push(state);
        };
        for (const edge of item.edges) {
          info.edges.push([edge.from.name, edge.to.name]);
          addState(edge.from.name);
          addState(edge.to.name);
        }
        for (const t of item.terminal) addState(t.name);
      }
    }
  }
  const withWhen = [...entities].filter(([, info]) => info.whenFields.length > 0);
  if (withWhen.length === 0) return;
  for (const declaration of declarations) {
    if (declaration.kind !== 'block' || declaration.block !== 'rule') continue;
    const rule = declaration.name?.name ?? '';
    const sources = requiresStates(declaration.items);
    const target = ensuresTarget(declaration.items);
    if (target === undefined) continue;
    const [targetObject, targetField, targetValue] = target;
    const hint = targetObject === '' ? undefined : capitaliseAscii(targetObject);
    for (const [entity, info] of withWhen) {
      if (hint !== undefined ? hint !== entity : !info.states.includes(targetValue)) continue;
      const entitySources = sources.filter(
        ([object, field]) => field === targetField && (object === '' || capitaliseAscii(object) === entity),
      );
      for (const wf of info.whenFields) {
        if (wf.statusField !== targetField) continue;
        const targetIn = wf.states.includes(targetValue);
        const set = wf.states.join(', ');
        const detail = (sourceState: string): ObligationDetail => ({
          rule,
          entity,
          field: wf.field,
          source_state: sourceState,
          target_state: targetValue,
          qualifying_states: wf.states,
        });
        if (entitySources.length > 0) {
          let presence = false;
          let absence = false;
          for (const [, , sourceValue] of entitySources) {
            if (!info.edges.some(([f, t]) => f === sourceValue && t === targetValue)) continue;
            const sourceIn = wf.states.includes(sourceValue);
            if (!sourceIn && targetIn && !presence) {
              presence = true;
              push(
                {
                  id: `when-set.${rule}.${entity}.${wf.field}`,
                  category: 'when_set',
                  description: `Verify rule ${rule} sets ${entity}.${wf.field} when transitioning ${wf.statusField} from ${sourceValue} to ${targetValue} (entering when set {${set}})`,
                  source_construct: rule,
                  detail: detail(sourceValue),
                },
                declaration.span,
              );
            } else if (sourceIn && !targetIn && !absence) {
              absence = true;
              push(
                {
                  id: `when-clear.${rule}.${entity}.${wf.field}`,
                  category: 'when_clear',
                  description: `Verify rule ${rule} clears ${entity}.${wf.field} when transitioning ${wf.statusField} from ${sourceValue} to ${targetValue} (leaving when set {${set}})`,
                  source_construct: rule,
                  detail: detail(sourceValue),
                },
                declaration.span,
              );
            }
          }
        } else if (targetIn && info.edges.some(([, t]) => t === targetValue)) {
          push(
            {
              id: `when-set.${rule}.${entity}.${wf.field}`,
              category: 'when_set',
              description: `Verify rule ${rule} sets ${entity}.${wf.field} when transitioning ${wf.statusField} to ${targetValue} (entering when set {${set}})`,
              source_construct: rule,
              detail: detail('unknown'),
            },
            declaration.span,
          );
        }
      }
    }
  }
}

/** The states the first `requires` clause pins: `x.f = s`, `x.f in {a, b}`, through `and`/`or`. */
function requiresStates(items: readonly BlockItem[]): StateRef[] {
  const first = items.find((item) => item.kind === 'clause' && item.keyword === 'requires');
  return first?.kind === 'clause' ? statesOf(first.value) : [];
}

function statesOf(expr: Expr): StateRef[] {
  const single = eqState(expr);
  if (single !== undefined) return [single];
  if (isBinary(expr, 'in')) {
    const [element, collection] = kidsOf(expr) as [Expr, Expr];
    if (!isDotMember(element) || !isPlainIdent(element.a as Expr)) return [];
    const object = (element.a as Expr).name ?? '';
    if (collection.kind !== 'set') return [];
    return kidsOf(collection)
      .filter(isPlainIdent)
      .map((e): StateRef => [object, element.name ?? '', e.name ?? '']);
  }
  if (expr.kind === 'binary' && LOGICAL.has(expr.op ?? '') && expr.op !== 'implies')
    return [...statesOf(expr.a as Expr), ...statesOf(expr.b as Expr)];
  return [];
}

/** `x.f = s` → (x, f, s); `f = s` → ('', f, s). */
function eqState(expr: Expr): StateRef | undefined {
  if (!isBinary(expr, '=')) return undefined;
  const [left, right] = kidsOf(expr) as [Expr, Expr];
  let object = '';
  let field: string;
  if (isDotMember(left)) {
    const owner = left.a as Expr;
    if (isPlainIdent(owner)) object = owner.name ?? '';
    field = left.name ?? '';
  } else if (isPlainIdent(left)) field = left.name ?? '';
  else return undefined;
  return isPlainIdent(right) ? [object, field, right.name ?? ''] : undefined;
}

/** The first `x.f = s` of the `ensures` clauses (as the clause itself or one item of its block). */
function ensuresTarget(items: readonly BlockItem[]): StateRef | undefined {
  for (const item of items) {
    if (item.kind !== 'clause' || item.keyword !== 'ensures') continue;
    const direct = eqState(item.value);
    if (direct !== undefined) return direct;
    if (item.value.kind === 'block') {
      for (const kid of kidsOf(item.value)) {
        const found = eqState(kid);
        if (found !== undefined) return found;
      }
    }
  }
  return undefined;
}

// --- expression helpers ---

function isBinary(expr: Expr, op: string): boolean {
  return expr.kind === 'binary' && expr.op === op;
}

const COMPARISONS = new Set(COMPARISON_OPS);

function isComparison(expr: Expr): boolean {
  return expr.kind === 'binary' && COMPARISONS.has(expr.op ?? '');
}

/** A bare identifier (an `alias/Name` is a qualified name, not an identifier, to the reference). */
/** The name an identifier or qualified name refers to (`alias/Name` → `Name`). */
function identName(expr: Expr): string {
  const name = expr.name ?? '';
  return name.slice(name.indexOf('/') + 1);
}

function startsUpper(name: string): boolean {
  return /^\p{Lu}/u.test(name);
}

function capitalise(name: string): string {
  const first = name.codePointAt(0);
  if (first === undefined) return '';
  const head = String.fromCodePoint(first);
  return head.toUpperCase() + name.slice(head.length);
}

/** Upper-cases an ASCII first letter only (the reference's entity hint for `when` crossings). */
function capitaliseAscii(name: string): string {
  return /^[a-z]/.test(name) ? (name[0] ?? '').toUpperCase() + name.slice(1) : name;
}

function compareBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/**
 * An invariant body as written: one expression, or from the first to the last of several (the span `parseBracedBody`
 * gives its block; an empty body spans its `}`, as the reference's does).
 */
function bodyText(source: string, body: Expr): string {
  return source.slice(body.start, body.end);
}

/** Maps string offsets to UTF-8 byte offsets (the identity for ASCII text). */
function byteOffsets(source: string): (offset: number) => number {
  if (/^[\x00-\x7f]*$/.test(source)) return (offset) => offset;
  const table = new Uint32Array(source.length + 1);
  let bytes = 0;
  for (let i = 0; i < source.length; i += 1) {
    table[i] = bytes;
    const code = source.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff) {
      bytes += 4;
      i += 1;
      table[i] = bytes;
    } else bytes += 3;
  }
  table[source.length] = bytes;
  return (offset) => table[Math.min(offset, source.length)] ?? bytes;
}
