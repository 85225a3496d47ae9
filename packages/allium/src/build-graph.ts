import { compareStrings } from './walk.js';
import type { SourceLocation } from './diagnostic.js';
import type { DependencyGraph, GraphEdge, GraphEdgeKind, GraphNode } from './graph-types.js';
import type { RuleInfo, TriggerInfo } from './rule-info.js';
import type { SurfaceBinding, SurfaceInfo } from './surface-info.js';

/** What the graph builder needs beyond rules and surfaces. */
export interface GraphInput {
  readonly rules: readonly RuleInfo[];
  readonly surfaces: readonly SurfaceInfo[];
  /** Declared entities (and variants) with their locations. */
  readonly entities: ReadonlyMap<string, SourceLocation>;
  /** The declared entities that are `external entity`. */
  readonly externalEntities: ReadonlySet<string>;
  /** Variant name → the base entity it extends (`variant V : Base`). */
  readonly variantBases: ReadonlyMap<string, { readonly base: string; readonly location: SourceLocation }>;
  /** Entity → derived value → the field names its expression mentions. */
  readonly derivedInputs: ReadonlyMap<string, ReadonlyMap<string, ReadonlySet<string>>>;
}

/** A value written to `Entity.field` (assignment or creation argument), by which rule and where. */
interface Write {
  readonly rule: RuleInfo;
  readonly entity: string;
  readonly field: string;
  readonly value?: string;
  readonly location: SourceLocation;
}

/**
 * Builds the dependency graph (ALLIUM.md §1.3): rule/entity/surface nodes; `trigger` edges (surface provides →
 * rule, emission → chained rule, creation → `created`/`becomes` triggers, assignment → `transitions_to`/`becomes`/
 * derived triggers, timestamp writer → temporal rule), `timeout` edges (surface → rule), `data` edges (a field
 * written by one rule and read in another's `requires`/`when`), and rule ↔ entity `reads`/`writes`/`creates`/
 * `removes` edges, `exposes` edges (entity → surface that binds it or exposes its fields) and `extends` edges
 * (base → variant). Entity names rules use without a declaration become `undeclared` context nodes, `external
 * entity` declarations `external` ones. Every edge carries the source locations of both ends. Deterministic: same
 * input, same output.
 */
export function buildGraph(input: GraphInput): DependencyGraph {
  const nodes = new Map<string, GraphNode>();
  const edges = new Map<string, GraphEdge>();
  const entityNode = (name: string, fallback: SourceLocation): string => {
    const id = `entity:${name}`;
    if (!nodes.has(id)) {
      const declared = input.entities.get(name);
      const context =
        declared === undefined ? 'undeclared' : input.externalEntities.has(name) ? 'external' : undefined;
      nodes.set(id, {
        id,
        kind: 'entity',
        name,
        location: declared ?? fallback,
        ...(context === undefined ? {} : { context }),
      });
    }
    return id;
  };
  for (const [name, location] of input.entities) entityNode(name, location);
  for (const rule of input.rules)
    nodes.set(`rule:${rule.name}`, {
      id: `rule:${rule.name}`,
      kind: 'rule',
      name: rule.name,
      location: rule.location,
    });
  for (const s of input.surfaces)
    nodes.set(`surface:${s.name}`, {
      id: `surface:${s.name}`,
      kind: 'surface',
      name: s.name,
      location: s.location,
    });
  const add = (
    from: string,
    to: string,
    kind: GraphEdgeKind,
    via: string,
    evidence: GraphEdge['evidence'],
  ): void => {
    const key = `${from}|${to}|${kind}|${via}`;
    if (from !== to && nodes.has(from) && nodes.has(to) && !edges.has(key))
      edges.set(key, { from, to, kind, via, evidence });
  };
  addEntityEdges(input.rules, entityNode, add);
  addTriggerEdges(input, add);
  addDataEdges(input.rules, add);
  addSurfaceAndVariantEdges(input, add);
  const order = (a: GraphEdge, b: GraphEdge): number =>
    compareStrings(a.from, b.from) ||
    compareStrings(a.to, b.to) ||
    compareStrings(a.kind, b.kind) ||
    compareStrings(a.via, b.via);
  return {
    nodes: [...nodes.values()].sort((a, b) => compareStrings(a.id, b.id)),
    edges: [...edges.values()].sort(order),
  };
}

