import { forEachKid, kidCount, kidsOf, type BlockItem, type Expr } from './ast.js';
import type { SourceLocation } from './diagnostic.js';
import type { LineIndex } from './line-index.js';
import { triggerCalls, triggerParameterName } from './triggers.js';
import { clausesOf, type NamedBlock } from './spec-index.js';
import { calleeName, createdEntity, forEachItemExpr, isDotMember, walkExpr } from './walk.js';

/** How a rule fires (the language reference's trigger kinds). */
export type TriggerKind =
  'external' | 'state_transition' | 'becomes' | 'temporal' | 'derived' | 'creation' | 'chained';

/** One trigger of a rule; `A(x) or B(x)` gives two. */
export interface TriggerInfo {
  readonly kind: TriggerKind;
  /** The trigger name for external and chained triggers. */
  readonly name?: string;
  readonly binding?: string;
  readonly entity?: string;
  readonly field?: string;
  /** The target value of `transitions_to`/`becomes`. */
  readonly value?: string;
  /** Positional trigger parameters (external/chained). */
  readonly params?: readonly string[];
  readonly location: SourceLocation;
}

/** An `Entity.field` a rule reads or writes, where it does so, and the value written when it is a plain name. */
export interface FieldAccess {
  readonly entity: string;
  readonly field: string;
  readonly value?: string;
  readonly location: SourceLocation;
}

/** An entity a rule creates (with the fields its arguments set) or removes (`not exists x`). */
export interface EntityAccess {
  readonly entity: string;
  readonly fields: readonly { readonly field: string; readonly value?: string }[];
  readonly location: SourceLocation;
}

/** A rule as data: what fires it, what it reads, writes, creates, removes and emits. */
export interface RuleInfo {
  readonly name: string;
  readonly location: SourceLocation;
  readonly triggers: readonly TriggerInfo[];
  readonly reads: readonly FieldAccess[];
  readonly writes: readonly FieldAccess[];
  readonly creates: readonly EntityAccess[];
  readonly removes: readonly EntityAccess[];
  readonly emits: readonly { readonly name: string; readonly location: SourceLocation }[];
}

/** What the rule extractor needs to know about the whole check set. */
export interface RuleContext {
  readonly file: string;
  /** Where the lines of that file start (the locations of its expressions). */
  readonly lines: LineIndex;
  /** Declared entity and variant names. */
  readonly entities: ReadonlySet<string>;
  /** Lower-cased entity name → entity name (a binding named like an entity stands for it). */
  readonly entitiesByLowerName: ReadonlyMap<string, string>;
  /** Entity → field → entity type, for navigation like `loan.book.status`. */
  readonly fieldTypes: ReadonlyMap<string, ReadonlyMap<string, string>>;
  /** Entity → names of its derived values. */
  readonly derived: ReadonlyMap<string, ReadonlySet<string>>;
  /** Trigger name → entity types of its positional parameters, from surfaces that provide it. */
  readonly paramTypes: ReadonlyMap<string, readonly (string | undefined)[]>;
  /** Trigger names some rule emits (these triggers are `chained`). */
  readonly emitted: ReadonlySet<string>;
}

/** Extracts the {@link RuleInfo} of one rule declaration. */
export function extractRule(rule: NamedBlock, context: RuleContext): RuleInfo {
  const loc = (e: Expr): SourceLocation => context.lines.location(context.file, e.start);
  const whenValues = clausesOf(rule.items, 'when').map((clause) => clause.value);
  const triggers = whenValues.flatMap((value) => classifyTrigger(value, context, loc));
  const types = bindingTypes(rule, triggers, context);
  const resolve = (expr: Expr | undefined): { entity: string; field: string } | undefined =>
    resolveField(expr, types, context);
  const reads: FieldAccess[] = [];
  const readFrom = (expr: Expr): void =>
    walkExpr(expr, (e) => {
      const field = resolve(e);
      if (field !== undefined) reads.push({ ...field, location: loc(e) });
    });
  whenValues.forEach(readFrom);
  clausesOf(rule.items, 'requires').forEach((clause) => readFrom(clause.value));
  const effects = collectEffects(rule.items, resolve, types, context, loc);
  return { name: rule.name.name, location: rule.name.location, triggers, reads, ...effects };
}

