import type { ParsedSpec } from './ast.js';
import { buildGraph } from './build-graph.js';
import { buildModel, isDerived, type DomainModel } from './build-model.js';
import { checkIndexedSpecs, sortDiagnostics, type FileDiagnostics } from './check-specs.js';
import type { Diagnostic, SourceLocation } from './diagnostic.js';
import type { DependencyGraph } from './graph-types.js';
import { buildInventory, type Inventory } from './inventory.js';
import { parseSpec } from './parse-spec.js';
import { extractRule, type RuleContext, type RuleInfo } from './rule-info.js';
import { indexSpec, type SpecIndex } from './spec-index.js';
import { extractSurface, type SurfaceInfo } from './surface-info.js';
import { walkExpr } from './walk.js';

/** One spec file handed to {@link analyzeSpecs}: its path (used in every location) and its text. */
export interface SpecSource {
  readonly path: string;
  readonly text: string;
}

/** An `open question "…"` with where it is. */
export interface OpenQuestion {
  readonly text: string;
  readonly location: SourceLocation;
}

/** Everything the engine reads from a spec set. */
export interface SpecAnalysis {
  readonly specs: readonly ParsedSpec[];
  /** Parse and structural diagnostics, suppressions applied, sorted by file/line/col. */
  readonly diagnostics: readonly Diagnostic[];
  /** The same diagnostics per file, in input order, each file's list in the reference checker's order. */
  readonly files: readonly FileDiagnostics[];
  /** The reference `model` shape, over the whole set (lists concatenated in file order). */
  readonly model: DomainModel;
  readonly rules: readonly RuleInfo[];
  readonly surfaces: readonly SurfaceInfo[];
  readonly graph: DependencyGraph;
  readonly openQuestions: readonly OpenQuestion[];
  readonly inventory: Inventory;
}

/** Parses and analyses a spec set. Pure and total: any text gives a result, never an exception. */
export function analyzeSpecs(sources: readonly SpecSource[]): SpecAnalysis {
  const specs = sources.map((source) => parseSpec(source.text, source.path));
  const indexes = specs.map(indexSpec);
  const surfaces = indexes.flatMap((index) => index.surfaces.map((s) => extractSurface(s, index.spec)));
  const context = ruleContext(indexes, surfaces);
  const rules = markChained(
    indexes.flatMap((index) =>
      index.rules.map((rule) =>
        extractRule(rule, { ...context, file: index.spec.file, lines: index.spec.lines }),
      ),
    ),
  );
  const entities = new Map<string, SourceLocation>();
  const externalEntities = new Set<string>();
  const variantBases = new Map<string, { base: string; location: SourceLocation }>();
  for (const index of indexes) {
    for (const entity of index.entities) {
      if (entities.has(entity.name.name)) continue;
      entities.set(entity.name.name, entity.name.location);
      if (entity.block === 'external entity') externalEntities.add(entity.name.name);
    }
    for (const d of index.spec.declarations) {
      if (d.kind !== 'variant' || entities.has(d.name.name)) continue;
      entities.set(d.name.name, d.name.location);
      if (d.base !== undefined)
        variantBases.set(d.name.name, { base: d.base.name, location: d.name.location });
    }
  }
  const files = checkIndexedSpecs(indexes);
  return {
    specs,
    diagnostics: sortDiagnostics(files.flatMap((file) => file.diagnostics)),
    files,
    model: mergeModels(specs.map(buildModel)),
    rules,
    surfaces,
    graph: buildGraph({
      rules,
      surfaces,
      entities,
      externalEntities,
      variantBases,
      derivedInputs: derivedInputs(indexes),
    }),
    openQuestions: specs.flatMap(collectOpenQuestions),
    inventory: buildInventory(specs),
  };
}

/** Marks triggers that some rule emits as `chained` (extraction sees one rule at a time). */
function markChained(rules: readonly RuleInfo[]): RuleInfo[] {
  const emitted = new Set(rules.flatMap((rule) => rule.emits.map((emission) => emission.name)));
  return rules.map((rule) => ({
    ...rule,
    triggers: rule.triggers.map((t) =>
      t.kind === 'external' && t.name !== undefined && emitted.has(t.name)
        ? { ...t, kind: 'chained' as const }
        : t,
    ),
  }));
}