type AddEdge = (
  from: string,
  to: string,
  kind: GraphEdgeKind,
  via: string,
  evidence: GraphEdge['evidence'],
) => void;

function addEntityEdges(
  rules: readonly RuleInfo[],
  entityNode: (name: string, at: SourceLocation) => string,
  add: AddEdge,
): void {
  for (const rule of rules) {
    const id = `rule:${rule.name}`;
    for (const read of rule.reads)
      add(entityNode(read.entity, read.location), id, 'reads', `${read.entity}.${read.field}`, {
        from: read.location,
        to: read.location,
      });
    for (const trigger of rule.triggers) {
      if (trigger.entity !== undefined)
        add(
          entityNode(trigger.entity, trigger.location),
          id,
          'reads',
          `${trigger.entity}.${trigger.field ?? '*'}`,
          { from: trigger.location, to: trigger.location },
        );
    }
    for (const write of rule.writes)
      add(id, entityNode(write.entity, write.location), 'writes', `${write.entity}.${write.field}`, {
        from: write.location,
        to: write.location,
      });
    for (const created of rule.creates)
      add(id, entityNode(created.entity, created.location), 'creates', created.entity, {
        from: created.location,
        to: created.location,
      });
    for (const removed of rule.removes)
      add(id, entityNode(removed.entity, removed.location), 'removes', removed.entity, {
        from: removed.location,
        to: removed.location,
      });
  }
}

/** Every field value a rule sets: assignments and creation arguments. */
function writesOf(rule: RuleInfo): Write[] {
  return [
    ...rule.writes.map((w) => ({
      rule,
      entity: w.entity,
      field: w.field,
      location: w.location,
      ...(w.value === undefined ? {} : { value: w.value }),
    })),
    ...rule.creates.flatMap((c) =>
      c.fields.map((f) => ({
        rule,
        entity: c.entity,
        field: f.field,
        location: c.location,
        ...(f.value === undefined ? {} : { value: f.value }),
      })),
    ),
  ];
}

function addTriggerEdges(input: GraphInput, add: AddEdge): void {
  const listeners = input.rules.flatMap((rule) => rule.triggers.map((trigger) => ({ rule, trigger })));
  const byName = groupBy(listeners, (l) => l.trigger.name);
  const byEntity = groupBy(listeners, (l) => l.trigger.entity);
  for (const surface of input.surfaces) {
    for (const provided of surface.provides) {
      for (const l of byName.get(provided.name) ?? [])
        add(`surface:${surface.name}`, `rule:${l.rule.name}`, 'trigger', provided.name, {
          from: provided.location,
          to: l.trigger.location,
        });
    }
    for (const timeout of surface.timeout) {
      const rule = input.rules.find((r) => r.name === timeout.rule);
      if (rule !== undefined)
        add(`surface:${surface.name}`, `rule:${rule.name}`, 'timeout', rule.name, {
          from: timeout.location,
          to: rule.location,
        });
    }
  }
  for (const rule of input.rules) {
    for (const emitted of rule.emits) {
      for (const l of byName.get(emitted.name) ?? [])
        add(`rule:${rule.name}`, `rule:${l.rule.name}`, 'trigger', emitted.name, {
          from: emitted.location,
          to: l.trigger.location,
        });
    }
    for (const created of rule.creates) {
      for (const l of byEntity.get(created.entity) ?? []) {
        if (l.trigger.kind === 'creation')
          add(`rule:${rule.name}`, `rule:${l.rule.name}`, 'trigger', `${created.entity}.created`, {
            from: created.location,
            to: l.trigger.location,
          });
      }
    }
    for (const write of writesOf(rule)) {
      for (const l of byEntity.get(write.entity) ?? []) {
        if (firesOn(l.trigger, write, input.derivedInputs)) {
          add(`rule:${rule.name}`, `rule:${l.rule.name}`, 'trigger', `${write.entity}.${write.field}`, {
            from: write.location,
            to: l.trigger.location,
          });
        }
      }
    }
  }
}