function classifyTrigger(value: Expr, context: RuleContext, loc: (e: Expr) => SourceLocation): TriggerInfo[] {
  if (value.kind !== 'binding') {
    return triggerCalls(value).map((call) => {
      const name = calleeName(call) ?? '';
      const params = kidsOf(call)
        .slice(1)
        .map((arg) => triggerParameterName(arg) ?? '_');
      return { kind: context.emitted.has(name) ? 'chained' : 'external', name, params, location: loc(call) };
    });
  }
  const binding = value.name ?? '';
  const inner = value.a;
  if (inner === undefined) return [];
  const base = { binding, location: loc(inner) };
  if (inner.kind === 'binary' && (inner.op === 'transitions_to' || inner.op === 'becomes')) {
    const subject = memberOf(inner.a);
    const target = inner.b?.name;
    const kind = inner.op === 'becomes' ? 'becomes' : 'state_transition';
    return [{ kind, ...base, ...(subject ?? {}), ...(target === undefined ? {} : { value: target }) }];
  }
  if (isDotMember(inner) && inner.name === 'created') {
    return [{ kind: 'creation', ...base, entity: inner.a?.name ?? '' }];
  }
  if (inner.kind === 'binary' && ['<=', '<', '>=', '>'].includes(inner.op ?? '') && inner.b?.kind === 'now') {
    return [{ kind: 'temporal', ...base, ...(firstMember(inner.a) ?? {}) }];
  }
  return [{ kind: 'derived', ...base, ...(firstMember(inner) ?? {}) }];
}

/** `E.f` → `{ entity: E, field: f }` when the object is a PascalCase name. */
function memberOf(expr: Expr | undefined): { entity: string; field: string } | undefined {
  const object = expr?.kind === 'member' ? expr.a : undefined;
  if (object?.kind !== 'ident' || object.name === undefined || expr?.name === undefined) return undefined;
  return /^[A-Z]/.test(object.name) ? { entity: object.name, field: expr.name } : undefined;
}

function firstMember(expr: Expr | undefined): { entity: string; field: string } | undefined {
  let found: { entity: string; field: string } | undefined;
  if (expr !== undefined) walkExpr(expr, (e) => (found ??= memberOf(e)));
  return found;
}

/** Binding name → entity: trigger bindings, surface-typed trigger parameters, loop variables and join lookups. */
function bindingTypes(
  rule: NamedBlock,
  triggers: readonly TriggerInfo[],
  context: RuleContext,
): Map<string, string> {
  const types = new Map<string, string>();
  for (const trigger of triggers) {
    if (trigger.binding !== undefined && trigger.entity !== undefined)
      types.set(trigger.binding, trigger.entity);
    const typed = trigger.name === undefined ? undefined : context.paramTypes.get(trigger.name);
    trigger.params?.forEach((param, i) => {
      const entity = typed?.[i];
      if (entity !== undefined) types.set(param, entity);
    });
  }
  const visit = (items: readonly BlockItem[]): void => {
    for (const item of items) {
      if (
        item.kind === 'for' &&
        item.collection.kind === 'ident' &&
        context.entities.has(item.collection.name ?? '')
      ) {
        for (const name of item.bindings) types.set(name, item.collection.name ?? '');
      }
      if (item.kind === 'let') noteLet(item.name.name, item.value, context, types);
      forEachItemExpr(item, (expr) =>
        walkExpr(expr, (e) => {
          if (e.kind === 'let' && e.name !== undefined && e.a !== undefined)
            noteLet(e.name, e.a, context, types);
        }),
      );
      if (item.kind === 'for') visit(item.items);
      if (item.kind === 'if') [...item.branches.map((b) => b.items), item.elseItems ?? []].forEach(visit);
    }
  };
  visit(rule.items);
  return types;
}

function noteLet(name: string, value: Expr, context: RuleContext, types: Map<string, string>): void {
  const entity = value.kind === 'join' ? value.a?.name : undefined;
  if (entity !== undefined && context.entities.has(entity)) types.set(name, entity);
}

/** The entity a binding stands for: its recorded type, else the entity whose name matches it ignoring case. */
function entityOf(
  name: string,
  types: ReadonlyMap<string, string>,
  context: RuleContext,
): string | undefined {
  const typed = types.get(name);
  if (typed !== undefined) return typed;
  if (/^[A-Z]/.test(name)) return undefined;
  const capitalised =
    name.charAt(0).toUpperCase() + name.slice(1).replace(/_(\w)/g, (_, c: string) => c.toUpperCase());
  if (context.entities.has(capitalised)) return capitalised;
  return context.entitiesByLowerName.get(name.toLowerCase());
}