function ruleContext(
  indexes: readonly SpecIndex[],
  surfaces: readonly SurfaceInfo[],
): Omit<RuleContext, 'file' | 'lines'> {
  const entities = new Set(indexes.flatMap((index) => [...index.entityNames]));
  const entitiesByLowerName = new Map([...entities].reverse().map((name) => [name.toLowerCase(), name]));
  const fieldTypes = new Map<string, Map<string, string>>();
  const derived = new Map<string, Set<string>>();
  for (const index of indexes) {
    for (const entity of index.entities) {
      const types = new Map<string, string>();
      const names = new Set<string>();
      for (const item of entity.items) {
        if (item.kind !== 'field') continue;
        const typeName = item.value.kind === 'optional' ? item.value.a?.name : item.value.name;
        if (item.value.kind !== 'member' && typeName !== undefined && entities.has(typeName))
          types.set(item.name.name, typeName);
        if (isDerived(item.value)) names.add(item.name.name);
      }
      fieldTypes.set(entity.name.name, types);
      derived.set(entity.name.name, names);
    }
  }
  const paramTypes = providedParamTypes(surfaces, entities);
  return { entities, entitiesByLowerName, fieldTypes, derived, paramTypes, emitted: new Set() };
}

/** Trigger → entity types of its positional parameters, read from surfaces whose `context` binds them. */
function providedParamTypes(
  surfaces: readonly SurfaceInfo[],
  entities: ReadonlySet<string>,
): Map<string, (string | undefined)[]> {
  const types = new Map<string, (string | undefined)[]>();
  for (const surface of surfaces) {
    const bound = new Map<string, string>();
    for (const binding of [surface.actor, surface.context]) {
      if (binding !== undefined && entities.has(binding.type)) bound.set(binding.binding, binding.type);
    }
    for (const provided of surface.provides) {
      if (!types.has(provided.name))
        types.set(
          provided.name,
          provided.args.map((arg) => bound.get(arg)),
        );
    }
  }
  return types;
}

function derivedInputs(indexes: readonly SpecIndex[]): Map<string, Map<string, Set<string>>> {
  const result = new Map<string, Map<string, Set<string>>>();
  for (const index of indexes) {
    for (const entity of index.entities) {
      const perField = new Map<string, Set<string>>();
      for (const item of entity.items) {
        if (item.kind !== 'field' || !isDerived(item.value)) continue;
        const names = new Set<string>();
        walkExpr(item.value, (e) => {
          if ((e.kind === 'ident' || e.kind === 'member') && e.name !== undefined) names.add(e.name);
        });
        perField.set(item.name.name, names);
      }
      result.set(entity.name.name, perField);
    }
  }
  return result;
}

function mergeModels(models: readonly DomainModel[]): DomainModel {
  const merged: DomainModel = {
    version: models.find((m) => m.version !== null)?.version ?? null,
    diagnostics: [],
  };
  for (const model of models) {
    if (model.entities) (merged.entities ??= []).push(...model.entities);
    if (model.value_types) (merged.value_types ??= []).push(...model.value_types);
    if (model.enums) (merged.enums ??= []).push(...model.enums);
    if (model.config) (merged.config ??= []).push(...model.config);
    merged.diagnostics.push(...model.diagnostics);
  }
  return merged;
}

/**
 * Every `open question` of a parsed file, in source order: top-level ones and those nested at any depth inside
 * declarations (block items, `if` branches). The one collector of the engine: the loop's measurement and
 * `allium-loop verify` both count these. Suppressions do not hide them: `-- allium-ignore` silences a diagnostic,
 * not a question.
 */
export function collectOpenQuestions(spec: ParsedSpec): OpenQuestion[] {
  const questions: OpenQuestion[] = [];
  const visit = (node: unknown): void => {
    if (typeof node !== 'object' || node === null) return;
    if (Array.isArray(node)) {
      for (const item of node) visit(item);
      return;
    }
    const record = node as Record<string, unknown>;
    if (record['kind'] === 'open-question' && typeof record['text'] === 'string') {
      questions.push({ text: record['text'], location: record['location'] as SourceLocation });
      return;
    }
    for (const value of Object.values(record)) visit(value);
  };
  visit(spec.declarations);
  return questions.sort((a, b) => a.location.line - b.location.line || a.location.col - b.location.col);
}

/** Counts the open questions of a spec set (the convergence invariant's spec term). */
export function countOpenQuestions(sources: readonly SpecSource[]): number {
  return sources.reduce(
    (total, source) => total + collectOpenQuestions(parseSpec(source.text, source.path)).length,
    0,
  );
}