function groupBy<T>(items: readonly T[], key: (item: T) => string | undefined): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    if (k === undefined) continue;
    const list = groups.get(k) ?? [];
    list.push(item);
    groups.set(k, list);
  }
  return groups;
}

/** Whether setting `write` can fire `trigger`: a matching transition/becomes value, a derived input, a timestamp. */
function firesOn(
  trigger: TriggerInfo,
  write: Write,
  derivedInputs: ReadonlyMap<string, ReadonlyMap<string, ReadonlySet<string>>>,
): boolean {
  if (trigger.entity !== write.entity || trigger.field === undefined) return false;
  switch (trigger.kind) {
    case 'state_transition':
    case 'becomes':
      return (
        trigger.field === write.field &&
        (trigger.value === undefined || write.value === undefined || trigger.value === write.value)
      );
    case 'temporal':
      return trigger.field === write.field;
    case 'derived': {
      const inputs = derivedInputs.get(write.entity)?.get(trigger.field);
      return trigger.field === write.field || (inputs?.has(write.field) ?? false);
    }
    default:
      return false;
  }
}

function addDataEdges(rules: readonly RuleInfo[], add: AddEdge): void {
  const readers = new Map<string, { rule: RuleInfo; location: SourceLocation }[]>();
  for (const rule of rules) {
    for (const read of rule.reads) {
      const key = `${read.entity}.${read.field}`;
      const list = readers.get(key) ?? [];
      list.push({ rule, location: read.location });
      readers.set(key, list);
    }
  }
  for (const rule of rules) {
    for (const write of writesOf(rule)) {
      const key = `${write.entity}.${write.field}`;
      for (const reader of readers.get(key) ?? [])
        add(`rule:${rule.name}`, `rule:${reader.rule.name}`, 'data', key, {
          from: write.location,
          to: reader.location,
        });
    }
  }
}

/**
 * `exposes`: a surface depends on the entities it binds (`facing`/`context`) and on those whose fields it exposes
 * (`exposes: order.status` with `context order: Order`). `extends`: a variant depends on its base entity.
 */
function addSurfaceAndVariantEdges(input: GraphInput, add: AddEdge): void {
  for (const surface of input.surfaces) {
    const bound = new Map<string, SurfaceBinding>();
    for (const binding of [surface.actor, surface.context]) {
      if (binding === undefined || !input.entities.has(binding.type)) continue;
      bound.set(binding.binding, binding);
      add(`entity:${binding.type}`, `surface:${surface.name}`, 'exposes', binding.type, {
        from: input.entities.get(binding.type)!,
        to: binding.location,
      });
    }
    for (const item of surface.exposes) {
      const [head, field] = item.split(/[^A-Za-z0-9_]+/);
      const binding = head === undefined ? undefined : bound.get(head);
      if (binding === undefined || field === undefined || field === '') continue;
      add(`entity:${binding.type}`, `surface:${surface.name}`, 'exposes', `${binding.type}.${field}`, {
        from: input.entities.get(binding.type)!,
        to: surface.location,
      });
    }
  }
  for (const [variant, { base, location }] of input.variantBases) {
    const at = input.entities.get(base);
    if (at !== undefined)
      add(`entity:${base}`, `entity:${variant}`, 'extends', base, { from: at, to: location });
  }
}