/** `x.f` or `x.g.f` (navigating entity-typed fields) → the entity and field accessed. */
function resolveField(
  expr: Expr | undefined,
  types: ReadonlyMap<string, string>,
  context: RuleContext,
): { entity: string; field: string } | undefined {
  if (expr?.kind !== 'member' || expr.name === undefined) return undefined;
  const object = expr.a;
  if (object?.kind === 'ident' && object.name !== undefined) {
    const entity = entityOf(object.name, types, context);
    return entity === undefined ? undefined : { entity, field: expr.name };
  }
  const owner = resolveField(object, types, context);
  const entity = owner === undefined ? undefined : context.fieldTypes.get(owner.entity)?.get(owner.field);
  return entity === undefined ? undefined : { entity, field: expr.name };
}

function collectEffects(
  items: readonly BlockItem[],
  resolve: (expr: Expr | undefined) => { entity: string; field: string } | undefined,
  types: ReadonlyMap<string, string>,
  context: RuleContext,
  loc: (e: Expr) => SourceLocation,
): Pick<RuleInfo, 'writes' | 'creates' | 'removes' | 'emits'> {
  const effects = {
    writes: [] as FieldAccess[],
    creates: [] as EntityAccess[],
    removes: [] as EntityAccess[],
    emits: [] as RuleInfo['emits'][number][],
  };
  const statement = (e: Expr): void => {
    if (e.kind === 'block') forEachKid(e, statement);
    else if (e.kind === 'if')
      forEachKid(e, (kid, i) => (i % 2 === 1 || i === kidCount(e) - 1) && statement(kid));
    else if (e.kind === 'for') statement(e.rest[0] ?? e);
    else if (e.kind === 'binary' && e.op === '=') {
      const target = resolve(e.a);
      const value = e.b?.kind === 'ident' ? e.b.name : undefined;
      if (target !== undefined)
        effects.writes.push({ ...target, ...(value === undefined ? {} : { value }), location: loc(e) });
    } else if (
      e.kind === 'unary' &&
      (e.op === 'not exists' || (e.op === 'not' && e.a?.kind === 'unary' && e.a.op === 'exists'))
    ) {
      const subject = e.op === 'not exists' ? e.a : e.a?.a;
      const entity =
        subject?.kind === 'ident' && subject.name !== undefined
          ? entityOf(subject.name, types, context)
          : undefined;
      if (entity !== undefined) effects.removes.push({ entity, fields: [], location: loc(e) });
    } else if (e.kind === 'call') call(e);
  };
  const call = (e: Expr): void => {
    const created = createdEntity(e);
    const name = calleeName(e);
    if (created !== undefined) {
      const fields = kidsOf(e)
        .slice(1)
        .flatMap((arg) =>
          arg.kind === 'arg' && arg.name !== undefined
            ? [
                {
                  field: arg.name,
                  ...(arg.a?.kind === 'ident' && arg.a.name ? { value: arg.a.name } : {}),
                },
              ]
            : [],
        );
      effects.creates.push({ entity: created, fields, location: loc(e) });
    } else if (name !== undefined && /^[A-Z]/.test(name) && !context.entities.has(name)) {
      effects.emits.push({ name, location: loc(e) });
    }
  };
  for (const clause of clausesOf(items, 'ensures')) statement(clause.value);
  return effects;
}

/** Per-rule dependencies in the reference `plan` vocabulary (entity names sorted, duplicates removed). */
export interface RuleDependencies {
  readonly entitiesRead: readonly string[];
  readonly entitiesWritten: readonly string[];
  readonly entitiesCreated: readonly string[];
  readonly entitiesRemoved: readonly string[];
  readonly triggerEmissions: readonly string[];
  /** The reference's coarser trigger kinds: `becomes` counts as `state_transition`, `derived` as `external`. */
  readonly triggerSource: 'external' | 'state_transition' | 'temporal' | 'creation' | 'chained';
}

const uniqueSorted = (names: readonly string[]): string[] => [...new Set(names)].sort();

/** The {@link RuleDependencies} of a rule. The trigger's entity counts as read, as it does for the reference. */
export function ruleDependencies(rule: RuleInfo): RuleDependencies {
  const first = rule.triggers[0];
  const source = first?.kind ?? 'external';
  const triggerSource =
    source === 'becomes' ? 'state_transition' : source === 'derived' ? 'external' : source;
  return {
    entitiesRead: uniqueSorted([
      ...rule.reads.map((r) => r.entity),
      ...rule.triggers.flatMap((t) => (t.entity === undefined || t.kind === 'creation' ? [] : [t.entity])),
    ]),
    entitiesWritten: uniqueSorted(rule.writes.map((w) => w.entity)),
    entitiesCreated: uniqueSorted(rule.creates.map((c) => c.entity)),
    entitiesRemoved: uniqueSorted(rule.removes.map((r) => r.entity)),
    triggerEmissions: uniqueSorted(rule.emits.map((e) => e.name)),
    triggerSource,
  };
}
